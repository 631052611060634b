// @file camera_file.h: where the loader looks for a scene's camera file (its format: LoadCameraFile, camera_file.cpp).
#pragma once
#include <string>

namespace tracer::loader {

// The scene's camera file: the OBJ's path with ".camera" in place of its extension ("room.obj" -> "room.camera").
std::string CameraPathFor(const std::string& objPath);

}  // namespace tracer::loader
