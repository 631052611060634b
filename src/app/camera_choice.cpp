// @file camera_choice.cpp: see camera_choice.h.
#include "app/camera_choice.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "tracer/host/camera_probe.h"

namespace tracer {
namespace {

// Frames the scene's bounding sphere in the vertical field of view, looking down -z.
CameraSpec FramedCamera(const Scene& scene, float fovY, int w, int h) {
  Vec3 c = (scene.boundsMin + scene.boundsMax) * 0.5f;
  float r = 0.5f * Length(scene.boundsMax - scene.boundsMin);
  float half = 0.5f * fovY * kPi / 180.0f;
  if (w < h) half = std::atan(std::tan(half) * static_cast<float>(w) / static_cast<float>(h));
  float dist = r / std::sin(half) * 1.05f;
  CameraSpec spec;
  spec.eye = c + Vec3(0.0f, 0.0f, dist);
  spec.lookAt = c;
  spec.fovY = fovY;
  return spec;
}

// The shortest decimal that reads back as the same float, so the printed camera reproduces the image.
std::string ShortFloat(float v) {
  char buf[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

// `v` as three shortest decimals joined by `separator`.
std::string ShortVec3(Vec3 v, const char* separator) {
  return ShortFloat(v.x) + separator + ShortFloat(v.y) + separator + ShortFloat(v.z);
}

}  // namespace

CameraChoice ChooseCamera(const CliOptions& cli, const Scene& scene) {
  const int w = cli.render.width, h = cli.render.height;
  CameraChoice choice;
  if (cli.explicitCamera) {
    choice.spec.eye = cli.eye;
    choice.spec.lookAt = cli.lookAt;
    choice.spec.up = cli.up;
    choice.spec.fovY = 45.0f;
    choice.source = "--eye/--look-at";
  } else if (scene.camera.valid) {
    choice.spec = scene.camera;
    choice.source = "the scene's .camera file";
  } else {
    choice.spec = FramedCamera(scene, cli.haveFov ? cli.fov : 45.0f, w, h);
    choice.source = "framed on the scene's bounds";
  }
  if (cli.haveFov) choice.spec.fovY = cli.fov;
  if (cli.aperture >= 0.0f) choice.spec.aperture = cli.aperture;
  if (cli.focusDistance > 0.0f) choice.spec.focusDistance = cli.focusDistance;
  return choice;
}

void PrintBoundsAndCamera(const Scene& scene, const CameraChoice& camera) {
  const CameraSpec& c = camera.spec;
  std::cerr << "scene bounds: min " << ShortVec3(scene.boundsMin, ",") << " max " << ShortVec3(scene.boundsMax, ",")
            << "\n"
            << "camera (" << camera.source << "; these lines make a .camera file):\n"
            << "eye " << ShortVec3(c.eye, " ") << "\nlook_at " << ShortVec3(c.lookAt, " ") << "\nup "
            << ShortVec3(c.up, " ") << "\nfov " << ShortFloat(c.fovY) << "\n";
  if (c.aperture > 0.0f) {
    std::cerr << "aperture " << ShortFloat(c.aperture) << "\n";
    if (c.focusDistance > 0.0f) std::cerr << "focus_distance " << ShortFloat(c.focusDistance) << "\n";
  }
}

std::string InteriorCameraFlags(const Scene& scene, const CameraSpec& camera) {
  const Vec3 centre = (scene.boundsMin + scene.boundsMax) * 0.5f;
  const Vec3 target =
      centre + Normalize(camera.lookAt - camera.eye) * (0.5f * Length(scene.boundsMax - scene.boundsMin));
  return "--eye " + ShortVec3(centre, ",") + " --look-at " + ShortVec3(target, ",");
}

void WarnAboutBackFaces(const SceneData& data, const std::string& interiorFlags) {
  const PrimaryRayProbe probe = ProbePrimaryRays(data);
  if (!MostlyBackFaces(probe)) return;
  std::fprintf(stderr,
               "tracer: warning: %d of the %d primary rays that hit the scene (of %d traced) see the back of a "
               "triangle: the camera is most likely outside a closed room or inside an object, and the image may be "
               "dark. To look from inside, try %s\n",
               probe.backFaces, probe.hits, probe.rays, interiorFlags.c_str());
}

}  // namespace tracer
