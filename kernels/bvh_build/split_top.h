// @file split_top.h: the GPU BVH builder's spatial-split top (split_top.cu): the top of the tree built by binned SAH
// with spatial splits, down to groups of references that the clustering then builds below.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "bvh_build/build_arrays.h"
#include "tracer/cuda/device_buffer.h"

namespace tracer::gpu_build {

// The top's default least references of a node it still splits (TRACER_SPLIT_TOP_MIN overrides it). Measured on the
// sports car (docs/PERFORMANCE.md): from 32,768 down to 512 its camera rays traced 3.8-4.0 G rays/s, at 128 they
// traced as on the host's tree (5.2) and it rendered as fast, in a 24-ms build of 2,467 groups; 32 gained nothing more.
constexpr int kSplitTopMin = 128;
// The deepest the top goes (groups named by at most this many bits of the keys).
constexpr int kSplitTopMaxDepth = 12;
// References a triangle at most, over the whole top (the host builder's budget, kSpatialSplitBudget).
constexpr double kSplitTopBudget = 1.5;

// The top's references, in groups: each group a range of consecutive references, named by its path from the root.
struct SplitTop {
  DeviceBuffer<int> tri;        // per reference: its triangle
  DeviceBuffer<Float4> lo, hi;  // per reference: its box, around its triangle's part in it
  int refs = 0;                 // references; 0 where the top made no split (the triangles' tree is built alone)
  int groups = 0;
  int depth = 0;          // of the deepest group: the keys' group bits
  int spatialSplits = 0;  // of the top's groups - 1 splits, those that cut triangles
  // The references' sort keys (with ids: each reference's number): the group's path from the root in the top `depth`
  // bits of 63 (a left turn 0, a right turn 1, then 0s), then the Morton code of the centre of the reference's box
  // over the triangles' centroid bounds (a.bounds) less its last `depth` bits. Sorted, each group's references are
  // consecutive, and the groups' bits (GroupMask) describe the top's tree.
  DeviceBuffer<uint64_t> keys;
  DeviceBuffer<int> ids;
};

// Splits the triangles (a.pos) top down: every node of at least minRefs references
// (and less than kSplitTopMaxDepth deep) by the cheapest of binned SAH's object splits (by the centres of the
// references' boxes) and spatial splits (Stich, Friedrich and Dietrich 2009: kSpatialBins planes an axis across the
// node's box, each reference clipped into the bins it spans; core/spatial_split.h, the host builder's arithmetic),
// within the budget of kSplitTopBudget references a triangle. A straddling reference becomes two, each with the box of
// its triangle's part on its side. Waits for the device once a level (the next level's launches need its counts).
// Returns no references where the top made no split (fewer than minRefs triangles).
SplitTop BuildSplitTop(const BuildArrays& a, int n, int minRefs, cudaStream_t st);

// The wide BVH over the references (built from the keys): its leaves' sources (wideSrc, positions in its own binary
// layout, whose order is refOrder) become positions in the triangles' binary BVH (order, n triangles). Waits.
void MapWideSources(const SplitTop& top, const int32_t* order, int n, const int32_t* refOrder, int* wideSrc,
                    cudaStream_t st);
// The keys' group bits.
uint64_t GroupMask(const SplitTop& top);

}  // namespace tracer::gpu_build
