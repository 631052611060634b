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
  return test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), w, h);
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
  const SceneData data = Cornell(1024, 1024);
  RenderOptions o = Options(1024, 1024, 16);
  const RenderResult r = RenderCuda(data, o);
  const long long pool = r.stats.poolPaths;
  EXPECT_GE(pool, 1LL << 21);
  EXPECT_LE(pool, 1LL << 23);
  EXPECT_EQ(pool % (1LL << 20), 0) << pool;
  // What a path slot takes, measured: the peak memory of a 3M-path pool over a 2M one's.
  o.pathsInFlight = 2LL << 20;
  const size_t peak2 = RenderCuda(data, o).stats.peakDeviceBytes;
  o.pathsInFlight = 3LL << 20;
  const size_t peak3 = RenderCuda(data, o).stats.peakDeviceBytes;
  ASSERT_GT(peak3, peak2);
  const double bytesPerPath = static_cast<double>(peak3 - peak2) / (1 << 20);
  // Above its 2M floor the pool fits in a 32nd of the memory, and 1M more would not fit (below its 8M cap) where
  // the total, not the free memory, is what bounds it.
  const double budget = static_cast<double>(totalBytes) / 32;
  if (pool > (1LL << 21)) {
    EXPECT_LE(pool * bytesPerPath, budget) << bytesPerPath << " bytes a path";
  }
  if (pool < (1LL << 23) && budget < freeBytes / 4.0) {
    EXPECT_GT((pool + (1LL << 20)) * bytesPerPath, budget) << bytesPerPath << " bytes a path";
  }
  // A 32nd of 75 GiB or more holds 8M slots of under 300 bytes: the pool of an H100 or H200.
  if (totalBytes >= (75ull << 30) && freeBytes >= totalBytes / 2) {
    EXPECT_EQ(pool, 1LL << 23);
  }
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
