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

}  // namespace tracer
