// @file denoise_gpu_test.cu: --denoise on the GPU against the CPU (label "gpu"; skips without a device): the same
// per-pixel code gives the same image up to rounding (FMA contraction and the device's expf), the regression's tiled
// kernel and its per-pixel twin alike; the GPU film's half-buffers split its film, the path after a GPU render
// (features kept on the device, over the render's own device scene) gives the image and features of the host-fed path
// bit for bit, the features made from the render's kept camera-ray hits are those traced again, and a GPU film saved
// for a checkpoint keeps its odd sums and, resumed, continues them to the uninterrupted film.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "denoise_frames.h"
#include "gpu_test_util.h"
#include "test_util.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/denoise.h"
#include "tracer/host/pass_driver.h"

using namespace tracer;

namespace {

TEST(DenoiseGpu, FiltersGiveTheCpusImage) {
  TRACER_REQUIRE_GPU();
  const DenoiseImages in = test::NoisyBlocksFrame(48, 48, 0.7f, 21);
  for (DenoiseMethod m : {DenoiseMethod::kNfor, DenoiseMethod::kAtrous}) {
    const std::vector<float> cpu = DenoiseCpu(in, m), gpu = DenoiseCuda(in, m);
    ASSERT_EQ(gpu.size(), cpu.size());
    float worst = 0.0f;
    for (size_t i = 0; i < cpu.size(); ++i) worst = std::max(worst, std::fabs(gpu[i] - cpu[i]) / (cpu[i] + 0.01f));
    EXPECT_LT(worst, 1e-3f) << DenoiseMethodName(m);
  }
}

// The regression's tiled kernel (shared memory, one barrier per offset) and its per-pixel twin give the CPU's image up
// to rounding, on a frame with partial tiles at two edges, with and without fireflies (the clamp's kernel), for the
// default window and patch, a smaller window with a larger patch, and a window whose staged tile needs more than 48 KB
// of shared memory (the opt-in launch).
TEST(DenoiseGpu, TiledRegressionGivesThePerPixelKernelsAndTheCpusImage) {
  TRACER_REQUIRE_GPU();
  const DenoiseImages plain = test::NoisyBlocksFrame(53, 37, 0.6f, 9);
  DenoiseImages fireflies = plain;
  test::AddFireflies(fireflies, 60, 100.0f, 17);  // the clamp's kernel at work
  const int shapes[3][2] = {{5, 1}, {3, 2}, {8, 1}};
  const DenoiseImages* frames[] = {&plain, &fireflies};
  for (const DenoiseImages* in : frames)
    for (const auto& shape : shapes) {
      DenoiseSettings s;
      s.nforRadius = shape[0];
      s.nforPatch = shape[1];
      const std::vector<float> cpu = DenoiseCpu(*in, DenoiseMethod::kNfor, 0, s);
      const std::vector<float> tiled = DenoiseCuda(*in, DenoiseMethod::kNfor, s);
      s.nforPerPixel = true;
      const std::vector<float> perPixel = DenoiseCuda(*in, DenoiseMethod::kNfor, s);
      ASSERT_EQ(tiled.size(), cpu.size());
      ASSERT_EQ(perPixel.size(), cpu.size());
      float worstTiled = 0.0f, worstPerPixel = 0.0f;
      for (size_t i = 0; i < cpu.size(); ++i) {
        worstTiled = std::max(worstTiled, std::fabs(tiled[i] - cpu[i]) / (cpu[i] + 0.01f));
        worstPerPixel = std::max(worstPerPixel, std::fabs(perPixel[i] - cpu[i]) / (cpu[i] + 0.01f));
      }
      const char* frame = in == &plain ? "noisy" : "fireflies";
      EXPECT_LT(worstTiled, 1e-3f) << frame << ", radius " << shape[0] << ", patch " << shape[1];
      EXPECT_LT(worstPerPixel, 1e-3f) << frame << ", radius " << shape[0] << ", patch " << shape[1];
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

// DenoiseFrameCuda traces the features into device memory and filters there: the same kernels on the same inputs as
// ComputeFirstHitAovsCuda's features handed to DenoiseCuda, so the same bits; with the half-buffers uploaded or
// resolved from the renderer's film on the device (DeviceFilmOf); over the render's resident scene (DeviceSceneOf),
// which outlives the renderer, as over the scene uploaded again; read back whole or band by band through the film's
// pinned buffer as the filter finishes the bands; and only the asked-for features come back for --aov.
TEST(DenoiseGpu, FramePathGivesTheHostFedPathsImage) {
  TRACER_REQUIRE_GPU();
  // (43 rows: the tiled regression's last band of rows, which the read-back copies as it ends, is a partial tile)
  const SceneData d = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), 48, 43);
  RenderOptions opt = test::QuietRender(48, 43, 8, 6);
  opt.halfBuffers = true;
  PrepareDenoiseCuda(DenoiseMethod::kNfor);  // (loading the kernels first changes nothing below)
  PrepareDenoiseCuda(DenoiseMethod::kAtrous);
  std::unique_ptr<Backend> backend = MakeCudaBackend(d, opt);
  const RenderResult r = RunPasses(opt, *backend, {});
  const std::shared_ptr<DeviceScene> resident = DeviceSceneOf(*backend);
  ASSERT_NE(resident, nullptr);
  DenoiseImages in;
  in.width = opt.width;
  in.height = opt.height;
  in.color = r.rgb;
  ResolveHalves(r.film, in.halfA, in.halfB);
  AovImages features;
  ComputeFirstHitAovsCuda(d, opt, kFirstHitAovs, 4, features);
  in.albedo = features.albedo, in.normal = features.normal, in.position = features.position;
  in.depth = features.depth, in.emission = features.emission;
  for (DenoiseMethod m : {DenoiseMethod::kNfor, DenoiseMethod::kAtrous}) {
    const std::vector<float> hostFed = DenoiseCuda(in, m);
    AovImages aov;
    DenoiseTiming t;
    std::vector<float> uploaded;
    DenoiseFrameCuda(d, nullptr, nullptr, opt, 4, r.sppDone, in, m, kAovAlbedo | kAovDepth, aov, uploaded, &t);
    EXPECT_EQ(uploaded, hostFed) << DenoiseMethodName(m);
    EXPECT_EQ(aov.albedo, features.albedo);
    EXPECT_EQ(aov.depth, features.depth);
    EXPECT_TRUE(aov.normal.empty());
    EXPECT_GT(t.filter, 0.0);
    // The halves and the raw image resolved on the device from the renderer's own film (the host's floats), and the
    // image read back in place through its pinned buffer.
    const DeviceFilmView film = DeviceFilmOf(*backend);
    ASSERT_NE(film.odd, nullptr);
    const DenoiseImages none{};
    AovImages unused;
    std::vector<float> inPlace = r.rgb;
    DenoiseFrameCuda(d, resident.get(), &film, opt, 4, r.sppDone, none, m, 0, unused, inPlace, nullptr);
    EXPECT_EQ(inPlace, hostFed) << DenoiseMethodName(m);
  }
  backend.reset();  // the resident scene outlives its renderer
  AovImages unused;
  std::vector<float> image;
  DenoiseFrameCuda(d, resident.get(), nullptr, opt, 4, r.sppDone, in, DenoiseMethod::kNfor, 0, unused, image, nullptr);
  EXPECT_EQ(image, DenoiseCuda(in, DenoiseMethod::kNfor));
}

// A render asked to keep its camera rays' hits (RenderOptions::firstHitSamples) keeps exactly those of the samples it
// rendered below that count, over several passes, in every GPU variant (persistent camera bounce, binary BVH, naive
// layout, no compaction, sorted rays, adaptive sampling); the first-hit features made from them are the features
// traced again, bit for bit, also where only some samples were kept (the rest traced); and they are read: a kept hit
// changed changes its pixel.
TEST(DenoiseGpu, KeptCameraHitsGiveTheTracedFeatures) {
  TRACER_REQUIRE_GPU();
  const int w = 48, h = 40, pixels = w * h, wanted = 8;
  const SceneData d = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), w, h);
  for (int variant = 0; variant < 8; ++variant) {
    const int spp = variant == 5 ? 3 : (variant == 7 ? 32 : 8);  // 5: samples 3 to 7 not rendered, so traced
    RenderOptions opt = test::QuietRender(w, h, spp, 6);
    opt.firstHitSamples = wanted;
    opt.pathsInFlight = pixels;  // a few samples a pass: several passes
    opt.perRayCameraBounce = variant != 1;
    opt.binaryBvh = variant == 2;
    opt.naiveLayout = variant == 3;
    if (variant == 4) opt.compaction = Compaction::kNone;
    opt.sortRays = variant == 6;
    if (variant == 7) {  // adaptive: every pixel takes the first 4 samples, then some stop
      opt.adaptiveThreshold = 0.5f;
      opt.adaptiveMinSpp = 4;
    }
    std::unique_ptr<Backend> backend = MakeCudaBackend(d, opt);
    const RenderResult r = RunPasses(opt, *backend, {});
    const DeviceFilmView film = DeviceFilmOf(*backend);
    ASSERT_NE(film.firstHits, nullptr) << "variant " << variant;
    ASSERT_EQ(film.firstHitSamples, wanted);
    std::vector<HitRecord> kept(static_cast<size_t>(wanted) * pixels);
    ASSERT_EQ(cudaMemcpy(kept.data(), film.firstHits, kept.size() * sizeof(HitRecord), cudaMemcpyDeviceToHost),
              cudaSuccess);
    int hits = 0, stopped = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      const size_t p = i % pixels;
      const int pixelSpp = r.film.pixelSpp.empty() ? spp : static_cast<int>(r.film.pixelSpp[p]);
      const bool rendered = static_cast<int>(i / pixels) < pixelSpp;
      ASSERT_EQ(kept[i].tri != kHitNotRecorded, rendered) << "variant " << variant << ", entry " << i;
      hits += kept[i].tri >= 0;
      stopped += !rendered && variant == 7;
    }
    EXPECT_GT(hits, std::min(spp, 4) * pixels / 2);  // (the box fills most of the view)
    if (variant == 7) {
      EXPECT_GT(stopped, 0) << "no pixel stopped before 8 samples: the adaptive case is not tested";
    }
    AovImages traced, fromKept;
    ComputeFirstHitAovsCuda(d, opt, kFirstHitAovs, wanted, traced);
    ComputeFirstHitAovsCuda(d, opt, kFirstHitAovs, wanted, fromKept, nullptr, &film);
    EXPECT_EQ(fromKept.albedo, traced.albedo) << "variant " << variant;
    EXPECT_EQ(fromKept.normal, traced.normal) << "variant " << variant;
    EXPECT_EQ(fromKept.position, traced.position) << "variant " << variant;
    EXPECT_EQ(fromKept.depth, traced.depth) << "variant " << variant;
    EXPECT_EQ(fromKept.emission, traced.emission) << "variant " << variant;
    if (variant != 0) continue;
    // Pixel p's first sample made a miss in the kept copy: its albedo averages 7 hits over 8 samples.
    const int p = pixels / 2 + w / 2;
    ASSERT_GE(kept[p].tri, 0);
    kept[p].tri = -1;
    DeviceBuffer<HitRecord> changed;
    changed.Upload(kept, "changed hits");
    DeviceFilmView altered = film;
    altered.firstHits = changed.Get();
    AovImages fromChanged;
    ComputeFirstHitAovsCuda(d, opt, kFirstHitAovs, wanted, fromChanged, nullptr, &altered);
    EXPECT_NE(fromChanged.albedo[3 * p], traced.albedo[3 * p]);
    EXPECT_EQ(fromChanged.albedo[3 * (p + 1)], traced.albedo[3 * (p + 1)]);
  }
}

// The command line on the GPU: --aov's first-hit outputs under --denoise (traced with the denoiser's features) are
// those of a render without it, byte for byte.
TEST(DenoiseGpu, CommandLineFeaturesAreTheAovs) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const std::string args = test::ProjectScenesDir() +
                           "/cornell.obj --backend cuda --width 40 --height 32 --spp 8 --seed 3 -q --aov albedo,depth ";
  ASSERT_EQ(test::RunTracer(args + "-o " + dir + "/plain.pfm").exitCode, 0);
  const test::CommandResult dn = test::RunTracer(args + "--denoise -o " + dir + "/dn.pfm");
  ASSERT_EQ(dn.exitCode, 0) << dn.output;
  for (const char* layer : {"albedo", "depth"}) {
    const std::string a = test::ReadFile(dir + "/plain." + layer + ".pfm");
    EXPECT_FALSE(a.empty()) << layer;
    EXPECT_EQ(test::ReadFile(dir + "/dn." + layer + ".pfm"), a) << layer;
  }
  test::RemoveTree(dir);
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
