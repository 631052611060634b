// @file bvh_build.h: binned-SAH BVH construction on the host into the flat layout of bvh.h, with optional
// spatial splits (SBVH) for the tree that the wide BVH is collapsed from.
#pragma once
#include <vector>

#include "tracer/core/aabb.h"
#include "tracer/host/scene_data.h"

namespace tracer {

// positions: 3 per triangle. Requires at least one triangle and finite coordinates. Object splits only, whatever
// options.spatialSplits says: the result's order is a permutation of the triangles, which the scene's per-triangle
// arrays follow.
Bvh BuildBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options = {});

class ThreadPool;

// The binary BVH's triangles in its order: three Float4 per entry of `order`, the positions of triangle order[i] with
// v0.w holding its index as int bits (what the traversals read). Over the pool's threads when one is given.
void GatherBvhTriangles(const std::vector<Vec3>& positions, const std::vector<int32_t>& order,
                        std::vector<Float4>& tris, ThreadPool* pool = nullptr);

// A binary BVH over references: a reference stands for the part of one triangle inside its box. With spatial
// splits a triangle may have several references, in different subtrees.
struct ReferenceBvh {
  Bvh bvh;                  // order and tris have one entry per reference: a triangle may appear more than once
  std::vector<Aabb> boxes;  // per position of bvh.order: the reference's box, inside its triangle's box
  int spatialSplits = 0;    // inner nodes made by a spatial split
};

// BuildBvh with spatial splits after Stich, Friedrich and Dietrich 2009 ("Spatial Splits in Bounding Volume
// Hierarchies", HPG) where options.spatialSplits asks for them; there are at most kSpatialSplitBudget times as
// many references as triangles. Without them, bvh is BuildBvh's and each box its triangle's.
ReferenceBvh BuildReferenceBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options = {});

// References per triangle at most (the split budget): 1.5, i.e. one triangle in two may be split once.
constexpr double kSpatialSplitBudget = 1.5;

}  // namespace tracer
