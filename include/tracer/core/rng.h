// @file rng.h: counter-based random numbers keyed by (seed, pixel, sample, dimension).
// No generator state travels with a path: any stage can draw dimension d of sample s at pixel p, on the
// CPU or the GPU, and get the same number. That is what makes --seed reproduce an image exactly.
#pragma once
#include "tracer/core/common.h"

namespace tracer {

// 64-bit finaliser of SplitMix64 (Steele, Lea and Flood 2014); passes BigCrush as a counter hash.
TRACER_HD uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Dimensions of one path: two for the pixel jitter, then kDimsPerBounce for each bounce.
enum RandomDim : uint32_t {
  kDimPixelX = 0,
  kDimPixelY = 1,
  kDimBounceBase = 2,
  kDimLightPick = 0,  // + bounce base
  kDimLightU = 1,
  kDimLightV = 2,
  kDimBsdfLobe = 3,
  kDimBsdfU = 4,
  kDimBsdfV = 5,
  kDimRoulette = 6,
  kDimsPerBounce = 8,  // one spare
};

// The thin lens's two dimensions, far from any bounce's (the counter hash takes any dimension), so that the pinhole's
// paths keep their numbers.
constexpr uint32_t kDimLensU = 0xfffffff0u, kDimLensV = 0xfffffff1u;

TRACER_HD uint32_t BounceDim(uint32_t depth, uint32_t which) { return kDimBounceBase + depth * kDimsPerBounce + which; }

// A uniform float in [0, 1) for (seed, pixel, sample, dim). 24 bits of mantissa, never exactly 1.
TRACER_HD float Random(uint32_t seed, uint32_t pixel, uint32_t sample, uint32_t dim) {
  uint64_t key = (static_cast<uint64_t>(pixel) << 32) | sample;
  uint64_t h = Mix64(key ^ Mix64((static_cast<uint64_t>(seed) << 32) | dim));
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// Convenience: the generator bound to one path sample.
struct PathRng {
  uint32_t seed, pixel, sample;
  TRACER_HD float Get(uint32_t dim) const { return Random(seed, pixel, sample, dim); }
  TRACER_HD float Bounce(uint32_t depth, uint32_t which) const { return Get(BounceDim(depth, which)); }
};

}  // namespace tracer
