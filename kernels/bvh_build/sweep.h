// @file sweep.h: the GPU BVH builder's two layouts from its finished tree (sweep.cu).
#pragma once
#include <cuda_runtime.h>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// Both top-down sweeps, in one launch, in queues the clustering no longer needs (a.cNode[0], a.ids): the binary BVH's
// nodes (a.binOut), depth (a.status[0]) and node count (a.totals[0]); with options.wide, the wide BVH's places, node
// count (a.totals[1]) and depth (a.status[1]), its leaves' triangles (a.wideTriSrc: their binary positions) and, in a
// pass of their own, its encoded nodes (a.wideOut; a.status[2]: a box that does not quantise). Then the binary BVH's
// order (a.order).
void WriteLayouts(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, cudaStream_t st);

}  // namespace tracer::gpu_build
