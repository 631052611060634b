// @file ray_sort.h: the key by which the GPU can sort extension rays before intersect (--sort-rays): the
// direction's octant, then the origin's Morton code on a coarse grid over the scene's bounds. Rays with equal
// keys start near each other and head the same way, so a warp of them visits similar nodes (Garanzha and Loop
// 2010, "Fast Ray Sorting and Breadth-First Packet Traversal for GPU Ray Tracing", sort rays by a hash of
// quantised origin and direction). The sort permutes an index list only: the ray buffers stay as they are and
// every ray's hit goes to its own slot, so images do not change.
#pragma once
#include "tracer/core/wavefront.h"

namespace tracer {

constexpr int kRaySortMortonBits = 4;                        // grid cells per axis: 2^4
constexpr int kRaySortKeyBits = 3 + 3 * kRaySortMortonBits;  // what the radix sort looks at
constexpr uint32_t kRaySortDeadKey = (1u << kRaySortKeyBits) - 1u;

// Spreads the low kRaySortMortonBits bits of v to every third bit.
TRACER_HD uint32_t SpreadBits3(uint32_t v) {
  uint32_t r = 0;
  for (int b = 0; b < kRaySortMortonBits; ++b) r |= ((v >> b) & 1u) << (3 * b);
  return r;
}

// The key of a ray: octant (bit a set when d is negative on axis a) above the origin's Morton code in the
// grid of 2^kRaySortMortonBits cells per axis over [lo, lo + 1 / invSize]; origins outside are clamped.
TRACER_HD uint32_t RaySortKey(const Ray& r, Vec3 lo, Vec3 invSize) {
  constexpr float kCells = static_cast<float>(1 << kRaySortMortonBits);
  auto cell = [&](float x, float l, float s) {
    const float c = (x - l) * s * kCells;
    return static_cast<uint32_t>(c >= kCells - 1.0f ? kCells - 1.0f : (c > 0.0f ? c : 0.0f));  // NaN: cell 0
  };
  const uint32_t oct = (r.d.x < 0.0f ? 1u : 0u) | (r.d.y < 0.0f ? 2u : 0u) | (r.d.z < 0.0f ? 4u : 0u);
  const uint32_t morton = SpreadBits3(cell(r.o.x, lo.x, invSize.x)) | SpreadBits3(cell(r.o.y, lo.y, invSize.y)) << 1 |
                          SpreadBits3(cell(r.o.z, lo.z, invSize.z)) << 2;
  return oct << (3 * kRaySortMortonBits) | morton;
}

// Keys and identity indices for every pool slot of the current ray buffer; slots past the queue's end get
// kRaySortDeadKey, the largest, so that a stable sort of the whole pool keeps the live rays first.
template <class L>
struct RayKeyStage {
  WaveView<L> w;
  Vec3 lo, invSize;
  uint32_t* keys;
  int32_t* index;
  TRACER_HD int Count() const { return w.pool; }
  TRACER_HD void operator()(int i) const {
    const uint32_t live = w.counters->rayCount[w.cur];
    keys[i] = static_cast<uint32_t>(i) < live ? RaySortKey(L::LoadRay(w.rays[w.cur], i), lo, invSize) : kRaySortDeadKey;
    index[i] = i;
  }
};

}  // namespace tracer
