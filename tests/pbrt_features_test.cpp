// @file pbrt_features_test.cpp: the features that the OBJ scenes have, run on a pbrt-v4 scene from the command line
// (CPU): a checkpointed render resumed to the uninterrupted image byte for byte, --aov's first-hit outputs, and
// --make-rays / --trace-rays with a hit file. (The GPU side, with --profile and --benchmark: pbrt_features_gpu_test.cu;
// MPI: Mpi.PbrtSceneDefaultsReachEveryRank.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pbrt_features_scene.h"
#include "test_util.h"
#include "tracer/host/image_io.h"
#include "tracer/host/ray_file.h"

namespace tracer {
namespace {

TEST(PbrtFeatures, CheckpointResumesToTheUninterruptedImage) {
  const std::string dir = test::MakeTempDir();
  const std::string scene = "'" + test::WritePbrtFeaturesScene(dir) + "' --backend cpu --seed 7 -q ";
  ASSERT_EQ(test::RunTracer(scene + "--spp 6 -o " + dir + "/whole.pfm").exitCode, 0);
  const test::CommandResult part =
      test::RunTracer(scene + "--spp 2 --checkpoint " + dir + "/c.ckpt -o " + dir + "/part.pfm");
  ASSERT_EQ(part.exitCode, 0) << part.output;
  const test::CommandResult rest =
      test::RunTracer(scene + "--spp 6 --resume " + dir + "/c.ckpt -o " + dir + "/rest.pfm");
  ASSERT_EQ(rest.exitCode, 0) << rest.output;
  const std::string whole = test::ReadFile(dir + "/whole.pfm");
  EXPECT_FALSE(whole.empty());
  EXPECT_EQ(test::ReadFile(dir + "/rest.pfm"), whole);
  EXPECT_NE(test::ReadFile(dir + "/part.pfm"), whole);
  test::RemoveTree(dir);
}

// The albedo seen at the image's centre is the copper sphere's (a conductor's albedo is its reflectance: reddish),
// below and left of it the floor's diffuse reflectance (0.6, 0.5, 0.4).
TEST(PbrtFeatures, FirstHitOutputs) {
  const std::string dir = test::MakeTempDir();
  const test::CommandResult r = test::RunTracer("'" + test::WritePbrtFeaturesScene(dir) +
                                                "' --backend cpu -q --aov albedo,depth -o " + dir + "/a.pfm");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  int w = 0, h = 0;
  const std::vector<float> albedo = ReadPfm(dir + "/a.albedo.pfm", w, h);
  ASSERT_EQ(w, 32);
  ASSERT_EQ(h, 24);
  auto at = [&](int x, int y, int c) { return albedo[(static_cast<size_t>(y) * w + x) * 3 + c]; };
  EXPECT_NEAR(at(8, 20, 0), 0.6f, 0.02f);
  EXPECT_NEAR(at(8, 20, 1), 0.5f, 0.02f);
  EXPECT_NEAR(at(8, 20, 2), 0.4f, 0.02f);
  EXPECT_GT(at(16, 15, 0), at(16, 15, 2) + 0.2f) << "copper reflects more red than blue";
  int dw = 0, dh = 0;
  const std::vector<float> depth = ReadPfm(dir + "/a.depth.pfm", dw, dh);
  ASSERT_EQ(depth.size(), static_cast<size_t>(w) * h * 3);  // (PFM depth is written as grey RGB)
  EXPECT_GT(depth[0], 3.0f);  // the top-left corner sees the far wall, beyond the room's front at 3 units
  test::RemoveTree(dir);
}

// --make-rays writes the scene's benchmark rays; --trace-rays traces them and the hit file names a triangle for the
// rays that hit (the benchmark camera stands inside the room, whose front is open: most rays hit).
TEST(PbrtFeatures, MakeAndTraceRays) {
  const std::string dir = test::MakeTempDir();
  const std::string scene = "'" + test::WritePbrtFeaturesScene(dir) + "' ";
  const test::CommandResult made =
      test::RunTracer(scene + "--width 64 --height 48 --make-rays primary " + dir + "/p.bin");
  ASSERT_EQ(made.exitCode, 0) << made.output;
  const test::CommandResult traced =
      test::RunTracer(scene + "--backend cpu --trace-rays " + dir + "/p.bin --hits " + dir + "/h.bin --repeats 1");
  ASSERT_EQ(traced.exitCode, 0) << traced.output;
  const std::vector<RayRecord> rays = ReadRayFile(dir + "/p.bin");
  const std::vector<HitFileRecord> hits = ReadHitFile(dir + "/h.bin");
  ASSERT_EQ(hits.size(), rays.size());
  ASSERT_FALSE(hits.empty());
  size_t hit = 0;
  for (const HitFileRecord& h : hits) hit += h.tri >= 0 && h.t > 0.0f;
  EXPECT_GT(hit, hits.size() / 2) << "the benchmark camera looks at the scene's bounds";
  test::RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
