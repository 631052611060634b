// @file raii.h: owners of CUDA runtime objects: a stream, events, and pinned host memory. Each frees in its
// destructor without throwing, and makes no CUDA call once the context is lost (CudaContextDead).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "tracer/cuda/cuda_check.h"

namespace tracer {

class CudaStream {
 public:
  CudaStream() { TRACER_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (s_ && !CudaContextDead()) cudaStreamDestroy(s_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t Get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDefault) { TRACER_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~CudaEvent() {
    if (e_ && !CudaContextDead()) cudaEventDestroy(e_);
  }
  CudaEvent(CudaEvent&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  cudaEvent_t Get() const { return e_; }
  void Record(cudaStream_t s) { TRACER_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void Synchronize() { TRACER_CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Milliseconds from `start` to this event (both recorded and complete).
  float MsSince(const CudaEvent& start) const {
    float ms = 0.0f;
    TRACER_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Page-locked host memory of n T's (for asynchronous and faster copies); empty until Allocate.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t n) { Allocate(n); }
  ~PinnedBuffer() { Free(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void Allocate(size_t n) {
    Free();
    TRACER_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    n_ = n;
  }
  T* Get() const { return p_; }
  size_t Size() const { return n_; }

 private:
  void Free() noexcept {
    if (p_ && !CudaContextDead()) cudaFreeHost(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace tracer
