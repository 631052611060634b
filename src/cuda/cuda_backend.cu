// @file cuda_backend.cu: the CUDA backend: uploads the scene, holds the path pool in either memory layout,
// and runs each pass as the stage kernels of core/stages.h (cuda/stage_kernel.cuh), with the queue counters
// kept on the device.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/device_tile_guide.h"
#include "tracer/cuda/stage_kernel.cuh"
#include "tracer/host/backends.h"
#include "tracer/host/env_guide.h"
#include "tracer/host/knobs.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/tile_guide.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

// Test hook: TRACER_FAULT_INJECT=oom makes the path pool's allocation fail as if the device were full,
// =illegal-address launches a kernel that writes through a null pointer, and =ipc-open makes the copy of another
// process's device scene fail as where two GPUs have no peer access (a real CUDA error: the driver is asked to open
// a handle of nothing), so that the handling of each can be tested on a real GPU (tests/robustness_gpu_test.cu,
// tests/mpi_gpu_test.cpp). Unset in normal use.
std::string InjectedFault() { return knobs::FaultInject(); }
__global__ void FaultKernel(int* p) { *p = 1; }

__global__ void MarkHitsNotRecordedKernel(HitRecord* hits, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) hits[i] = HitRecord{0.0f, 0.0f, 0.0f, kHitNotRecorded};
}

// How many of RenderOptions::firstHitSamples the device keeps: all of them while they fit in 2 GiB and a quarter of
// the free memory (16 bytes a camera ray), else fewer (the rest are traced again when the features are computed).
uint32_t FirstHitSamplesKept(int wanted, size_t pixels) {
  if (wanted <= 0 || pixels == 0) return 0;
  size_t freeBytes = 0, totalBytes = 0;
  TRACER_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const size_t budget = std::min(size_t{2} << 30, freeBytes / 4);
  return static_cast<uint32_t>(std::min<size_t>(static_cast<size_t>(wanted), budget / (pixels * sizeof(HitRecord))));
}

// ---- path pool in either layout ------------------------------------------------------------------------------
template <class L>
struct PathStorage;
template <>
struct PathStorage<AlignedLayout> {
  DeviceBuffer<Float4> a;
  DeviceBuffer<Int4> b;
  void Allocate(size_t n) {
    a.Allocate(n, "path throughput");
    b.Allocate(n, "path info");
  }
  AlignedLayout::PathBuffers View() const { return {a.Get(), b.Get()}; }
};
template <>
struct PathStorage<NaiveLayout> {
  DeviceBuffer<NaivePath> p;
  void Allocate(size_t n) { p.Allocate(n, "path state"); }
  NaiveLayout::PathBuffers View() const { return {p.Get()}; }
};

// The automatic GPU path pool (--paths-in-flight 0): as many paths as a 32nd of the device's memory holds (and a
// quarter of what is free), rounded down to a multiple of 1M, at least 2M and at most 8M. Larger pools launch
// fewer, larger stage kernels and drain the pool fewer times a frame: 8M paths against 2M rendered the benchmark
// suite 12-46% faster on an H200 (docs/PERFORMANCE.md), for 292 bytes a path slot (2.3 GiB at 8M).
constexpr long long kMinAutoPool = 1LL << 21, kMaxAutoPool = 1LL << 23, kAutoPoolStep = 1LL << 20;
long long AutoPoolPaths(size_t bytesPerPath) {
  size_t freeBytes = 0, totalBytes = 0;
  TRACER_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const long long fits = static_cast<long long>(std::min(totalBytes / 32, freeBytes / 4) / bytesPerPath);
  return std::clamp(fits / kAutoPoolStep * kAutoPoolStep, kMinAutoPool, kMaxAutoPool);
}

template <class L>
struct DeviceWave {
  // Device memory a path slot takes (the buffers below) at most, with compacted queues or without: it counts the
  // second shadow buffer wherever one may be allocated (renders timed stage by stage run no stage aside and
  // allocate one).
  static size_t BytesPerPath(bool compact) {
    const size_t copies = compact ? 2 : 1;
    return copies * (sizeof(typename L::RayT) + L::kPathBytes + sizeof(typename L::ShadowT)) +
           sizeof(typename L::HitT) + (compact ? sizeof(int32_t) * (kNumMaterialClasses + 1) : sizeof(int8_t));
  }

  DeviceBuffer<typename L::RayT> rays[2];
  PathStorage<L> paths[2];
  DeviceBuffer<typename L::HitT> hits;
  DeviceBuffer<typename L::ShadowT> shadows[2];
  DeviceBuffer<int32_t> queues;
  DeviceBuffer<int8_t> hitClass;
  DeviceBuffer<WaveCounters> counters;
  DeviceBuffer<unsigned long long> live;
  WaveView<L> view{};

  // aside: a bounce's shadow stage runs beside the next bounce (CudaExecutor's side stream), so the two bounces'
  // shadow rays need a buffer each; else both views point at one.
  DeviceWave(int pool, bool compact, bool aside) {
    for (int b = 0; b < 2; ++b) {
      // Without compaction everything stays in buffer 0.
      if (b == 0 || compact) {
        rays[b].Allocate(pool, "rays");
        paths[b].Allocate(pool);
      }
      view.rays[b] = rays[b].Get();
      view.paths[b] = paths[b].View();
    }
    hits.Allocate(pool, "hits");
    for (int b = 0; b < (aside ? 2 : 1); ++b) shadows[b].Allocate(pool, "shadow rays");
    if (compact)
      queues.Allocate(static_cast<size_t>(pool) * (kNumMaterialClasses + 1), "queues");
    else
      hitClass.Allocate(pool, "hit classes");
    counters.Allocate(1, "counters");
    live.Allocate(kMaxStatBounces, "statistics");  // zeroed on the render's stream (CudaBackend::Allocate)
    view.hits = hits.Get();
    view.shadows[0] = shadows[0].Get();
    view.shadows[1] = aside ? shadows[1].Get() : shadows[0].Get();
    view.classQueue = queues.Get();
    view.hitClass = hitClass.Get();
    view.counters = counters.Get();
    view.livePerBounce = nullptr;
    view.pool = pool;
  }
};

// What MakeCudaBackendWithoutScene's backend is besides a Backend.
class SceneUploader {
 public:
  virtual ~SceneUploader() = default;
  virtual void UploadScene(const SceneData& data) = 0;
  virtual void ImportScene(const std::vector<unsigned char>& exported) = 0;
  virtual DeviceSceneOffer ExportScene() const = 0;
  virtual std::shared_ptr<DeviceScene> Scene() const = 0;
  virtual DeviceFilmView Film() const = 0;
};

template <class L>
class CudaBackend final : public Backend, public SceneUploader {
 public:
  // Without the scene: UploadScene must come before the first pass (Allocate may come before it).
  explicit CudaBackend(const RenderOptions& opt)
      : opt_(opt), timer_(opt.collectStats, stream_.Get()), pinnedTotals_(1) {
    int dev = 0, devices = 0;
    TRACER_CUDA_CHECK(cudaGetDevice(&dev));
    TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop_, dev));
    TRACER_CUDA_CHECK(cudaGetDeviceCount(&devices));
    // With several GPUs visible (MPI ranks each take one), the name says which.
    name_ = std::string("cuda (") + prop_.name + (devices > 1 ? ", device " + std::to_string(dev) : "") + ")";
    DeviceBytesPeak() = DeviceBytesInUse();
  }
  CudaBackend(const SceneData& data, const RenderOptions& opt) : CudaBackend(opt) { UploadScene(data); }

  void UploadScene(const SceneData& data) override {
    const Stopwatch setupClock;
    RequireBvh(data, opt_.binaryBvh);
    UseScene(std::make_shared<DeviceScene>(data));
    if (opt_.lightSampling == LightSampling::kTiles && WantsTileGuide(data))
      guide_ = std::make_unique<DeviceTileGuide>(*scene_, data, opt_, stream_.Get());
    if (opt_.envSampling == EnvSampling::kGuided && data.env.params.pick > 0.0f) UploadEnvGuide(data);
    setupSeconds_ = setupClock.Seconds();
  }
  // The tile guide is built from the host's arrays: a render with it uploads them instead (UploadScene).
  void ImportScene(const std::vector<unsigned char>& exported) override {
    const Stopwatch setupClock;
    if (opt_.lightSampling == LightSampling::kTiles || opt_.envSampling == EnvSampling::kGuided)
      throw std::logic_error("ImportScene: the tile and environment guides need the host's scene (UploadScene)");
    if (InjectedFault() == "ipc-open") {
      cudaIpcMemHandle_t nothing{};
      void* mapped = nullptr;
      TRACER_CUDA_CHECK(cudaIpcOpenMemHandle(&mapped, nothing, cudaIpcMemLazyEnablePeerAccess));
    }
    std::shared_ptr<DeviceScene> scene = std::make_shared<DeviceScene>(exported, stream_.Get());
    RequireBvh(scene->view.wide.nodes != nullptr, opt_.binaryBvh);
    UseScene(std::move(scene));
    setupSeconds_ = setupClock.Seconds();
  }
  DeviceSceneOffer ExportScene() const override {
    if (!scene_) throw std::logic_error("ExportScene before the scene was uploaded");
    return DeviceSceneOffer{scene_->Export(), scene_};
  }
  std::shared_ptr<DeviceScene> Scene() const override { return scene_; }
  DeviceFilmView Film() const override {
    return DeviceFilmView{opt_.width,        opt_.height,
                          film_.Get(),       opt_.halfBuffers ? oddFilm_.Get() : nullptr,
                          pinnedFilm_.Get(), pinnedFilm_.Size() * sizeof(unsigned long long),
                          firstHits_.Get(),  static_cast<int>(firstHitSamples_)};
  }

  std::string Name() const override { return name_; }
  // The automatic pool is sized once, by the default render's slot (the aligned layout, compacted: the largest), so
  // that the naive twins render with the same pool and a backend asked again (an MPI rank prepares its pool before
  // the scene arrives) gets the same answer.
  PoolPolicy Pool() const override {
    if (autoPool_ == 0) autoPool_ = AutoPoolPaths(DeviceWave<AlignedLayout>::BytesPerPath(true));
    return PoolPolicy{autoPool_, true, 32};
  }

  // Again with the same pool (after MakeCudaBackendWithoutScene) it only clears the film and the totals.
  void Allocate(long long pool) override {
    if (InjectedFault() == "oom")
      throw CudaError("out of device memory allocating " +
                          std::to_string(pool * static_cast<long long>(DeviceWave<L>::BytesPerPath(
                                                    opt_.compaction != Compaction::kNone))) +
                          " bytes for the path pool "
                          "(injected by TRACER_FAULT_INJECT); try a smaller --paths-in-flight or image",
                      cudaErrorMemoryAllocation, false);
    const bool compact = opt_.compaction != Compaction::kNone;
    const size_t filmValues = static_cast<size_t>(opt_.width) * opt_.height * 3;
    if (!wave_ || pool != pool_) {
      pool_ = pool;
      wave_ = std::make_unique<DeviceWave<L>>(static_cast<int>(pool), compact, ShadowsAside());
      if ((ShadowsAside() || ShadingInLanes()) && !aside_)
        aside_ = std::make_unique<AsideStream>(ShadowsAside(), ShadingInLanes());
      // On the render's stream, which does not wait for the default one.
      wave_->live.Zero(stream_.Get());
      if (opt_.collectStats) wave_->view.livePerBounce = wave_->live.Get();
      wave_->view.collectStats = opt_.collectStats ? 1 : 0;
      film_.Allocate(filmValues, "film");
      if (opt_.halfBuffers) oddFilm_.Allocate(filmValues, "the film's odd samples (--denoise)");
      // The film is read back through a pinned staging buffer, allocated once, unless the naive twin asks for
      // a copy straight into pageable memory.
      if (!opt_.pageableReadback) pinnedFilm_.Allocate(filmValues);
      sort_.reset();
      const size_t pixels = filmValues / 3;
      firstHitSamples_ = FirstHitSamplesKept(opt_.firstHitSamples, pixels);
      if (firstHitSamples_)
        firstHits_.Allocate(firstHitSamples_ * pixels, "the camera rays' hits (first-hit features)");
    }
    film_.Zero(stream_.Get());
    if (firstHitSamples_) {
      const size_t n = firstHits_.Size();
      MarkHitsNotRecordedKernel<<<GridFor(n, kBlock), kBlock, 0, stream_.Get()>>>(firstHits_.Get(), n);
      TRACER_CHECK_LAUNCH("mark_first_hits");
    }
    if (opt_.halfBuffers) oddFilm_.Zero(stream_.Get());
    if (opt_.resume) film_.Upload(opt_.resume->sum.data(), opt_.resume->sum.size(), stream_.Get());
    if (opt_.resume && opt_.halfBuffers)  // (RunPasses checked that the resumed film has its odd sums)
      oddFilm_.Upload(opt_.resume->odd.data(), opt_.resume->odd.size(), stream_.Get());
    // What reads the film and the kept hits after the render runs on other streams, also when no pass runs (a
    // resumed render already complete): they are ready when Allocate returns.
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream_.Get()));
    totals_ = pinnedTotals_.Get();
    *totals_ = WaveCounters{};
    totals_->firstBad = kNoBadSample;
    if (opt_.resume) totals_->dropped = opt_.resume->dropped;
    // Stage kernels run grid-stride loops over as many blocks as the GPU holds at once.
    const unsigned resident = static_cast<unsigned>(prop_.multiProcessorCount) *
                              static_cast<unsigned>(prop_.maxThreadsPerMultiProcessor / static_cast<int>(kStageBlock));
    blocks_ = std::min(GridFor(static_cast<size_t>(pool), kStageBlock), resident);
    if (opt_.sortRays && compact && scene_ && !sort_)  // (its keys need the scene's bounds)
      sort_ = std::make_unique<RaySortBuffers>(static_cast<int>(pool), lo_, hi_);
  }

  bool HasTileGuide() const override { return guide_ != nullptr; }
  void RefreshTileGuide(int refresh, const TileStatsShare& share) override {
    timer_.Begin("tile_guide");
    guide_->Refresh(refresh, share);
    timer_.End();
    sceneView_ = guide_->View();
    sceneView_.envGuide = envGuide_;
  }

  void SetActivePixels(const std::vector<uint32_t>& pixels) override {
    if (active_.Size() < pixels.size()) active_.Allocate(pixels.size(), "adaptive sampling's pixel list");
    active_.Upload(pixels.data(), pixels.size(), stream_.Get());
    activeCount_ = static_cast<uint32_t>(pixels.size());
  }

  void RunPass(const RenderParams& passParams, int spp) override {
    const cudaStream_t stream = stream_.Get();
    RenderParams rp = passParams;
    rp.activeCount = activeCount_;
    rp.activePixels = active_.Get();
    // Fresh queue counters for the pass, keeping the running totals (read back at the end of the pass).
    StartPass(*totals_, PassPixels(rp) * static_cast<unsigned long long>(spp));
    WaveCounters* dCounters = wave_->counters.Get();
    TRACER_CUDA_CHECK(cudaMemcpyAsync(dCounters, totals_, sizeof(WaveCounters), cudaMemcpyHostToDevice, stream));
    const int refill = opt_.binaryBvh ? 0 : opt_.persistentRefill;
    CudaExecutor ex(stream, blocks_, timer_, dCounters, snapshots_, refill, persistentNext_.Get(), sort_.get(),
                    GridFor(static_cast<size_t>(pool_), kStageBlock), aside_.get());
    if (opt_.compaction == Compaction::kNone) ex.Run(InitPoolStage<L>{wave_->view});
    const FilmView film{film_.Get(),      &dCounters->dropped, &dCounters->firstBad,
                        opt_.width,       opt_.height,         opt_.halfBuffers ? oddFilm_.Get() : nullptr,
                        firstHits_.Get(), firstHitSamples_};
    BounceOptions bo;
    bo.regenerate = opt_.regenerate;
    bo.singleShadeKernel = opt_.singleShadeKernel;
    bo.timePerBounce = opt_.timePerBounce;
    bo.binaryBvh = opt_.binaryBvh;
    bo.perRayCameraBounce = opt_.perRayCameraBounce;
    bo.sortRays = sort_ != nullptr;
    RunCudaBounces<L>(ex, wave_->view, sceneView_, rp, film, bo, opt_.compaction, !opt_.plainLoads);
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
    TRACER_CUDA_CHECK(cudaMemcpy(totals_, dCounters, sizeof(WaveCounters), cudaMemcpyDeviceToHost));
    timer_.Collect();
  }

  PassTotals Totals() const override {
    return PassTotals{totals_->extensionRays, totals_->shadowRays, totals_->dropped, totals_->firstBad};
  }

  // Through the pinned staging buffer, then to `sum` on up to 8 threads (one copies 47.5 MiB, a 1080p film, at
  // about 8 GB/s); the naive twin copies straight into pageable memory. The device copy's time alone is kept for the
  // "readback" row.
  void ReadFilm(unsigned long long* sum) override {
    unsigned long long* dst = opt_.pageableReadback ? sum : pinnedFilm_.Get();
    const Stopwatch copyClock;
    TRACER_CUDA_CHECK(cudaMemcpy(dst, film_.Get(), film_.Bytes(), cudaMemcpyDeviceToHost));
    readMs_ = copyClock.Ms();
    if (opt_.pageableReadback) return;
    if (!copyPool_) copyPool_ = std::make_unique<ThreadPool>(std::clamp(ThreadPool::CoresAvailable(), 1, 8));
    copyPool_->ParallelFor(film_.Size(), size_t(1) << 16,
                           [&](size_t b, size_t e) { std::copy(dst + b, dst + e, sum + b); });
  }

  // Only at the end of a --denoise render: straight into pageable memory.
  void ReadOddFilm(unsigned long long* sum) override {
    TRACER_CUDA_CHECK(cudaMemcpy(sum, oddFilm_.Get(), oddFilm_.Bytes(), cudaMemcpyDeviceToHost));
  }

  void AddStats(RenderStats& st) override {
    const WaveCounters& c = *totals_;
    st.activeLanesShade = c.shadeWarps ? static_cast<double>(c.shadeLanes) / c.shadeWarps : 0.0;
    st.classesPerShadeWarp = c.shadeWarps ? static_cast<double>(c.shadeClasses) / c.shadeWarps : 0.0;
    std::vector<unsigned long long> live(kMaxStatBounces);
    TRACER_CUDA_CHECK(cudaMemcpy(live.data(), wave_->live.Get(), sizeof(unsigned long long) * kMaxStatBounces,
                                 cudaMemcpyDeviceToHost));
    st.livePerBounce.clear();
    for (unsigned long long n : live)
      if (n) st.livePerBounce.push_back(n);
    for (auto& kv : timer_.Totals()) st.kernelMs.emplace_back(kv.first, kv.second);
    st.kernelMs.emplace_back("readback", readMs_);
    st.peakDeviceBytes = DeviceBytesPeak();
    st.setupSeconds = setupSeconds_;
  }

 private:
  // --env-sampling guided: the guide is learned on the host's threads from the host's scene (as the CPU renderer
  // learns it: the same guide for a seed), then uploaded.
  void UploadEnvGuide(const SceneData& data) {
    ThreadPool pool(ThreadPool::ThreadsFor(opt_.threads));
    const std::unique_ptr<EnvGuideHost> g = LearnEnvGuide(data.View(), opt_, pool);
    envGuideCdf_.Upload(g->cdf, "environment guide");
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());  // the pageable source dies with g
    envGuide_ = g->view;
    envGuide_.cdf = envGuideCdf_.Get();
    sceneView_.envGuide = envGuide_;
  }
  // With compacted queues a bounce's shadow stage runs beside the next bounce, and the miss and shade stages side by
  // side (AsideStream), unless --serial-shadows or --serial-shading asks for them in line or the stages are timed one
  // by one (collectStats: each timed range must hold its own kernels).
  bool ShadowsAside() const { return StreamsAllowed() && !opt_.serialShadows; }
  bool ShadingInLanes() const { return StreamsAllowed() && !opt_.serialShading; }
  bool StreamsAllowed() const { return opt_.compaction != Compaction::kNone && !opt_.collectStats; }
  void UseScene(std::shared_ptr<DeviceScene> scene) {
    scene_ = std::move(scene);
    lo_ = scene_->boundsMin;
    hi_ = scene_->boundsMax;
    sceneView_ = scene_->view;
    if (InjectedFault() == "illegal-address") {
      FaultKernel<<<1, 1, 0, stream_.Get()>>>(nullptr);
      TRACER_CUDA_CHECK(cudaStreamSynchronize(stream_.Get()));
    }
  }

  const RenderOptions& opt_;
  cudaDeviceProp prop_{};
  std::string name_;
  CudaStream stream_;
  StageTimer timer_;
  std::shared_ptr<DeviceScene> scene_;  // shared with the processes it was exported to (ExportScene)
  SceneView sceneView_{};
  std::unique_ptr<DeviceTileGuide> guide_;
  DeviceBuffer<float> envGuideCdf_;  // --env-sampling guided: the guide's cdf rows
  EnvGuideView envGuide_{};
  std::unique_ptr<DeviceWave<L>> wave_;
  std::unique_ptr<AsideStream> aside_;  // when ShadowsAside() or ShadingInLanes()
  DeviceBuffer<unsigned long long> film_;
  DeviceBuffer<unsigned long long> oddFilm_;  // options.halfBuffers: the odd-numbered samples' sums
  PinnedBuffer<unsigned long long> pinnedFilm_;
  DeviceBuffer<HitRecord> firstHits_;     // options.firstHitSamples: the camera rays' hits (FilmView::firstHits)
  uint32_t firstHitSamples_ = 0;          // how many samples' hits firstHits_ holds (FirstHitSamplesKept)
  std::unique_ptr<ThreadPool> copyPool_;  // ReadFilm's copy out of pinnedFilm_
  PinnedBuffer<WaveCounters> pinnedTotals_;
  DeviceBuffer<int> persistentNext_{1, "persistent threads' item counter"};
  mutable long long autoPool_ = 0;        // Pool()'s automatic size, once computed
  std::unique_ptr<RaySortBuffers> sort_;  // --sort-rays
  DeviceBuffer<uint32_t> active_;         // adaptive sampling's pixels (the first activeCount_)
  uint32_t activeCount_ = 0;              // 0: every pixel
  Vec3 lo_, hi_;                          // the scene's bounds
  WaveCounters* totals_ = nullptr;        // running totals, host copy (pinned)
  CounterSnapshots snapshots_;
  unsigned blocks_ = 1;
  long long pool_ = 0;
  double readMs_ = 0.0, setupSeconds_ = 0.0;
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend(const SceneData& data, const RenderOptions& opt) {
  if (CudaContextDead()) throw std::runtime_error("the CUDA context is no longer usable after an earlier error");
  if (opt.naiveLayout) return std::make_unique<CudaBackend<NaiveLayout>>(data, opt);
  return std::make_unique<CudaBackend<AlignedLayout>>(data, opt);
}

std::unique_ptr<Backend> MakeCudaBackendWithoutScene(const RenderOptions& opt) {
  if (CudaContextDead()) throw std::runtime_error("the CUDA context is no longer usable after an earlier error");
  if (opt.naiveLayout) return std::make_unique<CudaBackend<NaiveLayout>>(opt);
  return std::make_unique<CudaBackend<AlignedLayout>>(opt);
}

namespace {
SceneUploader& Uploader(Backend& backend, const char* what) {
  SceneUploader* uploader = dynamic_cast<SceneUploader*>(&backend);
  if (!uploader) throw std::logic_error(std::string(what) + ": not a CUDA backend");
  return *uploader;
}
}  // namespace

void UploadScene(Backend& backend, const SceneData& data) { Uploader(backend, "UploadScene").UploadScene(data); }

void ImportDeviceScene(Backend& backend, const std::vector<unsigned char>& exported) {
  Uploader(backend, "ImportDeviceScene").ImportScene(exported);
}

DeviceSceneOffer ExportDeviceScene(Backend& backend) { return Uploader(backend, "ExportDeviceScene").ExportScene(); }

std::shared_ptr<DeviceScene> DeviceSceneOf(Backend& backend) {
  const SceneUploader* uploader = dynamic_cast<const SceneUploader*>(&backend);
  return uploader ? uploader->Scene() : nullptr;
}

DeviceFilmView DeviceFilmOf(Backend& backend) {
  const SceneUploader* uploader = dynamic_cast<const SceneUploader*>(&backend);
  return uploader ? uploader->Film() : DeviceFilmView{};
}

RenderResult RenderCuda(const SceneData& data, const RenderOptions& opt, const ProgressFn& progress) {
  std::unique_ptr<Backend> backend = MakeCudaBackend(data, opt);
  return RunPasses(opt, *backend, progress);
}

}  // namespace tracer
