// @file hploc.h: H-PLOC (hploc.cu), the GPU BVH builder's default clustering.
#pragma once
#include <cuda_runtime.h>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// Clusters the leaves (a.cNode[0], over the sorted Morton codes) in one launch, up to the root or, with the SAH top
// (top: its buffer, -1 where no cluster is handed over), up to subtrees of kSahTopRange leaves. groupMask: the keys'
// bits that name a leaf's group (the spatial-split top's, split_top.h; 0: none): the leaves of each group, which are
// consecutive, become one subtree, and the tree above the groups is the one their bits describe.
void ClusterHierarchically(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, int* top,
                           cudaStream_t st, uint64_t groupMask = 0);

}  // namespace tracer::gpu_build
