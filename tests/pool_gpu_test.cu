// @file pool_gpu_test.cu: the GPU's automatic path pool (label "gpu"; skips without a device): its size follows the
// device's memory within 2M..8M paths, a render that needs fewer paths gets no more, and the image does not depend
// on the pool (samples are keyed by index, the film holds fixed-point sums).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/scene_loader.h"

using namespace tracer;

namespace {

SceneData Cornell(int w, int h) {
  const Scene scene = LoadScene(test::ProjectScenesDir() + "/cornell.obj");
  const Camera cam = Camera::LookAt(Vec3(0.0f, 1.0f, 3.4f), Vec3(0.0f, 1.0f, 0.0f), Vec3(0, 1, 0), 39.3f, w, h);
  return BuildSceneData(scene, cam, Vec3(0.0f), BvhBuildOptions{});
}

RenderOptions Options(int w, int h, int spp) {
  RenderOptions o;
  o.width = w;
  o.height = h;
  o.spp = spp;
  o.quiet = true;
  return o;
}

}  // namespace

TEST(GpuPool, AutomaticPoolFollowsTheDeviceMemory) {
  TRACER_REQUIRE_GPU();
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&freeBytes, &totalBytes), cudaSuccess);
  // 1024x1024 at 16 spp wants 16M paths, more than any automatic pool.
  const RenderResult r = RenderCuda(Cornell(1024, 1024), Options(1024, 1024, 16));
  const long long pool = r.stats.poolPaths;
  EXPECT_GE(pool, 1LL << 21);
  EXPECT_LE(pool, 1LL << 23);
  EXPECT_EQ(pool % (1LL << 20), 0) << pool;
  // A 32nd of 64 GiB holds 8M paths of a few hundred bytes: the H100's and H200's pool.
  if (totalBytes >= (64ull << 30) && freeBytes >= totalBytes / 2) EXPECT_EQ(pool, 1LL << 23);
  // About 300 bytes a path: the pool's memory is most of the render's.
  EXPECT_GT(r.stats.peakDeviceBytes, static_cast<size_t>(pool) * 200);
}

TEST(GpuPool, SmallRendersGetOnlyThePathsTheyNeed) {
  TRACER_REQUIRE_GPU();
  const RenderResult r = RenderCuda(Cornell(100, 30), Options(100, 30, 3));
  EXPECT_EQ(r.stats.poolPaths, 9024);  // 9000 samples, rounded up to whole warps
}

TEST(GpuPool, ThePoolDoesNotChangeTheImage) {
  TRACER_REQUIRE_GPU();
  const SceneData data = Cornell(512, 512);
  RenderOptions o = Options(512, 512, 32);  // 8M samples: one pool-full with the automatic pool
  const RenderResult automatic = RenderCuda(data, o);
  o.pathsInFlight = automatic.stats.poolPaths / 4;  // the same samples streamed through a quarter of it
  const RenderResult small = RenderCuda(data, o);
  ASSERT_EQ(small.stats.poolPaths, automatic.stats.poolPaths / 4);
  ASSERT_EQ(automatic.film.sum.size(), small.film.sum.size());
  EXPECT_EQ(0, std::memcmp(automatic.film.sum.data(), small.film.sum.data(), small.film.sum.size() * 8));
  EXPECT_EQ(automatic.stats.extensionRays, small.stats.extensionRays);
}
