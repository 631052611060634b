// @file pbrt_features_gpu_test.cu: the features of the OBJ scenes on a pbrt-v4 scene, on the GPU (label "gpu"; skips
// without a device): a checkpointed render resumed to the uninterrupted image byte for byte, --trace-rays, and
// --benchmark and --profile with their JSON reports.
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_util.h"
#include "pbrt_features_scene.h"
#include "test_util.h"

namespace tracer {
namespace {

TEST(PbrtFeaturesGpu, CheckpointResumesToTheUninterruptedImage) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const std::string scene = "'" + test::WritePbrtFeaturesScene(dir) + "' --backend cuda --seed 7 -q ";
  ASSERT_EQ(test::RunTracer(scene + "--spp 6 -o " + dir + "/whole.pfm").exitCode, 0);
  ASSERT_EQ(test::RunTracer(scene + "--spp 2 --checkpoint " + dir + "/c.ckpt -o " + dir + "/part.pfm").exitCode, 0);
  const test::CommandResult rest =
      test::RunTracer(scene + "--spp 6 --resume " + dir + "/c.ckpt -o " + dir + "/rest.pfm");
  ASSERT_EQ(rest.exitCode, 0) << rest.output;
  EXPECT_EQ(test::ReadFile(dir + "/rest.pfm"), test::ReadFile(dir + "/whole.pfm"));
  test::RemoveTree(dir);
}

TEST(PbrtFeaturesGpu, TraceRaysBenchmarkAndProfile) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const std::string scene = "'" + test::WritePbrtFeaturesScene(dir) + "' ";
  ASSERT_EQ(test::RunTracer(scene + "--width 64 --height 48 --make-rays diffuse " + dir + "/d.bin").exitCode, 0);
  const test::CommandResult traced =
      test::RunTracer(scene + "--backend cuda --trace-rays " + dir + "/d.bin --repeats 2");
  ASSERT_EQ(traced.exitCode, 0) << traced.output;
  EXPECT_NE(traced.output.find("on cuda"), std::string::npos) << traced.output;
  for (const char* mode : {"--benchmark", "--profile"}) {
    const std::string report = dir + "/" + std::string(mode + 2) + ".json";
    const test::CommandResult r =
        test::RunTracer(scene + mode + " --width 48 --height 32 --spp 2 --repeats 1 --report " + report, 600);
    ASSERT_EQ(r.exitCode, 0) << mode << ": " << r.output;
    const std::string json = test::ReadFile(report);
    EXPECT_NE(json.find("\"samples_per_s\""), std::string::npos) << mode << ": " << json.substr(0, 400);
  }
  test::RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
