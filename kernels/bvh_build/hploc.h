// @file hploc.h: H-PLOC (hploc.cu), the GPU BVH builder's default clustering.
#pragma once
#include <cuda_runtime.h>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// Clusters the leaves (a.cNode[0], over the sorted Morton codes) in one launch, up to the root or, with the SAH top
// (top: its buffer, -1 where no cluster is handed over), up to subtrees of kSahTopRange leaves.
void ClusterHierarchically(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, int* top,
                           cudaStream_t st);

}  // namespace tracer::gpu_build
