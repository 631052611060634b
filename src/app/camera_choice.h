// @file camera_choice.h: which camera renders (--eye/--look-at, SCENE.camera, or framed on the scene's bounds), the
// camera printed as .camera-file lines, and the warning when it most likely looks at a closed room from outside.
#pragma once
#include <string>

#include "app/cli.h"
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

// A camera at the centre of the bounds, looking the way `camera` looks: the view from inside a room, as flags.
std::string InteriorCameraFlags(const Scene& scene, const CameraSpec& camera);

// Before rendering: when most primary rays see back faces, the camera is most likely outside a closed room; warns so
// on stderr, suggesting `interiorFlags`.
void WarnAboutBackFaces(const SceneData& data, const std::string& interiorFlags);

}  // namespace tracer
