// @file device_buffer.h: owning device memory (RAII), counted for the peak-memory report.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "tracer/cuda/cuda_check.h"

namespace tracer {

// Counts device bytes held, for the peak-memory report.
size_t& DeviceBytesInUse();
size_t& DeviceBytesPeak();

// Owning device buffer: movable, never implicitly copied, frees without throwing.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n, const char* what = "buffer") { Allocate(n, what); }
  ~DeviceBuffer() { Free(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Free();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }

  void Allocate(size_t n, const char* what = "buffer") {
    Free();
    if (n == 0) return;
    size_t bytes = n * sizeof(T);
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the non-sticky error
      size_t freeB = 0, totalB = 0;
      cudaMemGetInfo(&freeB, &totalB);
      throw CudaError("out of device memory allocating " + std::to_string(bytes) + " bytes for " + what + " (" +
                          std::to_string(freeB >> 20) + " MiB free of " + std::to_string(totalB >> 20) +
                          " MiB); try a smaller --paths-in-flight or image",
                      e, false);
    }
    TRACER_CUDA_CHECK(e);
    n_ = n;
    DeviceBytesInUse() += bytes;
    if (DeviceBytesInUse() > DeviceBytesPeak()) DeviceBytesPeak() = DeviceBytesInUse();
  }
  void Upload(const T* src, size_t n, cudaStream_t s = 0) {
    if (n > n_) throw std::logic_error("DeviceBuffer::Upload past the end");
    if (n) TRACER_CUDA_CHECK(cudaMemcpyAsync(ptr_, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  template <typename V>
  void Upload(const V& v, const char* what = "buffer") {
    if (v.size() > n_) Allocate(v.size(), what);
    Upload(v.data(), v.size());
  }
  void Zero(cudaStream_t s = 0) {
    if (n_) TRACER_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, n_ * sizeof(T), s));
  }
  T* Get() const { return ptr_; }
  size_t Size() const { return n_; }
  size_t Bytes() const { return n_ * sizeof(T); }

 private:
  void Free() noexcept {
    if (ptr_) {
      if (!CudaContextDead()) cudaFree(ptr_);  // errors ignored: destructors never throw
      DeviceBytesInUse() -= n_ * sizeof(T);
    }
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace tracer
