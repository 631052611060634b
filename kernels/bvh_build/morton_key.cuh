// @file morton_key.cuh: the GPU BVH builder's 63-bit Morton code of a box's centre (morton.cu's leaves, the
// spatial-split top's references in split_top.cu).
#pragma once
#include <cstdint>

#include "bvh_build/ploc_tree.cuh"

namespace tracer::gpu_build {

// 21 bits spread to every third bit of 63.
__device__ inline uint64_t Spread3(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | x << 32) & 0x001f00000000ffffull;
  x = (x | x << 16) & 0x001f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

// The 63-bit Morton code of the centre of box (lo, hi), 21 bits an axis over the centroids' bounds (ordered min x, y,
// z, then max x, y, z; a centre outside them is clamped to the nearest cell): each axis's extent in 2^21 cells
// (cells stretched to the bounds' shape), or with `cube` (TRACER_MORTON_CUBE, for measuring) the longest extent on
// every axis (cubic cells). Cubic cells traced some scenes faster and others slower, and built a few percent slower:
// mixed, so the default stays (docs/PERFORMANCE.md).
__device__ inline uint64_t MortonKey(Float4 boxLo, Float4 boxHi, const uint32_t* bounds, bool cube) {
  const float c[3] = {boxLo.x * 0.5f + boxHi.x * 0.5f, boxLo.y * 0.5f + boxHi.y * 0.5f,
                      boxLo.z * 0.5f + boxHi.z * 0.5f};
  float longest = 0.0f;
  if (cube)
    for (int a = 0; a < 3; ++a) longest = Fmaxf(longest, FloatFromOrdered(bounds[3 + a]) - FloatFromOrdered(bounds[a]));
  uint64_t key = 0;
  for (int a = 0; a < 3; ++a) {
    const float lo = FloatFromOrdered(bounds[a]), extent = cube ? longest : FloatFromOrdered(bounds[3 + a]) - lo;
    const float u = extent > 0.0f ? (c[a] - lo) / extent : 0.0f;
    const uint32_t q = static_cast<uint32_t>(Fminf(Fmaxf(u * 2097152.0f, 0.0f), 2097151.0f));
    key |= Spread3(q) << a;
  }
  return key;
}

}  // namespace tracer::gpu_build
