// @file wide_bvh_build.h: the compressed 8-wide BVH of core/wide_bvh.h, built on the host by collapsing a
// binned-SAH binary BVH with the SAH-optimal collapse of Ylitie, Karras and Laine 2017.
#pragma once
#include <vector>

#include "tracer/core/aabb.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/scene_data.h"

namespace tracer {

// positions: 3 per triangle (as for BuildBvh); binary: the scene's binary BVH, whose order the wide BVH's
// triangles report (their v0.w). Builds its own binary tree with single-triangle leaves to collapse, so that
// the collapse chooses the leaves; with options.spatialSplits, with spatial splits (BuildReferenceBvh), so that
// the wide BVH may hold a triangle in several leaves. Throws std::runtime_error if the result would be deeper than
// kWideMaxDepth, which the binary builder's depth cap rules out.
WideBvh BuildWideBvh(const std::vector<Vec3>& positions, const Bvh& binary, const BvhBuildOptions& options = {});

// The collapse alone: `tree` is any binary BVH of the scene's triangles whose leaves hold at most 16 triangles
// (BuildWideBvh passes one with single-triangle leaves), `binary` the scene's. refBoxes: per position of
// tree.order, the box of that reference (BuildReferenceBvh's boxes), which leaf slots' boxes are made of; empty:
// the triangles' own boxes. Throws std::runtime_error naming the depth when the wide tree would be deeper than
// kWideMaxDepth.
WideBvh CollapseToWideBvh(const Bvh& tree, const Bvh& binary, const std::vector<Aabb>& refBoxes = {});

// The SAH cost of a wide BVH, for comparing builds: 1 per node visit and 0.3 per triangle test (the collapse's
// weights), each weighted by the area of the box the parent tests (its quantised slot box) relative to the root's;
// the root costs 1.
double WideSahCost(const WideBvh& wide);

}  // namespace tracer
