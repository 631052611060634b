// @file gpu_test_util.h: what the GPU tests (label "gpu") share: skipping cleanly without a device, setting the
// builder's measuring knobs for a while, and what the GPU BVH builder's tests share (a build's trees and report,
// both clusterings, comparing bytes).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tracer/host/backends.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/scene_data.h"

// Skips the current test, with the reason, when no CUDA device and driver are usable.
#define TRACER_REQUIRE_GPU()                                                        \
  do {                                                                              \
    std::string why_;                                                               \
    if (!::tracer::CudaAvailable(why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

namespace tracer::test {

// Sets an environment variable for its lifetime (the builder's measuring knobs, host/knobs.h).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// A GPU build's trees and report.
struct Built {
  Bvh binary;
  WideBvh wide;
  BvhBuildReport report;
};

// The GPU builder (H-PLOC) and its naive twin (PLOC's passes): the builder tests check every property for both.
struct GpuBuilder {
  const char* name;
  BvhBuilderFn fn;
};
inline const GpuBuilder kGpuBuilders[] = {{"H-PLOC", &BuildBvhsOnGpu}, {"PLOC passes", &BuildBvhsOnGpuInPasses}};

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Runs f with the SAH top as by default (off below 2^20 triangles) and on (TRACER_SAH_TOP=1), with words to name each.
template <typename F>
void WithAndWithoutSahTop(F f) {
  f("");
  const ScopedEnv on("TRACER_SAH_TOP", "1");
  f(", SAH top");
}

}  // namespace tracer::test
