// @file cuda_check.cu: CUDA error classification and reporting, the device-memory counters, and the
// device probe.
#include <string>

#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/backends.h"

namespace tracer {

bool IsStickyCudaError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
      return true;
    default:
      return false;
  }
}
bool& CudaContextDead() {
  static bool dead = false;
  return dead;
}
void ThrowCudaError(cudaError_t e, const char* expr, const char* file, int line) {
  bool sticky = IsStickyCudaError(e);
  if (sticky) CudaContextDead() = true;
  // A non-sticky error stays CUDA's last error until read: cleared, so that the next launch check
  // (cudaGetLastError) does not report it again after the caller has handled it (a fallback, say).
  if (!sticky) (void)cudaGetLastError();
  std::string msg = std::string(file) + ":" + std::to_string(line) + " " + expr + ": " + cudaGetErrorName(e) + ": " +
                    cudaGetErrorString(e);
  if (sticky) msg += " (the CUDA context is no longer usable)";
  throw CudaError(msg, e, sticky);
}
size_t& DeviceBytesInUse() {
  static size_t n = 0;
  return n;
}
size_t& DeviceBytesPeak() {
  static size_t n = 0;
  return n;
}

int UseCudaDevice(int localRank) {
  int n = 0;
  TRACER_CUDA_CHECK(cudaGetDeviceCount(&n));
  const int device = localRank % (n > 0 ? n : 1);
  TRACER_CUDA_CHECK(cudaSetDevice(device));
  TRACER_CUDA_CHECK(cudaFree(nullptr));  // creates the context here, not at the first allocation
  return device;
}

bool CudaAvailable(std::string& why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return false;
  }
  if (n == 0) {
    why = "no CUDA device found";
    return false;
  }
  return true;
}

}  // namespace tracer
