// @file image_io.h: writing images (PNG tone-mapped; Radiance .hdr and PFM linear), always atomically.
#pragma once
#include <string>
#include <vector>

namespace tracer {

enum class ImageFormat { kPng, kHdr, kPfm, kUnknown };
ImageFormat FormatFromPath(const std::string& path);

// Writes rgb (linear, row 0 at the top) to path through a temporary file in the same folder and a rename,
// so a failure never leaves a file at path. Throws std::runtime_error with the reason.
// exposure is in stops and applies to PNG only. Non-finite values are written as 0 (and counted in the
// return value), so no image ever holds one.
size_t WriteImage(const std::string& path, const std::vector<float>& rgb, int width, int height, float exposure = 0.0f);

// Reads a PFM written by WriteImage (for tests and tools).
std::vector<float> ReadPfm(const std::string& path, int& width, int& height);

// sRGB transfer function of a linear value in [0, 1].
float LinearToSrgb(float v);

}  // namespace tracer
