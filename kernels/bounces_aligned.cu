// @file bounces_aligned.cu: the wavefront stage kernels (core/stages.h run by cuda/stage_kernel.cuh) for the
// aligned layout, every compaction mode and load path. One file per layout so the two compile in parallel.
#include "tracer/cuda/stage_kernel.cuh"

namespace tracer {

TRACER_DEFINE_CUDA_BOUNCES(AlignedLayout)

}  // namespace tracer
