// @file pbrt_builder.cpp: pbrt-v4's directive semantics (src/pbrt/scene.cpp, BasicSceneBuilder; the file format
// documentation, "Transformations", "Attributes", "Object instancing"): what each directive does to the graphics
// state, and what it adds to the scene.
#include "pbrt_builder.h"

#include <utility>

namespace tracer {

namespace {

const char* const kColorSpaces[] = {"srgb", "aces2065-1", "rec2020", "dci-p3"};  // pbrt-v4's RGBColorSpace::GetNamed
const char* const kAttributeTargets[] = {"shape", "light", "material", "medium", "texture"};

const char* KindName(char kind) { return kind == 'o' ? "ObjectBegin" : kind == 'i' ? "Import" : "AttributeBegin"; }

}  // namespace

PbrtBuilder::PbrtBuilder(PbrtScene& scene) : scene_(scene) {
  // pbrt-v4's defaults for what the options block may leave out (BasicSceneBuilder's constructor).
  scene_.camera.type = "perspective";
  scene_.film.type = "rgb";
  scene_.sampler.type = "zsobol";
  scene_.filter.type = "gaussian";
  scene_.integrator.type = "volpath";
  scene_.accelerator.type = "bvh";
  // The material in force before any Material directive: a default diffuse one.
  scene_.materials.emplace_back();
  scene_.materials[0].type = "diffuse";
}

void PbrtBuilder::Warn(const PbrtLoc& loc, const std::string& message) {
  scene_.warnings.push_back(loc.ToString() + ": " + message);
}

void PbrtBuilder::WarnOnce(const std::string& key, const PbrtLoc& loc, const std::string& message) {
  if (warnedOnce_.insert(key).second) Warn(loc, message);
}

void PbrtBuilder::Enter(const std::string& directive, const PbrtLoc& loc, char block) {
  PbrtDirectiveUse& use = scene_.directives[directive];
  if (use.count++ == 0) use.first = loc;
  if (block == 'o' && inWorld_) throw PbrtError(loc, directive + " is an option: it must come before WorldBegin");
  if (block == 'w' && !inWorld_)
    throw PbrtError(loc, directive + " describes the world: it must come after WorldBegin");
}

PbrtEntity PbrtBuilder::MakeEntity(std::string type, PbrtParams params, const PbrtLoc& loc) const {
  PbrtEntity e;
  e.type = std::move(type);
  e.params = std::move(params);
  e.loc = loc;
  e.colorSpace = state_.colorSpace;
  return e;
}

PbrtParams PbrtBuilder::WithDefaults(PbrtParams params, const char* target) const {
  auto it = state_.attributes.find(target);
  if (it == state_.attributes.end() || it->second.empty()) return params;
  PbrtParams merged;
  merged.list.reserve(it->second.size() + params.list.size());
  merged.list = it->second;
  for (PbrtParam& p : params.list) merged.list.push_back(std::move(p));
  return merged;
}

PbrtTransform PbrtBuilder::CurrentTransform(const PbrtLoc& loc, bool* animated) {
  *animated = state_.ctm[0] != state_.ctm[1];
  if (*animated)
    WarnOnce("animated", loc,
             "animated transforms are not supported: the transform at the start time is used (and for every "
             "later one)");
  return state_.ctm[0];
}

// ---- options block ----

void PbrtBuilder::Camera(std::string type, PbrtParams params, const PbrtLoc& loc) {
  PbrtCamera camera;
  static_cast<PbrtEntity&>(camera) = MakeEntity(std::move(type), std::move(params), loc);
  bool animated = false;
  camera.cameraFromWorld = CurrentTransform(loc, &animated);
  Ctm worldFromCamera;
  try {
    worldFromCamera = {state_.ctm[0].Inverse(), state_.ctm[1].Inverse()};
  } catch (const std::domain_error&) {
    throw PbrtError(loc, "the transform at Camera (world to camera) is singular");
  }
  camera.worldFromCamera = worldFromCamera[0];
  camera.medium = state_.outsideMedium;
  // pbrt-v4 names the camera's frame "camera" for CoordSysTransform (BasicSceneBuilder::Camera).
  namedSystems_["camera"] = worldFromCamera;
  scene_.coordinateSystems["camera"] = worldFromCamera[0];
  scene_.camera = std::move(camera);
}

void PbrtBuilder::SetOption(PbrtEntity& target, std::string type, PbrtParams params, const PbrtLoc& loc) {
  target = MakeEntity(std::move(type), std::move(params), loc);
}

void PbrtBuilder::Option(const std::string& name, const std::string& value, const PbrtLoc& loc) {
  scene_.options.push_back({name, value, loc});
}

void PbrtBuilder::TransformTimes(double start, double end, const PbrtLoc& loc) {
  if (!(end >= start)) throw PbrtError(loc, "TransformTimes: the end time comes before the start time");
  scene_.transformStartTime = start;
  scene_.transformEndTime = end;
}

void PbrtBuilder::WorldBegin(const PbrtLoc& loc) {
  if (inWorld_) throw PbrtError(loc, "a second WorldBegin");
  inWorld_ = true;
  // The world starts at the identity, with both times active (BasicSceneBuilder::WorldBegin); the rest of the
  // graphics state carries over.
  state_.ctm = {PbrtTransform(), PbrtTransform()};
  state_.activeTransforms = 3;
  namedSystems_["world"] = state_.ctm;
  scene_.coordinateSystems["world"] = PbrtTransform();
}

// ---- transforms ----

void PbrtBuilder::ApplyTransform(const PbrtTransform& t, bool replace) {
  for (int i = 0; i < 2; ++i)
    if (state_.activeTransforms & (1 << i)) state_.ctm[i] = replace ? t : state_.ctm[i] * t;
}

void PbrtBuilder::ActiveTransform(const std::string& which, const PbrtLoc& loc) {
  if (which == "All") {
    state_.activeTransforms = 3;
  } else if (which == "StartTime") {
    state_.activeTransforms = 1;
  } else if (which == "EndTime") {
    state_.activeTransforms = 2;
  } else {
    throw PbrtError(loc, "ActiveTransform takes All, StartTime or EndTime, not \"" + which + "\"");
  }
}

void PbrtBuilder::CoordinateSystem(const std::string& name) {
  namedSystems_[name] = state_.ctm;
  scene_.coordinateSystems[name] = state_.ctm[0];
}

void PbrtBuilder::CoordSysTransform(const std::string& name, const PbrtLoc& loc) {
  auto it = namedSystems_.find(name);
  if (it == namedSystems_.end()) {
    // pbrt-v4 warns and leaves the CTM as it is.
    Warn(loc, "CoordSysTransform: no coordinate system named \"" + name + "\"; the transform is unchanged");
    return;
  }
  state_.ctm = it->second;
}

void PbrtBuilder::ColorSpace(const std::string& name, const PbrtLoc& loc) {
  for (const char* known : kColorSpaces)
    if (name == known) {
      state_.colorSpace = name;
      return;
    }
  Warn(loc, "ColorSpace: unknown color space \"" + name + "\" (pbrt-v4 knows srgb, aces2065-1, rec2020, dci-p3); " +
                "the current one, \"" + state_.colorSpace + "\", stays");
}

// ---- graphics state ----

void PbrtBuilder::AttributeBegin(const PbrtLoc& loc) { stack_.push_back({state_, 'a', loc}); }

void PbrtBuilder::AttributeEnd(const PbrtLoc& loc) { PopState('a', "AttributeEnd", loc); }

void PbrtBuilder::PopState(char kind, const char* closing, const PbrtLoc& loc) {
  if (stack_.empty() || stack_.back().kind == 'i')
    throw PbrtError(loc, std::string(closing) + " without a matching " + KindName(kind) +
                             (stack_.empty() ? "" : " in this imported file"));
  const Pushed& top = stack_.back();
  if (top.kind != kind)
    throw PbrtError(loc, std::string(closing) + " closes the " + KindName(top.kind) + " at " + top.loc.ToString());
  state_ = std::move(stack_.back().state);
  stack_.pop_back();
}

void PbrtBuilder::Attribute(const std::string& target, PbrtParams params, const PbrtLoc& loc) {
  bool known = false;
  for (const char* t : kAttributeTargets) known = known || target == t;
  if (!known)
    throw PbrtError(loc, "Attribute: unknown target \"" + target +
                             "\" (it must be \"shape\", \"light\", \"material\", \"medium\" or \"texture\")");
  std::vector<PbrtParam>& defaults = state_.attributes[target];
  for (PbrtParam& p : params.list) {
    p.fromAttribute = true;
    defaults.push_back(std::move(p));
  }
}

void PbrtBuilder::MediumInterface(const std::string& inside, const std::string& outside) {
  state_.insideMedium = inside;
  state_.outsideMedium = outside;
}

void PbrtBuilder::BeginImport(const PbrtLoc& loc) { stack_.push_back({state_, 'i', loc}); }

void PbrtBuilder::EndImport(const PbrtLoc& loc) {
  if (stack_.back().kind != 'i')
    throw PbrtError(stack_.back().loc, std::string(KindName(stack_.back().kind)) +
                                           " is not closed before the end of the file imported at " + loc.ToString());
  state_ = std::move(stack_.back().state);
  stack_.pop_back();
}

// ---- things in the world ----

void PbrtBuilder::Material(std::string type, PbrtParams params, const PbrtLoc& loc) {
  PbrtMaterial m;
  static_cast<PbrtEntity&>(m) = MakeEntity(std::move(type), WithDefaults(std::move(params), "material"), loc);
  scene_.materials.push_back(std::move(m));
  state_.material = static_cast<int>(scene_.materials.size()) - 1;
  state_.materialName.clear();
}

void PbrtBuilder::MakeNamedMaterial(const std::string& name, PbrtParams params, const PbrtLoc& loc) {
  auto found = scene_.namedMaterials.find(name);
  if (found != scene_.namedMaterials.end())
    throw PbrtError(loc, "MakeNamedMaterial: \"" + name + "\" is already defined at " +
                             scene_.materials[static_cast<size_t>(found->second)].loc.ToString());
  PbrtMaterial m;
  static_cast<PbrtEntity&>(m) = MakeEntity("", WithDefaults(std::move(params), "material"), loc);
  m.type = m.params.GetString("type", "");
  if (m.type.empty()) throw PbrtError(loc, "MakeNamedMaterial \"" + name + "\" has no \"string type\" parameter");
  m.name = name;
  scene_.materials.push_back(std::move(m));
  scene_.namedMaterials[name] = static_cast<int>(scene_.materials.size()) - 1;
}

void PbrtBuilder::NamedMaterial(const std::string& name, const PbrtLoc& loc) {
  // Looked up when a shape uses it, at Finish: pbrt-v4 resolves named materials after parsing, so one may be
  // defined after the NamedMaterial that selects it.
  state_.materialName = name;
  state_.materialLoc = loc;
  state_.material = -1;
}

void PbrtBuilder::Texture(const std::string& name, const std::string& kind, std::string type, PbrtParams params,
                          const PbrtLoc& loc) {
  bool isFloat = kind == "float";
  if (kind == "color") {
    Warn(loc, "Texture: the type \"color\" is pbrt-v3's; read as \"spectrum\"");
  } else if (!isFloat && kind != "spectrum") {
    throw PbrtError(loc, "Texture \"" + name + "\": unknown type \"" + kind + "\" (\"float\" or \"spectrum\")");
  }
  if (const PbrtTexture* old = scene_.FindTexture(name, isFloat))
    throw PbrtError(loc, "Texture \"" + name + "\" is already defined at " + old->loc.ToString());
  PbrtTexture t;
  static_cast<PbrtEntity&>(t) = MakeEntity(std::move(type), WithDefaults(std::move(params), "texture"), loc);
  t.name = name;
  t.isFloat = isFloat;
  bool animated = false;
  t.objectToWorld = CurrentTransform(loc, &animated);
  scene_.textures.push_back(std::move(t));
}

void PbrtBuilder::MakeNamedMedium(const std::string& name, PbrtParams params, const PbrtLoc& loc) {
  if (const PbrtMedium* old = scene_.FindMedium(name))
    throw PbrtError(loc, "MakeNamedMedium: \"" + name + "\" is already defined at " + old->loc.ToString());
  PbrtMedium m;
  static_cast<PbrtEntity&>(m) = MakeEntity("", WithDefaults(std::move(params), "medium"), loc);
  m.type = m.params.GetString("type", "");
  if (m.type.empty()) throw PbrtError(loc, "MakeNamedMedium \"" + name + "\" has no \"string type\" parameter");
  m.name = name;
  bool animated = false;
  m.objectToWorld = CurrentTransform(loc, &animated);
  scene_.media.push_back(std::move(m));
}

void PbrtBuilder::LightSource(std::string type, PbrtParams params, const PbrtLoc& loc) {
  PbrtLight light;
  static_cast<PbrtEntity&>(light) = MakeEntity(std::move(type), WithDefaults(std::move(params), "light"), loc);
  bool animated = false;
  light.objectToWorld = CurrentTransform(loc, &animated);
  light.medium = state_.outsideMedium;
  light.reverseOrientation = state_.reverseOrientation;
  scene_.lights.push_back(std::move(light));
}

void PbrtBuilder::AreaLightSource(std::string type, PbrtParams params, const PbrtLoc& loc) {
  scene_.areaLights.push_back(MakeEntity(std::move(type), WithDefaults(std::move(params), "light"), loc));
  state_.areaLight = static_cast<int>(scene_.areaLights.size()) - 1;
}

void PbrtBuilder::Shape(std::string type, PbrtParams params, const PbrtLoc& loc) {
  PbrtShape shape;
  static_cast<PbrtEntity&>(shape) = MakeEntity(std::move(type), WithDefaults(std::move(params), "shape"), loc);
  shape.objectToWorld = CurrentTransform(loc, &shape.animated);
  shape.reverseOrientation = state_.reverseOrientation;
  shape.material = state_.material;
  shape.areaLight = state_.areaLight;
  shape.insideMedium = state_.insideMedium;
  shape.outsideMedium = state_.outsideMedium;
  std::vector<PbrtShape>& into =
      activeObject_ >= 0 ? scene_.objects[static_cast<size_t>(activeObject_)].shapes : scene_.shapes;
  if (activeObject_ >= 0 && shape.areaLight >= 0)
    WarnOnce("instance-area-light", loc, "area lights in object instances are not supported by pbrt-v4");
  if (!state_.materialName.empty())
    pendingMaterials_.push_back({activeObject_, into.size(), state_.materialName, state_.materialLoc});
  into.push_back(std::move(shape));
}

void PbrtBuilder::ObjectBegin(const std::string& name, const PbrtLoc& loc) {
  if (activeObject_ >= 0)
    throw PbrtError(loc, "ObjectBegin \"" + name + "\" inside the definition of object \"" +
                             scene_.objects[static_cast<size_t>(activeObject_)].name + "\"");
  auto old = objectIndex_.find(name);
  if (old != objectIndex_.end())
    throw PbrtError(loc, "ObjectBegin: object \"" + name + "\" is already defined at " +
                             scene_.objects[old->second].loc.ToString());
  stack_.push_back({state_, 'o', loc});
  objectIndex_[name] = scene_.objects.size();
  activeObject_ = static_cast<int>(scene_.objects.size());
  scene_.objects.push_back({name, loc, {}});
}

void PbrtBuilder::ObjectEnd(const PbrtLoc& loc) {
  if (activeObject_ < 0) throw PbrtError(loc, "ObjectEnd without a matching ObjectBegin");
  PopState('o', "ObjectEnd", loc);
  activeObject_ = -1;
}

void PbrtBuilder::ObjectInstance(const std::string& name, const PbrtLoc& loc) {
  if (activeObject_ >= 0)
    throw PbrtError(loc, "ObjectInstance \"" + name + "\" inside the definition of object \"" +
                             scene_.objects[static_cast<size_t>(activeObject_)].name + "\"");
  PbrtInstance inst;
  inst.name = name;
  inst.worldFromInstance = CurrentTransform(loc, &inst.animated);
  inst.loc = loc;
  scene_.instances.push_back(std::move(inst));
}

// ---- the end ----

void PbrtBuilder::ResolveMaterials() {
  for (const PendingMaterial& p : pendingMaterials_) {
    auto it = scene_.namedMaterials.find(p.name);
    std::vector<PbrtShape>& shapes =
        p.object >= 0 ? scene_.objects[static_cast<size_t>(p.object)].shapes : scene_.shapes;
    if (it == scene_.namedMaterials.end())
      throw PbrtError(p.loc, "NamedMaterial \"" + p.name + "\": no MakeNamedMaterial defines it (the Shape at " +
                                 shapes[p.shape].loc.ToString() + " uses it)");
    shapes[p.shape].material = it->second;
  }
  pendingMaterials_.clear();
}

void PbrtBuilder::Finish(const PbrtLoc& end) {
  if (!inWorld_) throw PbrtError(end, "the scene ends before WorldBegin");
  if (!stack_.empty()) {
    const Pushed& open = stack_.back();
    throw PbrtError(open.loc, std::string(KindName(open.kind)) + " is not closed before the end of the scene");
  }
  ResolveMaterials();
  for (PbrtInstance& inst : scene_.instances) {
    auto it = objectIndex_.find(inst.name);
    if (it == objectIndex_.end())
      throw PbrtError(inst.loc, "ObjectInstance \"" + inst.name + "\": no ObjectBegin defines it");
    inst.object = static_cast<int>(it->second);
  }
}

}  // namespace tracer
