// @file bvh_build.h: binned-SAH BVH construction on the host into the flat layout of bvh.h.
#pragma once
#include <vector>

#include "tracer/bvh.h"

namespace tracer {

struct BvhBuildOptions {
  int bins = 16;         // SAH bins per axis
  int maxLeafSize = 4;   // triangles
  float traversalCost = 1.0f;
  float intersectCost = 1.0f;
};

struct Bvh {
  std::vector<BvhNode> nodes;
  std::vector<Float4> tris;      // 3 per triangle, BVH order; v0.w = original index as int bits
  std::vector<int32_t> order;    // BVH position -> original triangle index
  int depth = 0;
  BvhView View() const {
    return BvhView{nodes.data(), tris.data(), static_cast<int32_t>(nodes.size()), static_cast<int32_t>(order.size())};
  }
};

// positions: 3 per triangle. Requires at least one triangle and finite coordinates.
Bvh BuildBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options = {});

}  // namespace tracer
