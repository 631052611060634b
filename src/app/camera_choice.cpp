// @file camera_choice.cpp: see camera_choice.h.
#include "app/camera_choice.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

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

// Cameras to try when the user's sees mostly back faces, as (eye, look-at), in order: at the centre of the bounds
// looking the user's way (a room seen from outside), at points halfway from the centre to the walls looking at it
// (a room with an object at its centre), then from outside the bounds looking at the centre, at the distance that
// frames them (a closed object with the camera inside it).
std::vector<std::pair<Vec3, Vec3>> CandidateCameras(const Scene& scene, const CameraSpec& user) {
  const Vec3 centre = (scene.boundsMin + scene.boundsMax) * 0.5f, half = (scene.boundsMax - scene.boundsMin) * 0.5f;
  const float radius = Length(half);
  std::vector<std::pair<Vec3, Vec3>> out;
  out.emplace_back(centre, centre + Normalize(user.lookAt - user.eye) * radius);
  const float around[8][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  for (const auto& a : around) out.emplace_back(centre + Vec3(a[0] * half.x, 0.0f, a[1] * half.z) * 0.5f, centre);
  const float distance = radius / std::sin(0.5f * user.fovY * kPi / 180.0f) * 1.05f;
  for (const auto& a : around)
    out.emplace_back(centre + Normalize(Vec3(a[0], a[0] != 0.0f && a[1] != 0.0f ? 0.5f : 0.0f, a[1])) * distance,
                     centre);
  return out;
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
    choice.source = scene.defaults.valid ? "the scene file's camera" : "the scene's .camera file";
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

CameraDiagnosis DiagnoseCamera(const CliOptions& cli, const Scene& scene, const SceneData& data,
                               const CameraSpec& spec) {
  CameraDiagnosis d;
  d.emitters = !data.emitterTri.empty() || !data.deltaLights.empty();       // lights inside the scene
  d.environment = data.env.params.width > 0 || !IsBlack(data.environment);  // flags' or the scene file's
  // Only an environment lights a scene without emitters; it cannot where every ray from the eye hits the scene.
  if (!d.emitters && d.environment) {
    const PrimaryRayProbe around = ProbeAround(data, data.camera.eye);
    d.enclosed = around.hits == around.rays;
  }
  d.probe = ProbePrimaryRays(data);
  // pbrt-v4 scenes' triangles face either way (their surfaces are two-sided), so seeing their backs says nothing.
  d.backFaces = !scene.defaults.valid && MostlyBackFaces(d.probe);
  if (!d.backFaces) return d;
  for (const auto& [eye, lookAt] : CandidateCameras(scene, spec)) {
    const Vec3 forward = Normalize(lookAt - eye);
    if (Length(Cross(forward, Normalize(spec.up))) < 1e-3f) continue;  // (no frame with this up)
    const Camera camera =
        Camera::LookAt(eye, lookAt, spec.up, spec.fovY, cli.render.width, cli.render.height, 0.0f, 0.0f);
    if (SeesFrontFacesFromOutside(data, camera)) {
      d.suggestion = "--eye " + ShortVec3(eye, ",") + " --look-at " + ShortVec3(lookAt, ",");
      return d;
    }
  }
  d.why =
      "no camera tried (at the centre of the bounds, around it, and outside them) sees front faces from outside every "
      "object; the triangles may face the wrong way (check their winding or normals)";
  return d;
}

void WarnAboutTheCamera(const CliOptions& cli, const CameraDiagnosis& d) {
  if (cli.render.quiet) return;
  if (d.backFaces)
    std::fprintf(stderr,
                 "tracer: warning: %d of the %d primary rays that hit the scene (of %d traced) see the back of a "
                 "triangle: the camera is most likely outside a closed room or inside an object, and the image may be "
                 "dark. %s%s\n",
                 d.probe.backFaces, d.probe.hits, d.probe.rays,
                 d.suggestion.empty() ? "And " : "A camera that sees front faces from outside every object: ",
                 d.suggestion.empty() ? d.why.c_str() : d.suggestion.c_str());
  if (d.enclosed)
    std::fprintf(stderr,
                 "tracer: warning: the scene has no emitters and the camera is enclosed (every ray from it hits the "
                 "scene: it is inside a closed room or object): the environment (%s) cannot reach it, so it cannot "
                 "light a closed room; add an emitter (Ke in the MTL) or open the room\n",
                 cli.envMapPath.empty() ? "--env" : "--env-map");
}

}  // namespace tracer
