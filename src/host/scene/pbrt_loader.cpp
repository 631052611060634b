// @file pbrt_loader.cpp: LoadPbrtScene: a pbrt-v4 scene (ParsePbrtFile's PbrtScene) onto the renderer's Scene: the
// camera and the render's defaults here, then shapes, materials, textures and lights in the parts beside this file.
//
// The camera (pbrt-v4 src/pbrt/cameras.cpp, PerspectiveCamera): pbrt's camera space has +x to the image's right, +y
// up and +z along the view, and the world-from-camera transform can be any rotation, of either handedness. The
// renderer's camera takes its right as view x up (core/camera.h), which is pbrt's +x exactly when the transform swaps
// handedness (as the Transform of most exported scenes does: a mirror that turns pbrt's left-handed camera frame into
// a right-handed world). A plain LookAt keeps handedness, and pbrt's image of it is the mirror image of what a
// right-handed camera at the same place sees; the Scene is then pbrt's world reflected in the camera's vertical plane
// (through the eye, normal to pbrt's +x), which leaves the camera where it is and gives pbrt's image.
#include "pbrt_loader.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "pbrt_loader_lights.h"
#include "pbrt_loader_materials.h"
#include "pbrt_loader_shapes.h"
#include "pbrt_loader_textures.h"
#include "scene_text.h"
#include "tracer/host/pbrt_parser.h"
#include "tracer/host/timing.h"

namespace tracer {

float FovYForShorterAxis(float fovDegrees, int width, int height) {
  // pbrt-v4's screen window spans [-1, 1] on the shorter axis, where the perspective divide by tan(fov / 2) puts
  // the field of view; on a portrait image that axis is x.
  if (width <= height && width > 0 && height > 0) {
    const double half = std::tan(double(fovDegrees) * 3.14159265358979323846 / 360.0) * double(height) / double(width);
    return float(2.0 * std::atan(half) * 180.0 / 3.14159265358979323846);
  }
  return fovDegrees;
}

namespace pbrtload {

void PbrtLoad::Warn(const PbrtLoc& loc, const std::string& message) {
  scene.warnings.push_back((loc.Known() ? loc.ToString() : pbrt.path) + ": " + message);
}

void PbrtLoad::WarnKind(const std::string& kind, const PbrtLoc& loc, const std::string& message) {
  auto [it, isNew] = kinds_.emplace(kind, Kind{scene.warnings.size(), 0});
  if (isNew)
    Warn(loc, message);
  else
    ++it->second.more;
}

void PbrtLoad::Note(const PbrtLoc& loc, const std::string& message) {
  scene.notes.push_back((loc.Known() ? loc.ToString() : pbrt.path) + ": " + message);
}

void PbrtLoad::FinishWarnings() {
  for (const auto& [kind, k] : kinds_)
    if (k.more) scene.warnings[k.warning] += " (" + std::to_string(k.more) + " more like it)";
}

bool IsPbrtFileName(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto endsWith = [&](const char* tail) {
    const size_t n = std::strlen(tail);
    return lower.size() >= n && lower.compare(lower.size() - n, n, tail) == 0;
  };
  return endsWith(".pbrt") || endsWith(".pbrt.gz");
}

namespace {

// What the render should be, from Film, Sampler and Integrator (pbrt-v4's defaults: 1280 x 720, 16 samples, depth 5,
// "pbrt.exr"). pbrt's "maxdepth" counts bounces as --max-depth does: 0 shows emitters only, 1 direct lighting
// (PathIntegrator::Li ends a path at the hit where depth reaches maxdepth, after adding its emission).
// Sets *outOfRange when a value was out of range and pbrt-v4's defaults replaced the file's.
SceneDefaults DefaultsOf(const PbrtScene& p, bool* outOfRange) {
  SceneDefaults d;
  d.valid = true;
  d.width = p.film.params.GetInt("xresolution", 1280);
  d.height = p.film.params.GetInt("yresolution", 720);
  d.spp = p.sampler.params.GetInt("pixelsamples", 16);
  d.maxDepth = p.integrator.params.GetInt("maxdepth", 5);
  d.output = p.film.params.GetString("filename", "pbrt.exr");
  *outOfRange = d.width <= 0 || d.height <= 0 || d.spp <= 0 || d.maxDepth < 0;
  if (*outOfRange) d.width = 1280, d.height = 720, d.spp = 16, d.maxDepth = 5;
  return d;
}

void SetDefaults(PbrtLoad& load) {
  const PbrtScene& p = load.pbrt;
  bool outOfRange = false;
  load.scene.defaults = DefaultsOf(p, &outOfRange);
  if (outOfRange)
    load.Warn(p.film.loc,
              "Film/Sampler/Integrator: a resolution, sample count or depth out of range; pbrt-v4's "
              "defaults are used");
  const std::string& integrator = p.integrator.type;
  if (integrator != "path" && integrator != "volpath")
    load.WarnKind("integrator", p.integrator.loc,
                  "Integrator \"" + integrator +
                      "\": rendered with the tracer's path tracer (next-event estimation and MIS), to the same "
                      "image where that integrator converges to one");
  if (p.integrator.params.GetBool("regularize", false))
    load.WarnKind("regularize", p.integrator.loc, "Integrator \"regularize\" is not supported yet; ignored");
  if (p.film.type != "rgb" && p.film.type != "gbuffer")
    load.WarnKind("film", p.film.loc, "Film \"" + p.film.type + "\": an RGB image is rendered");
  for (const char* name : {"cropwindow", "pixelbounds", "sensor", "whitebalance", "iso", "exposuretime"})
    if (p.film.params.Has(name) || p.camera.params.Has(name))
      load.WarnKind(std::string("film-") + name, p.film.loc,
                    std::string("Film \"") + name + "\" is not supported yet; ignored (an sRGB image is rendered)");
}

// The renderer's camera from pbrt's (see the top of this file).
void SetCamera(PbrtLoad& load) {
  const PbrtCamera& cam = load.pbrt.camera;
  if (cam.type != "perspective")
    load.WarnKind("camera", cam.loc,
                  "Camera \"" + cam.type + "\" is not supported yet; a perspective camera at its place is used");
  const PbrtTransform& toWorld = cam.worldFromCamera;
  const Vec3 eye = ToVec3(toWorld.ApplyPoint({0, 0, 0}));
  const Vec3 x = ToVec3(toWorld.ApplyVector({1, 0, 0})), y = ToVec3(toWorld.ApplyVector({0, 1, 0}));
  const Vec3 z = ToVec3(toWorld.ApplyVector({0, 0, 1}));
  const float lx = Length(x), ly = Length(y), lz = Length(z);
  if (!(lx > 0.0f && ly > 0.0f && lz > 0.0f) || std::fabs(lx - lz) > 1e-3f * lz || std::fabs(ly - lz) > 1e-3f * lz ||
      std::fabs(Dot(x, y)) > 1e-3f * lx * ly || std::fabs(Dot(y, z)) > 1e-3f * ly * lz ||
      std::fabs(Dot(x, z)) > 1e-3f * lx * lz)
    load.WarnKind("camera-transform", cam.loc,
                  "Camera: its transform scales or shears; only its position and view and up directions are used");
  const Vec3 forward = Normalize(z), up = Normalize(y), right = Normalize(x);
  if (Dot(Cross(forward, up), right) < 0.0f) {
    load.mirrored = true;
    load.mirrorPoint = eye;
    load.mirrorNormal = right;
    load.Note(cam.loc,
              "the camera's frame keeps the world's handedness (as a plain LookAt does); the scene is loaded "
              "mirrored in the camera's vertical plane, so that the image is pbrt's (its camera space is "
              "left-handed)");
  }
  CameraSpec& c = load.scene.camera;
  c.valid = true;
  c.eye = eye;
  c.lookAt = eye + forward;
  c.up = up;
  const float fov = float(cam.params.GetFloat("fov", 90.0));
  load.scene.defaults.fovShorterAxis = fov;
  c.fovY = FovYForShorterAxis(fov, load.scene.defaults.width, load.scene.defaults.height);
  c.aperture = std::max(0.0f, float(cam.params.GetFloat("lensradius", 0.0)));
  c.focusDistance = c.aperture > 0.0f ? float(cam.params.GetFloat("focaldistance", 1e6)) : 0.0f;
  for (const char* name : {"screenwindow", "frameaspectratio", "shutteropen", "shutterclose"})
    if (cam.params.Has(name))
      load.WarnKind(std::string("camera-") + name, cam.loc,
                    std::string("Camera \"") + name + "\" is not supported yet; ignored");
}

// Media, and the directives the renderer has nothing for: one warning per kind.
void WarnUnsupported(PbrtLoad& load) {
  const PbrtScene& p = load.pbrt;
  if (!p.media.empty())
    load.WarnKind("media", p.media.front().loc,
                  "participating media (MakeNamedMedium \"" + p.media.front().name + "\", type \"" +
                      p.media.front().type + "\") are not rendered yet; surfaces render as if in vacuum");
  for (const char* directive : {"MakeNamedMedium", "MediumInterface"})
    if (auto use = p.directives.find(directive); use != p.directives.end() && p.media.empty())
      load.WarnKind("media", use->second.first, std::string(directive) + ": media are not rendered yet; ignored");
}

// Reflects the Scene in the mirror plane (see the top of this file): positions and normals, and each triangle's
// winding reversed so that its normal stays the reflected one; the delta lights' positions and directions, and a spot
// light's frame rows (its world-to-light map M becomes M R, R the reflection, so a reflected direction R w finds the
// cone angle that w had).
void Mirror(PbrtLoad& load) {
  Scene& s = load.scene;
  const Vec3 n = load.mirrorNormal, o = load.mirrorPoint;
  for (Vec3& p : s.positions) p = p - n * (2.0f * Dot(p - o, n));
  for (Vec3& v : s.normals) v = v - n * (2.0f * Dot(v, n));
  for (Vec3& p : s.portals) p = p - n * (2.0f * Dot(p - o, n));
  auto reflect = [&](Float4& f, bool point) {
    const Vec3 v(f.x, f.y, f.z), r = point ? v - n * (2.0f * Dot(v - o, n)) : v - n * (2.0f * Dot(v, n));
    f = Float4{r.x, r.y, r.z, f.w};
  };
  for (DeltaLight& l : s.deltaLights) {
    reflect(l.p, BitsFromFloat(l.p.w) != uint32_t(kDistantLight));
    for (Float4& row : l.frame) reflect(row, false);
  }
  for (size_t t = 0; t < s.triMaterial.size(); ++t) {
    std::swap(s.positions[3 * t + 1], s.positions[3 * t + 2]);
    std::swap(s.normals[3 * t + 1], s.normals[3 * t + 2]);
    std::swap(s.uvs[6 * t + 2], s.uvs[6 * t + 4]);
    std::swap(s.uvs[6 * t + 3], s.uvs[6 * t + 5]);
  }
  Vec3 lo(kInf), hi(-kInf);
  for (const Vec3& p : s.positions) lo = Min(lo, p), hi = Max(hi, p);
  s.boundsMin = lo;
  s.boundsMax = hi;
}

}  // namespace

Scene LoadPbrtScene(const std::string& path, const LoadOptions& options) {
  Scene scene;
  scene.path = path;
  Stopwatch phase;
  PbrtScene pbrt;
  try {
    pbrt = ParsePbrtFile(path);
  } catch (const PbrtError& e) {
    throw SceneError(e.what());
  }
  scene.seconds.read = phase.Seconds();
  scene.warnings = pbrt.warnings;
  PbrtLoad load(pbrt, scene, options);
  load.folders.scene = loader::RealPath(pbrt.searchDir);
  if (load.folders.scene.empty()) throw SceneError(path + ": cannot resolve its folder");
  for (const std::string& dir : options.searchPaths) {
    const std::string real = loader::RealPath(dir);
    if (real.empty())
      load.Warn(PbrtLoc{}, "--texture-path " + dir + ": not found (" + std::strerror(errno) + "); not searched");
    else
      load.folders.extra.push_back(real);
  }

  phase.Restart();
  SetDefaults(load);
  SetCamera(load);
  WarnUnsupported(load);
  PbrtTextures textures(load);
  PbrtMaterials materials(load, textures);
  AddPbrtShapes(load, materials, textures);
  scene.seconds.parse = phase.Seconds();
  phase.Restart();
  AddPbrtLights(load);
  if (load.mirrored) Mirror(load);
  if (scene.NumTriangles() == 0) throw SceneError(path + ": no shapes the renderer can draw");
  load.FinishWarnings();
  scene.seconds.convert = phase.Seconds();
  return scene;
}

SceneDefaults ReadPbrtDefaults(const std::string& path) {
  bool outOfRange = false;
  try {
    return DefaultsOf(ParsePbrtFile(path), &outOfRange);
  } catch (const PbrtError& e) {
    throw SceneError(e.what());
  }
}

}  // namespace pbrtload
}  // namespace tracer
