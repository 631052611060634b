// @file denoise_gpu_test.cu: --denoise on the GPU against the CPU (label "gpu"; skips without a device): the same
// per-pixel code gives the same image up to rounding (FMA contraction and the device's expf), and the GPU film's
// half-buffers are the CPU's bit for bit; a GPU film saved for a checkpoint keeps its odd sums, and resumed continues
// them to the uninterrupted film.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "denoise_frames.h"
#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/denoise.h"

using namespace tracer;

namespace {

TEST(DenoiseGpu, FiltersGiveTheCpusImage) {
  TRACER_REQUIRE_GPU();
  test::FrameLayout layout;
  layout.box = layout.background = true;
  auto albedo = [](int x, int y) { return Vec3(0.3f + 0.02f * static_cast<float>((x / 5 + y / 7) % 20), 0.5f, 0.4f); };
  DenoiseImages in = test::MakeFrame(layout, albedo, [&](int x, int y) { return albedo(x, y) * 1.3f; });
  test::AddNoise(in, 0.7f, 21);
  for (DenoiseMethod m : {DenoiseMethod::kNfor, DenoiseMethod::kAtrous}) {
    const std::vector<float> cpu = DenoiseCpu(in, m), gpu = DenoiseCuda(in, m);
    ASSERT_EQ(gpu.size(), cpu.size());
    float worst = 0.0f;
    for (size_t i = 0; i < cpu.size(); ++i) worst = std::max(worst, std::fabs(gpu[i] - cpu[i]) / (cpu[i] + 0.01f));
    EXPECT_LT(worst, 1e-3f) << DenoiseMethodName(m);
  }
}

// The GPU's odd half is a part of its film, holding about the odd samples' share, and keeping it changes nothing in
// the film itself. (The GPU's film is not the CPU's bit for bit: the two round differently, so they agree in
// distribution, which GpuAgreement checks.)
TEST(DenoiseGpu, HalfBuffersSplitTheGpusFilmAndLeaveItAsItWas) {
  TRACER_REQUIRE_GPU();
  const SceneData d = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), 32, 32);
  RenderOptions opt = test::QuietRender(32, 32, 7, 6);
  const RenderResult plain = RenderCuda(d, opt);
  opt.halfBuffers = true;
  const RenderResult gpu = RenderCuda(d, opt);
  EXPECT_EQ(gpu.film.sum, plain.film.sum);
  ASSERT_EQ(gpu.film.odd.size(), gpu.film.sum.size());
  double odd = 0.0, all = 0.0;
  for (size_t i = 0; i < gpu.film.sum.size(); ++i) {
    ASSERT_LE(gpu.film.odd[i], gpu.film.sum[i]) << "value " << i;
    odd += static_cast<double>(gpu.film.odd[i]);
    all += static_cast<double>(gpu.film.sum[i]);
  }
  // Samples 1, 3 and 5 of 0..6: 3/7 of the light, within the noise of 7 samples of 1024 pixels.
  ASSERT_GT(all, 0.0);
  EXPECT_NEAR(odd / all, 3.0 / 7.0, 0.05);
}

// The film a checkpoint saves after a pass has the odd sums, and a resumed render uploads them to the GPU's odd film:
// it ends with the uninterrupted render's film and odd sums bit for bit (the GPU's own, each sample's arithmetic the
// same whichever pass takes it).
TEST(DenoiseGpu, CheckpointedHalfBuffersResumeToTheUninterruptedFilm) {
  TRACER_REQUIRE_GPU();
  const SceneData d = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), 32, 32);
  RenderOptions opt = test::QuietRender(32, 32, 12, 6);
  opt.halfBuffers = true;
  opt.pathsInFlight = 32 * 32;  // a few samples a pass: several passes
  const RenderResult whole = RenderCuda(d, opt);
  std::vector<HostFilm> saved;
  RenderOptions periodic = opt;
  periodic.checkpointSeconds = 0.0;
  periodic.checkpoint = [&saved](const HostFilm& film) { saved.push_back(film); };
  RenderCuda(d, periodic);
  ASSERT_GE(saved.size(), 2u);
  ASSERT_LT(saved[0].sppDone, 12);
  for (const HostFilm& f : saved) ASSERT_EQ(f.odd.size(), f.sum.size()) << "at " << f.sppDone << " spp";
  EXPECT_EQ(saved.back().odd, whole.film.odd);
  RenderOptions resumed = opt;
  resumed.resume = &saved[0];
  const RenderResult rest = RenderCuda(d, resumed);
  EXPECT_EQ(rest.film.sum, whole.film.sum);
  EXPECT_EQ(rest.film.odd, whole.film.odd) << "the odd film continues from the checkpoint's";
}

}  // namespace
