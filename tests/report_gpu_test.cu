// @file report_gpu_test.cu: `tracer --profile` and `--benchmark` run to completion on the GPU and write reports
// that follow the documented schema (label "gpu"; skips without a device).
#include <gtest/gtest.h>

#include "report_schema.h"
#include "test_util.h"
#include "tracer/host/backends.h"

using namespace tracer;
using namespace tracer::test;

namespace {
std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }
}  // namespace

TEST(GpuReports, ProfileFollowsTheSchema) {
  std::string why;
  if (!CudaAvailable(why)) GTEST_SKIP() << "no CUDA device: " << why;
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(
      Cornell() + " --profile --width 64 --height 64 --spp 4 --repeats 1 --report " + dir + "/profile.json", 300);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Json j = JsonParser::Parse(ReadFile(dir + "/profile.json"));
  EXPECT_EQ(CheckProfile(j), "");
  EXPECT_EQ(j["width"].number, 64.0);
  EXPECT_NE(r.output.find("ray-state layout"), std::string::npos) << r.output;
}

TEST(GpuReports, BenchmarkFollowsTheSchema) {
  std::string why;
  if (!CudaAvailable(why)) GTEST_SKIP() << "no CUDA device: " << why;
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(ProjectScenesDir() +
                                  "/manylights.obj --benchmark --width 64 --height 48 --spp 4 --repeats 1 --report " +
                                  dir + "/bench.json",
                              300);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Json j = JsonParser::Parse(ReadFile(dir + "/bench.json"));
  EXPECT_EQ(CheckBenchmark(j), "");
  EXPECT_GT(j["emitters"].number, 0.0);
}
