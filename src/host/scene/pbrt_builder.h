// @file pbrt_builder.h: the meaning of pbrt-v4's directives, once the parser has read their arguments: the graphics
// state and its stack, the options and world blocks, named things, object definitions. It follows pbrt-v4's
// BasicSceneBuilder (src/pbrt/scene.cpp) and fills a PbrtScene. Private to the parser.
#pragma once
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tracer/host/pbrt_scene.h"

namespace tracer {

class PbrtBuilder {
 public:
  explicit PbrtBuilder(PbrtScene& scene);

  bool InWorld() const { return inWorld_; }
  void Warn(const PbrtLoc& loc, const std::string& message);
  // Warns only the first time for this key (pbrt warns once about deprecated and flattened things).
  void WarnOnce(const std::string& key, const PbrtLoc& loc, const std::string& message);
  // Records a directive's use (PbrtScene::directives) and checks that it stands in its block: `block` is 'o' for
  // the options block only, 'w' for the world block only, anything else for either.
  void Enter(const std::string& directive, const PbrtLoc& loc, char block);

  // Options block.
  void Camera(std::string type, PbrtParams params, const PbrtLoc& loc);
  void SetOption(PbrtEntity& target, std::string type, PbrtParams params, const PbrtLoc& loc);
  void Option(const std::string& name, const std::string& value, const PbrtLoc& loc);
  void TransformTimes(double start, double end, const PbrtLoc& loc);
  void WorldBegin(const PbrtLoc& loc);

  // Transforms, anywhere. `replace`: Identity and Transform set the CTM; the others multiply it on the right.
  void ApplyTransform(const PbrtTransform& t, bool replace);
  void ActiveTransform(const std::string& which, const PbrtLoc& loc);
  void CoordinateSystem(const std::string& name);
  void CoordSysTransform(const std::string& name, const PbrtLoc& loc);
  void ColorSpace(const std::string& name, const PbrtLoc& loc);

  // World block: graphics state.
  void AttributeBegin(const PbrtLoc& loc);
  void AttributeEnd(const PbrtLoc& loc);
  void Attribute(const std::string& target, PbrtParams params, const PbrtLoc& loc);
  void ReverseOrientation() { state_.reverseOrientation = !state_.reverseOrientation; }
  void MediumInterface(const std::string& inside, const std::string& outside);
  // An imported file gets a copy of the graphics state, and its changes do not leak out (pbrt-v4 parses it with a
  // builder of its own, CopyForImport).
  void BeginImport(const PbrtLoc& loc);
  void EndImport(const PbrtLoc& loc);

  // World block: things.
  void Material(std::string type, PbrtParams params, const PbrtLoc& loc);
  void MakeNamedMaterial(const std::string& name, PbrtParams params, const PbrtLoc& loc);
  void NamedMaterial(const std::string& name, const PbrtLoc& loc);
  void Texture(const std::string& name, const std::string& kind, std::string type, PbrtParams params,
               const PbrtLoc& loc);
  void MakeNamedMedium(const std::string& name, PbrtParams params, const PbrtLoc& loc);
  void LightSource(std::string type, PbrtParams params, const PbrtLoc& loc);
  void AreaLightSource(std::string type, PbrtParams params, const PbrtLoc& loc);
  void Shape(std::string type, PbrtParams params, const PbrtLoc& loc);
  void ObjectBegin(const std::string& name, const PbrtLoc& loc);
  void ObjectEnd(const PbrtLoc& loc);
  void ObjectInstance(const std::string& name, const PbrtLoc& loc);

  // After the last token of the main file: the checks that need the whole scene, and the look-ups of names that
  // may be defined after their use (named materials, objects). `end` is the main file's last line.
  void Finish(const PbrtLoc& end);

 private:
  using Ctm = std::array<PbrtTransform, 2>;  // at TransformTimes' start and end

  struct GraphicsState {
    Ctm ctm;
    int activeTransforms = 3;  // bit 0: the start transform, bit 1: the end one (ActiveTransform)
    bool reverseOrientation = false;
    std::string colorSpace = "srgb";
    int material = 0;          // index into materials, when materialName is empty
    std::string materialName;  // NamedMaterial's, looked up at Finish
    PbrtLoc materialLoc;       // where NamedMaterial set it
    int areaLight = -1;
    std::string insideMedium, outsideMedium;
    std::map<std::string, std::vector<PbrtParam>> attributes;  // Attribute's target -> defaults
  };
  struct Pushed {
    GraphicsState state;
    char kind;  // 'a' AttributeBegin, 'o' ObjectBegin, 'i' Import
    PbrtLoc loc;
  };
  struct PendingMaterial {  // a shape whose NamedMaterial is looked up at Finish
    int object;             // -1: PbrtScene::shapes, else the object
    size_t shape;
    std::string name;
    PbrtLoc loc;
  };

  PbrtParams WithDefaults(PbrtParams params, const char* target) const;
  PbrtEntity MakeEntity(std::string type, PbrtParams params, const PbrtLoc& loc) const;
  // The CTM at its start; warns once when it is animated (moves between the start and the end).
  PbrtTransform CurrentTransform(const PbrtLoc& loc, bool* animated);
  void PopState(char kind, const char* closing, const PbrtLoc& loc);
  void ResolveMaterials();

  PbrtScene& scene_;
  GraphicsState state_;
  std::vector<Pushed> stack_;
  bool inWorld_ = false;
  std::set<std::string> warnedOnce_;
  int activeObject_ = -1;  // index into PbrtScene::objects while inside ObjectBegin/ObjectEnd
  std::map<std::string, Ctm> namedSystems_;
  std::map<std::string, size_t> objectIndex_;
  std::vector<PendingMaterial> pendingMaterials_;
};

}  // namespace tracer
