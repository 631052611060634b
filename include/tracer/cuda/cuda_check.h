// @file cuda_check.h: CUDA errors with file:line, and the launch check (host code under nvcc).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "tracer/host/device_error.h"

namespace tracer {

// Thrown for CUDA errors. `sticky` marks errors that leave the context unusable (illegal address, launch
// timeout, ...): after one of those, no further CUDA call is made.
struct CudaError : DeviceError {
  cudaError_t code;
  CudaError(const std::string& what, cudaError_t c, bool isSticky)
      : DeviceError(what, c == cudaErrorMemoryAllocation, isSticky), code(c) {}
};

bool IsStickyCudaError(cudaError_t e);
// Set once a sticky error was seen: from then on no CUDA call is made (buffers are leaked, not freed).
bool& CudaContextDead();
[[noreturn]] void ThrowCudaError(cudaError_t e, const char* expr, const char* file, int line);

// Keeps the error the call returned (not cudaGetLastError()) and reports where it happened.
#define TRACER_CUDA_CHECK(expr)                                                                       \
  do {                                                                                                \
    cudaError_t tracer_err_ = (expr);                                                                 \
    if (tracer_err_ != cudaSuccess) ::tracer::ThrowCudaError(tracer_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a launch: the launch error, and in debug builds (TRACER_SYNC_LAUNCHES) the execution error too.
#if defined(TRACER_SYNC_LAUNCHES)
#define TRACER_CHECK_LAUNCH(name)               \
  do {                                          \
    TRACER_CUDA_CHECK(cudaGetLastError());      \
    TRACER_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#else
#define TRACER_CHECK_LAUNCH(name) TRACER_CUDA_CHECK(cudaGetLastError())
#endif

// Grid for n threads with the given block size.
inline unsigned GridFor(size_t n, unsigned block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace tracer
