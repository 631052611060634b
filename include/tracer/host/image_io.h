// @file image_io.h: writing images (PNG tone-mapped; Radiance .hdr, PFM and OpenEXR linear), always atomically.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tracer {

enum class ImageFormat { kPng, kHdr, kPfm, kExr, kUnknown };
ImageFormat FormatFromPath(const std::string& path);

// Whether this build writes OpenEXR (built with libopenexr-dev).
bool ExrSupported();

// More channels for an image that has layers (OpenEXR): `values` holds channels.size() floats per pixel, row 0 at
// the top; they are written as channels "name.channel" (e.g. albedo.R, depth.Z).
struct ImageLayer {
  std::string name;
  std::vector<std::string> channels;
  const std::vector<float>* values = nullptr;
};

// What only some formats keep: OpenEXR's pixel type, its header's string attributes (name, value) and layers.
struct ImageExtras {
  bool half = false;  // EXR: R, G, B as 16-bit floats (clamped to half's largest, 65504); layers stay 32-bit
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<ImageLayer> layers;  // EXR only (other formats write no layers)
};

// Writes rgb (linear, row 0 at the top) to path with AtomicWriteFile (file_util.h): a temporary file in the
// same folder, synced to disk, then renamed, so path holds the previous file or the whole new one and a
// failure leaves no file behind. Throws std::runtime_error with the reason ("<path>: cannot write image
// (...)" or "<path>: cannot rename into place (...)").
// exposure is in stops and applies to PNG only (ToneMapToSrgb8). Non-finite values are written as 0 (and counted in the
// return value), so no image ever holds one.
// .exr: R, G, B channels (ZIP compression), extras.layers' channels and extras.attributes as string attributes.
size_t WriteImage(const std::string& path, const std::vector<float>& rgb, int width, int height, float exposure = 0.0f,
                  const ImageExtras& extras = {});

// Reads a PFM written by WriteImage (for tests and tools).
std::vector<float> ReadPfm(const std::string& path, int& width, int& height);

// Reads the R, G, B channels of an OpenEXR file (any pixel type, as floats, row 0 at the top) and, when
// `attributes` is given, its string attributes. Throws std::runtime_error naming the file.
std::vector<float> ReadExr(const std::string& path, int& width, int& height,
                           std::map<std::string, std::string>* attributes = nullptr);
// Reads the named channels of an OpenEXR file (e.g. {"albedo.R", "albedo.G", "albedo.B"}), interleaved per pixel.
// Throws std::runtime_error naming the file (also when a channel is missing).
std::vector<float> ReadExrChannels(const std::string& path, const std::vector<std::string>& names, int& width,
                                   int& height, std::map<std::string, std::string>* attributes = nullptr);

// sRGB transfer function of a linear value in [0, 1].
float LinearToSrgb(float v);

// The 8-bit PNG value of a finite linear value: LinearToSrgb(linear * gain) (gain = 2^exposure), times 255,
// rounded to nearest. Public so that tests can check a written PNG against the linear image.
uint8_t ToneMapToSrgb8(float linear, float gain);

}  // namespace tracer
