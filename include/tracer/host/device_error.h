// @file device_error.h: errors of a device backend, as plain C++ (so code that picks a backend needs no
// CUDA header): whether the device ran out of memory (the context stays usable: fall back to the CPU) and
// whether the error is sticky (the context is lost: make no further device call).
#pragma once
#include <stdexcept>
#include <string>

namespace tracer {

struct DeviceError : std::runtime_error {
  bool outOfMemory;
  bool sticky;
  DeviceError(const std::string& what, bool oom, bool isSticky)
      : std::runtime_error(what), outOfMemory(oom), sticky(isSticky) {}
};

// Why no GPU is usable, in a user's words, from CudaAvailable's "cudaErrorName: text": the error's name is for
// developers, and "CUDA driver version is insufficient" on a machine without a GPU reads like a fault to fix.
inline std::string PlainNoGpuReason(const std::string& cudaWhy) {
  const auto has = [&cudaWhy](const char* name) { return cudaWhy.find(name) != std::string::npos; };
  if (has("cudaErrorInsufficientDriver")) return "no NVIDIA driver, or one older than this build's CUDA needs";
  if (has("cudaErrorNoDevice") || has("no CUDA device found")) return "no NVIDIA GPU found";
  if (has("cudaErrorDevicesUnavailable")) return "the GPUs are busy or in exclusive use";
  const size_t colon = cudaWhy.find(": ");
  return cudaWhy.compare(0, 9, "cudaError") == 0 && colon != std::string::npos ? cudaWhy.substr(colon + 2) : cudaWhy;
}

}  // namespace tracer
