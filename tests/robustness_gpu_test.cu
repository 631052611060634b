// @file robustness_gpu_test.cu: GPU faults answered cleanly (label "gpu"; skips without a device): out of
// device memory falls back to the CPU under --backend auto and fails clearly under --backend cuda; an illegal
// address is reported, the context is treated as dead, and no image is written. The faults are injected
// with TRACER_FAULT_INJECT (src/cuda_renderer.cu), since a healthy GPU produces neither on demand.
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_util.h"
#include "tracer/cuda_renderer.h"

using namespace tracer;
using namespace tracer::test;

namespace {

struct InjectedFault {
  explicit InjectedFault(const char* what) { setenv("TRACER_FAULT_INJECT", what, 1); }
  ~InjectedFault() { unsetenv("TRACER_FAULT_INJECT"); }
};

#define TRACER_REQUIRE_GPU()                                              \
  do {                                                                    \
    std::string why_;                                                     \
    if (!CudaAvailable(why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }

}  // namespace

TEST(GpuFaults, OutOfMemoryFallsBackToTheCpuUnderAuto) {
  TRACER_REQUIRE_GPU();
  InjectedFault fault("oom");
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("out of device memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rendered on cpu"), std::string::npos) << r.output;
  EXPECT_TRUE(FileExists(out));
}

TEST(GpuFaults, OutOfMemoryFailsClearlyUnderBackendCuda) {
  TRACER_REQUIRE_GPU();
  InjectedFault fault("oom");
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2 --backend cuda");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--paths-in-flight"), std::string::npos) << r.output;
  EXPECT_FALSE(FileExists(out));
}

TEST(GpuFaults, IllegalAddressIsReportedAndNothingIsWritten) {
  TRACER_REQUIRE_GPU();
  InjectedFault fault("illegal-address");
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("cudaErrorIllegalAddress"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no longer usable"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rendered on"), std::string::npos) << "a dead context must not fall back silently";
  EXPECT_FALSE(FileExists(out));
}
