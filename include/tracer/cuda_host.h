// @file cuda_host.h: CUDA error checking with file:line, and RAII device memory (host code under nvcc).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace tracer {

// Thrown for CUDA errors. `sticky` marks errors that leave the context unusable (illegal address, launch
// timeout, ...): after one of those, no further CUDA call is made.
struct CudaError : std::runtime_error {
  cudaError_t code;
  bool sticky;
  CudaError(const std::string& what, cudaError_t c, bool s) : std::runtime_error(what), code(c), sticky(s) {}
};

bool IsStickyCudaError(cudaError_t e);
// Set once a sticky error was seen: from then on no CUDA call is made (buffers are leaked, not freed).
bool& CudaContextDead();
[[noreturn]] void ThrowCudaError(cudaError_t e, const char* expr, const char* file, int line);

// Keeps the error the call returned (not cudaGetLastError()) and reports where it happened.
#define TRACER_CUDA_CHECK(expr)                                                   \
  do {                                                                            \
    cudaError_t tracer_err_ = (expr);                                             \
    if (tracer_err_ != cudaSuccess) ::tracer::ThrowCudaError(tracer_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a launch: the launch error, and in debug builds (TRACER_SYNC_LAUNCHES) the execution error too.
#if defined(TRACER_SYNC_LAUNCHES)
#define TRACER_CHECK_LAUNCH(name)                                        \
  do {                                                                   \
    TRACER_CUDA_CHECK(cudaGetLastError());                               \
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());                          \
  } while (0)
#else
#define TRACER_CHECK_LAUNCH(name) TRACER_CUDA_CHECK(cudaGetLastError())
#endif

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

// Grid for n threads with the given block size.
inline unsigned GridFor(size_t n, unsigned block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace tracer
