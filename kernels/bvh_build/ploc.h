// @file ploc.h: PLOC's global passes (ploc.cu), the GPU BVH builder's naive clustering (--bvh-builder ploc).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// The scratch bytes of a pass's scan of n flags (CUB).
size_t PassScanBytes(int n, cudaStream_t st);
// Clusters the leaves (a.cNode[0], a.cLo[0], a.cHi[0]) pass by pass, until one is left or, with the SAH top (top: its
// list), a quarter of the triangles, which go to the list. tempBytes: a.temp's size for CUB. Returns the passes.
int ClusterInPasses(const BuildArrays& a, const PlocTree& tree, size_t tempBytes, const BvhBuildOptions& options,
                    int* top, cudaStream_t st);

}  // namespace tracer::gpu_build
