// @file pbrt_loader.h: LoadPbrtScene (a pbrt-v4 scene into the renderer's Scene), and what its parts share: the
// load's context with its warnings (one per kind of thing the renderer cannot do yet, at its first file:line).
//
// The parts, each a pbrt_loader_*.cpp beside this file with its own header: spectra (colours from pbrt's spectrum
// parameters), textures (texture trees onto TextureMaps), materials, shapes (triangles in world space, emission) and
// lights (the environment, and which lights are left out). docs/FORMATS.md, "pbrt-v4 scenes", is the user's view.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "scene_files.h"
#include "tracer/host/pbrt_scene.h"
#include "tracer/host/scene_loader.h"

namespace tracer::pbrtload {

// A pbrt scene being loaded into `scene`.
struct PbrtLoad {
  PbrtLoad(const PbrtScene& pbrtScene, Scene& out, const LoadOptions& loadOptions)
      : pbrt(pbrtScene), scene(out), options(loadOptions) {}
  const PbrtScene& pbrt;
  Scene& scene;
  const LoadOptions& options;
  loader::AssetFolders folders;  // where textures and meshes are looked for (loader/scene_files.h)
  // The Scene is pbrt's world reflected in the plane through mirrorPoint with normal mirrorNormal (unit) when
  // mirrored: what makes the renderer's right-handed camera see pbrt's image of a left-handed view (pbrt_loader.cpp).
  bool mirrored = false;
  Vec3 mirrorPoint{0.0f, 0.0f, 0.0f}, mirrorNormal{1.0f, 0.0f, 0.0f};
  // A direction of the Scene's frame in pbrt's world frame (the reflection is its own inverse).
  Vec3 ToPbrtDirection(Vec3 d) const { return mirrored ? d - mirrorNormal * (2.0f * Dot(d, mirrorNormal)) : d; }

  // "file:line: message" into Scene::warnings.
  void Warn(const PbrtLoc& loc, const std::string& message);
  // The first of a kind only; later ones are counted and the count is appended by FinishWarnings.
  void WarnKind(const std::string& kind, const PbrtLoc& loc, const std::string& message);
  // "file:line: message" into Scene::notes.
  void Note(const PbrtLoc& loc, const std::string& message);
  // Appends "(N more)" to each kind's warning that was met again.
  void FinishWarnings();

 private:
  struct Kind {
    size_t warning = 0;  // index into Scene::warnings
    size_t more = 0;
  };
  std::map<std::string, Kind> kinds_;
};

// Parses `path` (ParsePbrtFile) and maps it onto a Scene. Throws SceneError ("file:line: message").
Scene LoadPbrtScene(const std::string& path, const LoadOptions& options);

// The render settings `path` asks for (its Film, Sampler and Integrator), from the scene text alone (no mesh or
// texture is read). Throws SceneError ("file:line: message").
SceneDefaults ReadPbrtDefaults(const std::string& path);
// Whether a file name is a pbrt scene's: it ends in ".pbrt" or ".pbrt.gz" (any case).
bool IsPbrtFileName(const std::string& path);

inline Vec3 ToVec3(const PbrtVec3& v) {
  return Vec3(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]));
}

}  // namespace tracer::pbrtload
