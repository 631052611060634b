// @file camera_file.cpp: the camera file format (eye, look_at, up, fov, aperture, focus_distance), read and checked.
#include "camera_file.h"

#include <map>
#include <string_view>
#include <vector>

#include "scene_files.h"
#include "scene_text.h"
#include "tracer/host/scene_loader.h"

namespace tracer {
namespace loader {

std::string CameraPathFor(const std::string& objPath) {
  size_t slash = objPath.find_last_of('/');
  size_t dot = objPath.find_last_of('.');
  bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (hasExtension ? objPath.substr(0, dot) : objPath) + ".camera";
}

}  // namespace loader

namespace {

constexpr size_t kMaxCameraFileBytes = size_t(1) << 20;

}  // namespace

using loader::Fail;
using loader::LineReader;
using loader::NumberKind;
using loader::ParseNumber;
using loader::Quote;
using loader::ReadRegularFile;
using loader::Tokenize;

// The camera file: one setting per line, '#' starts a comment, blank lines are ignored.
//   eye X Y Z        required: the camera position
//   look_at X Y Z    required: a point the camera looks at
//   up X Y Z         optional, default 0 1 0; must not be parallel to look_at - eye
//   fov DEGREES      optional, default 45: the vertical field of view, in (0, 180)
//   aperture R       optional, default 0 (a pinhole): the thin lens's radius, in scene units, >= 0
//   focus_distance D optional, default |look_at - eye|: the distance of the sharp plane along the view, > 0
CameraSpec LoadCameraFile(const std::string& path) {
  std::string text;
  std::string why = ReadRegularFile(path, kMaxCameraFileBytes, &text);
  if (!why.empty()) Fail(path, 0, why);
  CameraSpec camera;
  std::map<std::string, size_t> seen;  // keyword -> line
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.Next(&line)) {
    size_t lineNo = lines.Number();
    Tokenize(line.substr(0, line.find('#')), &tokens);
    if (tokens.empty()) continue;
    std::string key(tokens[0]);
    const bool scalar = key == "fov" || key == "aperture" || key == "focus_distance";
    size_t count = scalar ? 1 : 3;
    if (key != "eye" && key != "look_at" && key != "up" && !scalar)
      Fail(path, lineNo,
           "unknown setting " + Quote(key) + " (expected eye, look_at, up, fov, aperture or focus_distance)");
    if (!seen.emplace(key, lineNo).second) Fail(path, lineNo, Quote(key) + " is given twice");
    if (tokens.size() - 1 != count)
      Fail(path, lineNo, Quote(key) + " needs " + std::to_string(count) + (count == 1 ? " number" : " numbers"));
    float values[3];
    for (size_t i = 0; i < count; ++i)
      if (ParseNumber(tokens[i + 1], &values[i]) != NumberKind::kFinite)
        Fail(path, lineNo, Quote(tokens[i + 1]) + " is not a finite number");
    Vec3 v(values[0], count == 3 ? values[1] : 0.0f, count == 3 ? values[2] : 0.0f);
    if (key == "eye") camera.eye = v;
    if (key == "look_at") camera.lookAt = v;
    if (key == "up") camera.up = v;
    if (key == "fov") camera.fovY = values[0];
    if (key == "aperture") camera.aperture = values[0];
    if (key == "focus_distance") camera.focusDistance = values[0];
  }
  if (!(camera.aperture >= 0.0f)) Fail(path, seen["aperture"], "aperture (the lens radius) must not be negative");
  if (seen.count("focus_distance") && !(camera.focusDistance > 0.0f))
    Fail(path, seen["focus_distance"], "focus_distance must be positive");
  if (!seen.count("eye")) Fail(path, 0, "'eye' is required");
  if (!seen.count("look_at")) Fail(path, 0, "'look_at' is required");
  if (!(camera.fovY > 0.0f && camera.fovY < 180.0f)) Fail(path, seen["fov"], "fov must be in (0, 180) degrees");
  Vec3 forward = camera.lookAt - camera.eye;
  if (IsBlack(forward)) Fail(path, seen["look_at"], "look_at equals eye");
  // NaN (a zero up) fails the comparison too.
  if (!(Length(Cross(Normalize(forward), Normalize(camera.up))) > 1e-6f))
    Fail(path, seen.count("up") ? seen["up"] : 0, "up is zero or parallel to the view direction");
  camera.valid = true;
  return camera;
}

}  // namespace tracer
