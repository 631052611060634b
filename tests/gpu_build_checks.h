// @file gpu_build_checks.h: what the GPU BVH builder's tests share (bvh_build_gpu_test.cu, split_top_gpu_test.cu): a
// build's trees and report, byte-for-byte comparison, and an environment variable set for a scope (the builder's
// knobs, host/knobs.h).
#pragma once
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer::test {

struct Built {
  Bvh binary;
  WideBvh wide;
  BvhBuildReport report;
};

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Sets an environment variable for its lifetime, and unsets it after (none of the knobs is set outside the tests).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace tracer::test
