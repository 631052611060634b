// @file kernel_common.cuh: small helpers for kernels: the thread index and the helper kernels' block size.
#pragma once
#include "tracer/core/queue.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer {

constexpr unsigned kBlock = 128;  // threads per block of the helper kernels

TRACER_DEVICE int ThreadIndex() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

}  // namespace tracer
