// @file sah_top_wide.h: the SAH top's grid-wide levels (sah_top_wide.cu).
#pragma once
#include <cuda_runtime.h>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// Splits every group of more than kTopWide clusters (the root's, then its children's ...) by the whole grid, a level
// at a time, until none is left; sms: the device's multiprocessors.
void TopWideLevels(const BuildArrays& a, const PlocTree& tree, const TopBuffers& buf, int* parent, int sms,
                   cudaStream_t st);

}  // namespace tracer::gpu_build
