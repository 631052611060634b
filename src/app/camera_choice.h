// @file camera_choice.h: which camera renders (--eye/--look-at, SCENE.camera, or framed on the scene's bounds), the
// camera printed as .camera-file lines, and the warnings when it most likely cannot see a lit front face.
#pragma once
#include <string>

#include "app/cli.h"
#include "tracer/host/camera_probe.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

// The camera used and where it came from (printed, so that a framed camera can be kept in a file).
struct CameraChoice {
  CameraSpec spec;
  const char* source;
};

// --eye/--look-at, else SCENE.camera, else framed on the bounds; --fov, --aperture and --focus-distance override
// those of each.
CameraChoice ChooseCamera(const CliOptions& cli, const Scene& scene);

// On stderr: the scene's bounds and the camera as .camera-file lines (the format LoadCameraFile reads), ready to copy.
void PrintBoundsAndCamera(const Scene& scene, const CameraChoice& camera);

// What a look through the camera before the render found (host rays through a coarse grid and around the eye), for
// the warnings before and after it.
struct CameraDiagnosis {
  PrimaryRayProbe probe;   // the user's camera's primary rays
  bool backFaces = false;  // most primary rays see back faces: outside a closed room, or inside an object
  // When backFaces: --eye/--look-at flags of a camera that was probed and sees front faces from outside every object;
  // empty when none of those tried did (`why` says so).
  std::string suggestion, why;
  bool emitters = false;     // the scene has emitter triangles or point, spot or distant lights
  bool environment = false;  // an environment lights the scene (--env, --env-map or the scene file's)
  bool enclosed = false;     // every ray from the eye hits the scene: no environment reaches the camera's room
};

// Probes the camera `spec` (the one `data` was built with) and, when it sees mostly back faces, candidate cameras
// (the centre of the bounds, points around it, views from outside) until one sees front faces from outside every
// object. Also whether the eye is enclosed, when only an environment could light the scene.
CameraDiagnosis DiagnoseCamera(const CliOptions& cli, const Scene& scene, const SceneData& data,
                               const CameraSpec& spec);

// Before rendering, on stderr: the camera most likely looks at a closed room from outside or from inside an object
// (with the probed suggestion, or why there is none); an environment that cannot reach a closed room without emitters.
void WarnAboutTheCamera(const CliOptions& cli, const CameraDiagnosis& diagnosis);

}  // namespace tracer
