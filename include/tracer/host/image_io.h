// @file image_io.h: writing images (PNG tone-mapped; Radiance .hdr and PFM linear), always atomically.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tracer {

enum class ImageFormat { kPng, kHdr, kPfm, kUnknown };
ImageFormat FormatFromPath(const std::string& path);

// Writes rgb (linear, row 0 at the top) to path with AtomicWriteFile (file_util.h): a temporary file in the
// same folder, synced to disk, then renamed, so path holds the previous file or the whole new one and a
// failure leaves no file behind. Throws std::runtime_error with the reason ("<path>: cannot write image
// (...)" or "<path>: cannot rename into place (...)").
// exposure is in stops and applies to PNG only (ToneMapToSrgb8). Non-finite values are written as 0 (and counted in the
// return value), so no image ever holds one.
size_t WriteImage(const std::string& path, const std::vector<float>& rgb, int width, int height, float exposure = 0.0f);

// Reads a PFM written by WriteImage (for tests and tools).
std::vector<float> ReadPfm(const std::string& path, int& width, int& height);

// sRGB transfer function of a linear value in [0, 1].
float LinearToSrgb(float v);

// The 8-bit PNG value of a finite linear value: LinearToSrgb(linear * gain) (gain = 2^exposure), times 255,
// rounded to nearest. Public so that tests can check a written PNG against the linear image.
uint8_t ToneMapToSrgb8(float linear, float gain);

}  // namespace tracer
