// @file sah_top.h: the SAH top (sah_top.cu, sah_top_wide.cu): whether it runs, its arrays, and its build.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// Whether the SAH top runs for n triangles.
bool SahTopOn(size_t n);
// The places of TopBig's queue (ints of a.topQueues.ready) for n triangles.
size_t TopReadySize(size_t n);

// The scratch bytes of the scan of n flags that compacts H-PLOC's clusters for the top (CUB).
size_t TopScanBytes(int n, cudaStream_t st);

// The SAH top's arrays that live in arrays of the build the clustering is done with.
struct TopScratch {
  TopBuffers buf;
  int *parent, *arrive;
};
// Before the clustering: the top's arrays, and their start.
TopScratch PrepareTop(const BuildArrays& a, int n, bool passes, cudaStream_t st);
// After it: the tree above the clusters handed over (by PLOC's passes: passes).
void BuildTop(const BuildArrays& a, const PlocTree& tree, const TopScratch& top, const BvhBuildOptions& options,
              bool passes, size_t tempBytes, cudaStream_t st);

}  // namespace tracer::gpu_build
