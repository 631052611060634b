// @file gpu_test_util.h: what the GPU tests (label "gpu") share: skipping cleanly without a device.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "tracer/host/backends.h"

// Skips the current test, with the reason, when no CUDA device and driver are usable.
#define TRACER_REQUIRE_GPU()                                                        \
  do {                                                                              \
    std::string why_;                                                               \
    if (!::tracer::CudaAvailable(why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)
