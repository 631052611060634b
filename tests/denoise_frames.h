// @file denoise_frames.h: synthetic inputs for the denoiser's tests (CPU and GPU): a frame of known features (a wall
// facing the camera, a box in front of it, background in one corner), its colour in both halves, and noise.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "tracer/core/first_hit.h"
#include "tracer/host/denoise.h"

namespace tracer::test {

// Where a synthetic frame's pixel is: the wall, the box (a square 2 units in front of the wall, tilted, in the
// frame's lower middle when `box` is set) or the background (the top-right corner when `background` is set).
enum class FramePart { kWall, kBox, kBackground };

struct FrameLayout {
  int width = 48, height = 48;
  bool box = false, background = false;
  FramePart Part(int x, int y) const {
    if (background && x >= width * 3 / 4 && y < height / 4) return FramePart::kBackground;
    if (box && x >= width / 3 && x < width * 2 / 3 && y >= height / 2 && y < height * 5 / 6) return FramePart::kBox;
    return FramePart::kWall;
  }
};

// The frame's features with `albedo` per pixel and its noise-free colour `color` in the image and both halves: the
// wall at depth 10 (normal +z, points 0.01 apart), the box at depth 8 with its normal tilted toward x, the background
// with no hit (depth kAovMissDepth, the rest 0), no emission anywhere.
inline DenoiseImages MakeFrame(const FrameLayout& layout, const std::function<Vec3(int, int)>& albedo,
                               const std::function<Vec3(int, int)>& color) {
  DenoiseImages in;
  in.width = layout.width;
  in.height = layout.height;
  const size_t n = static_cast<size_t>(layout.width) * layout.height;
  for (auto* v : {&in.color, &in.albedo, &in.normal, &in.position, &in.emission}) v->assign(n * 3, 0.0f);
  in.depth.assign(n, kAovMissDepth);
  for (int y = 0; y < layout.height; ++y)
    for (int x = 0; x < layout.width; ++x) {
      const int p = y * layout.width + x;
      const FramePart part = layout.Part(x, y);
      StoreRgb(in.color.data(), p, color(x, y));
      if (part == FramePart::kBackground) continue;
      const bool box = part == FramePart::kBox;
      const float z = box ? 8.0f : 10.0f;
      StoreRgb(in.albedo.data(), p, albedo(x, y));
      StoreRgb(in.normal.data(), p, box ? Normalize(Vec3(0.5f, 0.0f, 1.0f)) : Vec3(0.0f, 0.0f, 1.0f));
      StoreRgb(in.position.data(), p, Vec3(0.01f * static_cast<float>(x), -0.01f * static_cast<float>(y), -z));
      in.depth[p] = z;
    }
  in.halfA = in.color;
  in.halfB = in.color;
  return in;
}

// A uniform number in [-1, 1) from (seed, index): the same on every platform.
inline float HashNoise(uint32_t seed, uint32_t index) {
  uint32_t h = seed * 0x9E3779B9u ^ (index + 0x7F4A7C15u);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

// Independent noise of up to `amplitude` times the value (kept >= 0) added to each half; the image is their mean.
inline void AddNoise(DenoiseImages& in, float amplitude, uint32_t seed) {
  for (size_t i = 0; i < in.color.size(); ++i) {
    const float c = in.color[i];
    in.halfA[i] = c * (1.0f + amplitude * HashNoise(seed, static_cast<uint32_t>(2 * i)));
    in.halfB[i] = c * (1.0f + amplitude * HashNoise(seed, static_cast<uint32_t>(2 * i + 1)));
    in.color[i] = 0.5f * (in.halfA[i] + in.halfB[i]);
  }
}

// Fireflies in half A: about one pixel in `every` (by hash) gets `gain` times its value there, as when one rare sample
// of great weight lands in the even-numbered samples; the image stays the halves' mean.
inline void AddFireflies(DenoiseImages& in, int every, float gain, uint32_t seed) {
  for (size_t p = 0; p < in.color.size() / 3; ++p) {
    if (HashNoise(seed, static_cast<uint32_t>(p)) * 0.5f + 0.5f >= 1.0f / static_cast<float>(every)) continue;
    for (size_t c = 3 * p; c < 3 * p + 3; ++c) {
      in.halfA[c] *= gain;
      in.color[c] = 0.5f * (in.halfA[c] + in.halfB[c]);
    }
  }
}

// A width x height frame with the wall, the box and the background, albedo in vertical stripes of blocks (5x7 pixels,
// 20 levels from 0.3 to 0.68 in red), lit evenly (colour 1.3 times the albedo), with AddNoise's noise.
inline DenoiseImages NoisyBlocksFrame(int width, int height, float amplitude, uint32_t seed) {
  FrameLayout layout;
  layout.width = width;
  layout.height = height;
  layout.box = layout.background = true;
  auto albedo = [](int x, int y) { return Vec3(0.3f + 0.02f * static_cast<float>((x / 5 + y / 7) % 20), 0.5f, 0.4f); };
  DenoiseImages in = MakeFrame(layout, albedo, [&](int x, int y) { return albedo(x, y) * 1.3f; });
  AddNoise(in, amplitude, seed);
  return in;
}

}  // namespace tracer::test
