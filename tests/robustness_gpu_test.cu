// @file robustness_gpu_test.cu: GPU faults answered cleanly (label "gpu"; skips without a device): out of
// device memory falls back to the CPU under --backend auto and fails clearly under --backend cuda; an illegal
// address is reported, the context is treated as dead, and no image is written. The faults are injected
// with TRACER_FAULT_INJECT (src/cuda/cuda_backend.cu), since a healthy GPU produces neither on demand.
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/host/backends.h"

using namespace tracer;
using namespace tracer::test;

namespace {

std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }

}  // namespace

TEST(GpuFaults, OutOfMemoryFallsBackToTheCpuUnderAuto) {
  TRACER_REQUIRE_GPU();
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r =
      RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2", 120, "TRACER_FAULT_INJECT=oom");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("out of device memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rendered on cpu"), std::string::npos) << r.output;
  EXPECT_TRUE(FileExists(out));
}

TEST(GpuFaults, OutOfMemoryFailsClearlyUnderBackendCuda) {
  TRACER_REQUIRE_GPU();
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2 --backend cuda", 120,
                              "TRACER_FAULT_INJECT=oom");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--paths-in-flight"), std::string::npos) << r.output;
  EXPECT_FALSE(FileExists(out));
}

TEST(GpuFaults, IllegalAddressIsReportedAndNothingIsWritten) {
  TRACER_REQUIRE_GPU();
  std::string out = MakeTempDir() + "/x.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 16 --spp 2", 120,
                              "TRACER_FAULT_INJECT=illegal-address");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("cudaErrorIllegalAddress"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no longer usable"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rendered on"), std::string::npos) << "a dead context must not fall back silently";
  EXPECT_FALSE(FileExists(out));
}
