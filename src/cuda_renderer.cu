// @file cuda_renderer.cu: the host side of the CUDA wavefront renderer: uploads the scene, sizes the path
// pool, and runs passes of generate -> intersect -> miss -> shade per class -> shadow -> finish, with the
// queue counters kept on the device.
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>

#include "kernels/launch.h"
#include "kernels/tiles_launch.h"
#include "tracer/light_tiles_host.h"
#include "tracer/minplus_host.h"
#include "tracer/cuda_host.h"
#include "tracer/cuda_renderer.h"

namespace tracer {

// ---- errors ---------------------------------------------------------------------------------------------
bool IsStickyCudaError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
      return true;
    default:
      return false;
  }
}
bool& CudaContextDead() {
  static bool dead = false;
  return dead;
}
void ThrowCudaError(cudaError_t e, const char* expr, const char* file, int line) {
  bool sticky = IsStickyCudaError(e);
  if (sticky) CudaContextDead() = true;
  std::string msg = std::string(file) + ":" + std::to_string(line) + " " + expr + ": " + cudaGetErrorName(e) + ": " +
                    cudaGetErrorString(e);
  if (sticky) msg += " (the CUDA context is no longer usable)";
  throw CudaError(msg, e, sticky);
}
size_t& DeviceBytesInUse() {
  static size_t n = 0;
  return n;
}
size_t& DeviceBytesPeak() {
  static size_t n = 0;
  return n;
}

bool CudaAvailable(std::string& why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return false;
  }
  if (n == 0) {
    why = "no CUDA device found";
    return false;
  }
  return true;
}

namespace {

// Test hook: TRACER_FAULT_INJECT=oom makes the path pool's allocation fail as if the device were full, and
// =illegal-address launches a kernel that writes through a null pointer, so that the handling of both can be
// tested on a real GPU (tests/robustness_gpu_test.cu). Unset in normal use.
std::string InjectedFault() {
  const char* f = std::getenv("TRACER_FAULT_INJECT");
  return f ? f : "";
}
__global__ void FaultKernel(int* p) { *p = 1; }

// ---- scene upload -----------------------------------------------------------------------------------------
struct DeviceScene {
  DeviceBuffer<BvhNode> nodes;
  DeviceBuffer<Float4> tris, texels;
  DeviceBuffer<TriShading> shading;
  DeviceBuffer<Material> materials;
  DeviceBuffer<TextureInfo> textures;
  DeviceBuffer<AliasEntry> lightAlias;
  DeviceBuffer<int32_t> emitterTri, triEmitter;
  DeviceBuffer<int32_t> clusterStart, emitterCluster;
  DeviceBuffer<AliasEntry> clusterAlias;
  DeviceBuffer<float> emitterInClusterPmf, clusterPowerPmf;
  SceneView view{};

  explicit DeviceScene(const SceneData& d) {
    nodes.Upload(d.bvh.nodes, "BVH nodes");
    tris.Upload(d.bvh.tris, "triangles");
    shading.Upload(d.shading, "triangle shading");
    materials.Upload(d.materials, "materials");
    texels.Upload(d.texels, "texels");
    textures.Upload(d.textures, "textures");
    lightAlias.Upload(d.lightAlias, "light alias table");
    emitterTri.Upload(d.emitterTri, "emitters");
    triEmitter.Upload(d.triEmitter, "triangle emitters");
    view = d.View();  // scalars and camera; pointers replaced below
    view.bvh.nodes = nodes.Get();
    view.bvh.tris = tris.Get();
    view.shading = shading.Get();
    view.materials = materials.Get();
    view.texels = texels.Get();
    view.textures = textures.Get();
    view.lightAlias = lightAlias.Get();
    view.emitterTri = emitterTri.Get();
    view.triEmitter = triEmitter.Get();
    const LightClusters& lc = d.clusters;
    if (lc.Count() > 0) {
      clusterStart.Upload(lc.clusterStart, "light clusters");
      emitterCluster.Upload(lc.emitterCluster, "light clusters");
      clusterAlias.Upload(lc.clusterAlias, "light clusters");
      emitterInClusterPmf.Upload(lc.emitterInClusterPmf, "light clusters");
      clusterPowerPmf.Upload(lc.clusterPowerPmf, "light clusters");
      view.tiles.clusterStart = clusterStart.Get();
      view.tiles.emitterCluster = emitterCluster.Get();
      view.tiles.clusterAlias = clusterAlias.Get();
      view.tiles.emitterInClusterPmf = emitterInClusterPmf.Get();
      view.tiles.clusterPowerPmf = clusterPowerPmf.Get();
    }
  }
};

// Tile-guided light selection on the device: the same steps as TileGuideHost (light_tiles_host.h).
// D is numTiles^2 floats: 266 MB for the 8160 tiles of a 1920x1080 image at 16-pixel tiles.
class DeviceTileGuide {
 public:
  DeviceTileGuide(const DeviceScene& scene, const SceneData& data, const RenderOptions& opt, cudaStream_t stream)
      : opt_(opt), stream_(stream) {
    grid_ = TileGrid{opt.width, opt.height, opt.tileSize, (opt.width + opt.tileSize - 1) / opt.tileSize,
                     (opt.height + opt.tileSize - 1) / opt.tileSize};
    k_ = data.clusters.Count();
    const size_t pixels = static_cast<size_t>(opt.width) * opt.height, T = grid_.NumTiles();
    pos_.Allocate(pixels, "tile G-buffer");
    nd_.Allocate(pixels, "tile G-buffer");
    info_.Allocate(T, "tile info");
    d_.Allocate(T * T, "tile dissimilarity matrix (try a larger --tile-size)");
    sum_.Allocate(T * k_, "tile statistics");
    count_.Allocate(T * k_, "tile statistics");
    cost_.Allocate(T * k_, "tile costs");
    cdf_.Allocate(T * k_, "tile cdfs");
    sum_.Zero(stream);
    count_.Zero(stream);
    view_ = scene.view;
    view_.tiles.cdf = cdf_.Get();
    view_.tiles.numClusters = k_;
    view_.tiles.tileSize = opt.tileSize;
    view_.tiles.tilesX = grid_.tilesX;
    view_.tiles.numTiles = static_cast<int32_t>(T);
    LaunchGBuffer(view_, grid_, pos_.Get(), nd_.Get(), stream);
    LaunchTileInfo(pos_.Get(), nd_.Get(), grid_, info_.Get(), stream);
    LaunchDissimilarity(info_.Get(), grid_, d_.Get(), stream);
  }
  void Refresh(int refresh) {
    const int T = grid_.NumTiles();
    LaunchTileStats(view_, pos_.Get(), nd_.Get(), grid_, refresh, TileRoundsForRefresh(refresh, k_), opt_.seed,
                    opt_.naiveReduction, sum_.Get(), count_.Get(), stream_);
    LaunchTileCost(sum_.Get(), count_.Get(), cost_.Get(), static_cast<size_t>(T) * k_, stream_);
    MinPlusIterate(opt_.minPlus, d_.Get(), cost_.Get(), T, k_, kMinPlusSteps, MinPlusStop::kFixedSteps, stream_);
    LaunchTileCdf(cost_.Get(), view_.tiles.clusterPowerPmf, T, k_, opt_.tileGuideMix, cdf_.Get(), stream_);
  }
  const SceneView& View() const { return view_; }

 private:
  const RenderOptions& opt_;
  cudaStream_t stream_;
  TileGrid grid_;
  int k_;
  DeviceBuffer<Float4> pos_, nd_, info_;
  DeviceBuffer<float> d_, sum_, count_, cost_, cdf_;
  SceneView view_;
};

// ---- path pool in either layout ------------------------------------------------------------------------------
template <class L> struct PathStorage;
template <> struct PathStorage<AlignedLayout> {
  DeviceBuffer<Float4> a;
  DeviceBuffer<Int4> b;
  void Allocate(size_t n) {
    a.Allocate(n, "path throughput");
    b.Allocate(n, "path info");
  }
  AlignedLayout::PathBuffers View() const { return {a.Get(), b.Get()}; }
};
template <> struct PathStorage<NaiveLayout> {
  DeviceBuffer<NaivePath> p;
  void Allocate(size_t n) { p.Allocate(n, "path state"); }
  NaiveLayout::PathBuffers View() const { return {p.Get()}; }
};

constexpr int kMaxStatBounces = 64;

template <class L>
struct DeviceWave {
  DeviceBuffer<typename L::RayT> rays[2];
  PathStorage<L> paths[2];
  DeviceBuffer<typename L::HitT> hits;
  DeviceBuffer<typename L::ShadowT> shadows;
  DeviceBuffer<int32_t> queues;
  DeviceBuffer<int8_t> hitClass;
  DeviceBuffer<WaveCounters> counters;
  DeviceBuffer<unsigned long long> live;
  WaveView<L> view{};

  DeviceWave(int pool, bool compact) {
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
    shadows.Allocate(pool, "shadow rays");
    if (compact) queues.Allocate(static_cast<size_t>(pool) * (kNumMaterialClasses + 1), "queues");
    else hitClass.Allocate(pool, "hit classes");
    counters.Allocate(1, "counters");
    live.Allocate(kMaxStatBounces, "statistics");
    live.Zero();
    view.hits = hits.Get();
    view.shadows = shadows.Get();
    view.classQueue = queues.Get();
    view.hitClass = hitClass.Get();
    view.counters = counters.Get();
    view.livePerBounce = nullptr;
    view.pool = pool;
  }
};

// Times stages with CUDA events when enabled, summing per stage name.
class StageTimer {
 public:
  StageTimer(bool enabled, cudaStream_t s) : enabled_(enabled), stream_(s) {}
  ~StageTimer() {
    if (CudaContextDead()) return;
    for (auto& e : events_) cudaEventDestroy(e);
  }
  void Begin(const std::string& name) {
    nvtxRangePushA(name.c_str());
    if (!enabled_) return;
    pending_.push_back({name, Record()});
  }
  void End() {
    nvtxRangePop();
    if (!enabled_) return;
    pending_.back().stop = Record();
  }
  // Call when the stream is idle: adds the pending intervals to the totals.
  void Collect() {
    for (auto& p : pending_) {
      float ms = 0.0f;
      TRACER_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[p.start], events_[p.stop]));
      totals_[p.name] += ms;
    }
    pending_.clear();
    used_ = 0;
  }
  const std::map<std::string, double>& Totals() const { return totals_; }

 private:
  struct Interval {
    std::string name;
    size_t start, stop = 0;
  };
  size_t Record() {
    if (used_ == events_.size()) {
      cudaEvent_t e;
      TRACER_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    TRACER_CUDA_CHECK(cudaEventRecord(events_[used_], stream_));
    return used_++;
  }
  bool enabled_;
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
  std::vector<Interval> pending_;
  std::map<std::string, double> totals_;
};

struct PinnedCounters {
  WaveCounters* p = nullptr;
  explicit PinnedCounters(int n) { TRACER_CUDA_CHECK(cudaMallocHost(&p, sizeof(WaveCounters) * n)); }
  ~PinnedCounters() {
    if (p && !CudaContextDead()) cudaFreeHost(p);
  }
};

template <class L>
RenderResult RenderWithLayout(const SceneData& data, const RenderOptions& opt, const ProgressFn& progress) {
  cudaDeviceProp prop;
  int dev = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&dev));
  TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceBytesPeak() = DeviceBytesInUse();

  const long long pixels = static_cast<long long>(opt.width) * opt.height;
  long long pool = opt.pathsInFlight > 0 ? opt.pathsInFlight : std::min<long long>(1LL << 21, pixels * opt.spp);
  pool = std::max<long long>(32, (pool + 31) / 32 * 32);
  const bool compact = opt.compaction != Compaction::kNone;

  cudaStream_t stream;
  TRACER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() {
      if (!CudaContextDead()) cudaStreamDestroy(s);
    }
  } streamGuard{stream};

  DeviceScene scene(data);
  SceneView sceneView = scene.view;
  const std::string fault = InjectedFault();
  if (fault == "oom")
    throw CudaError("out of device memory allocating " + std::to_string(pool * 256) + " bytes for the path pool "
                    "(injected by TRACER_FAULT_INJECT); try a smaller --paths-in-flight or image",
                    cudaErrorMemoryAllocation, false);
  if (fault == "illegal-address") {
    FaultKernel<<<1, 1, 0, stream>>>(nullptr);
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::unique_ptr<DeviceTileGuide> guide;
  if (opt.lightSampling == LightSampling::kTiles && data.clusters.Count() > 0)
    guide = std::make_unique<DeviceTileGuide>(scene, data, opt, stream);
  int pass = 0, refreshes = 0;
  DeviceWave<L> wave(static_cast<int>(pool), compact);
  DeviceBuffer<unsigned long long> film(static_cast<size_t>(pixels) * 3, "film");
  film.Zero(stream);
  if (opt.resume) film.Upload(opt.resume->sum.data(), opt.resume->sum.size(), stream);
  FilmView fv{film.Get(), &wave.counters.Get()->dropped, &wave.counters.Get()->firstBad, opt.width, opt.height};
  if (opt.collectStats) wave.view.livePerBounce = wave.live.Get();
  wave.view.collectStats = opt.collectStats ? 1 : 0;

  // Stage kernels run grid-stride loops over as many blocks as the GPU holds at once.
  const unsigned resident = static_cast<unsigned>(prop.multiProcessorCount) *
                            static_cast<unsigned>(prop.maxThreadsPerMultiProcessor / static_cast<int>(kStageBlock));
  LaunchSettings ls{opt.compaction, !opt.plainLoads, opt.singleShadeKernel, stream, resident};
  RenderParams rp = MakeRenderParams(opt);

  RenderResult result;
  result.backend = std::string("cuda (") + prop.name + ")";
  RenderStats& st = result.stats;
  StageTimer timer(opt.collectStats, stream);
  constexpr int kRing = 4;
  PinnedCounters snaps(kRing + 1);
  WaveCounters* init = snaps.p + kRing;
  cudaEvent_t snapEvents[kRing];
  for (auto& e : snapEvents) TRACER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  struct EventGuard {
    cudaEvent_t* e;
    ~EventGuard() {
      if (!CudaContextDead())
        for (int i = 0; i < kRing; ++i) cudaEventDestroy(e[i]);
    }
  } eventGuard{snapEvents};
  *init = WaveCounters{};
  init->firstBad = kNoBadSample;

  int sppDone = opt.resume ? opt.resume->sppDone : 0;
  if (opt.resume) init->dropped = opt.resume->dropped;
  // Reads the film back into hf, through a pinned staging buffer (allocated once, up front) unless the
  // naive twin asks for a copy straight into pageable memory. Returns the milliseconds of the copy alone.
  struct PinnedFilm {
    unsigned long long* p = nullptr;
    ~PinnedFilm() {
      if (p && !CudaContextDead()) cudaFreeHost(p);
    }
  } pinned;
  if (!opt.pageableReadback) TRACER_CUDA_CHECK(cudaMallocHost(&pinned.p, film.Bytes()));
  auto readFilm = [&](HostFilm& hf) {
    hf.Reset(opt.width, opt.height);
    hf.sppDone = sppDone;
    hf.dropped = init->dropped;
    unsigned long long* dst = opt.pageableReadback ? hf.sum.data() : pinned.p;
    auto t = std::chrono::steady_clock::now();
    TRACER_CUDA_CHECK(cudaMemcpy(dst, film.Get(), film.Bytes(), cudaMemcpyDeviceToHost));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    if (!opt.pageableReadback) std::copy(pinned.p, pinned.p + hf.sum.size(), hf.sum.begin());
    return ms;
  };
  auto t0 = std::chrono::steady_clock::now();
  auto lastCheckpoint = t0;
  while (sppDone < opt.spp) {
    const int passSpp = SamplesPerPass(pixels, pool, opt.spp - sppDone);
    rp.sampleBase = static_cast<uint32_t>(sppDone);
    // The tile guide changes only between passes, so each pass samples one fixed distribution.
    if (guide && IsTileRefreshPass(pass)) {
      timer.Begin("tile_guide");
      guide->Refresh(refreshes++);
      timer.End();
      sceneView = guide->View();
      rp.guideLights = 1;
    }
    ++pass;
    // Fresh counters for the pass, keeping the running totals (read back at the end of the last pass).
    WaveCounters fresh{};
    fresh.totalWork = static_cast<unsigned long long>(pixels) * passSpp;
    fresh.dropped = init->dropped;
    fresh.firstBad = init->firstBad;
    fresh.shadeLanes = init->shadeLanes;
    fresh.shadeWarps = init->shadeWarps;
    fresh.shadeClasses = init->shadeClasses;
    fresh.extensionRays = init->extensionRays;
    fresh.shadowRays = init->shadowRays;
    *init = fresh;
    TRACER_CUDA_CHECK(cudaMemcpyAsync(wave.counters.Get(), init, sizeof(WaveCounters), cudaMemcpyHostToDevice, stream));
    if (!compact) LaunchInitPool(wave.view, ls);

    int cur = 0;
    for (int iter = 0;; ++iter) {
      WaveView<L> w = wave.view;
      w.cur = cur;
      w.bounce = std::min(iter, kMaxStatBounces - 1);
      if (iter == 0 || opt.regenerate) {
        timer.Begin("generate");
        LaunchGenerate(w, sceneView, rp, ls);
        LaunchAdvance(w, ls);
        timer.End();
      }
      timer.Begin(opt.timePerBounce ? "intersect#" + std::to_string(w.bounce) : std::string("intersect"));
      LaunchIntersect(w, sceneView, ls);
      timer.End();
      timer.Begin("miss");
      LaunchMiss(w, sceneView, rp, fv, ls);
      timer.End();
      if (opt.singleShadeKernel) {
        timer.Begin("shade");
        LaunchShade(w, sceneView, rp, fv, kShadeAllClasses, ls);
        timer.End();
      } else {
        static const char* kShadeNames[kNumMaterialClasses] = {"shade_diffuse", "shade_glossy", "shade_mirror",
                                                               "shade_dielectric"};
        for (int c = 0; c < kNumMaterialClasses; ++c) {
          timer.Begin(kShadeNames[c]);
          LaunchShade(w, sceneView, rp, fv, c, ls);
          timer.End();
        }
      }
      timer.Begin("shadow");
      LaunchShadow(w, sceneView, rp, fv, ls);
      timer.End();
      LaunchFinish(w, ls);
      const int slot = iter % kRing;
      TRACER_CUDA_CHECK(cudaMemcpyAsync(&snaps.p[slot], wave.counters.Get(), sizeof(WaveCounters),
                                        cudaMemcpyDeviceToHost, stream));
      TRACER_CUDA_CHECK(cudaEventRecord(snapEvents[slot], stream));
      cur = 1 - cur;
      // End test on the snapshot from two bounces ago, so the host never waits on the bounce in flight.
      // Bounces issued after the pool drained find every queue empty and cost only their launches.
      if (iter >= 2) {
        const int k = (iter - 2) % kRing;
        TRACER_CUDA_CHECK(cudaEventSynchronize(snapEvents[k]));
        const WaveCounters& sn = snaps.p[k];
        const int nextBuf = ((iter - 2) % 2 == 0) ? 1 : 0;
        if (sn.rayCount[nextBuf] == 0 && sn.nextWork >= sn.totalWork) break;
      }
      if (iter > 100000) throw std::runtime_error("wavefront did not drain (internal error)");
    }
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
    TRACER_CUDA_CHECK(cudaMemcpy(init, wave.counters.Get(), sizeof(WaveCounters), cudaMemcpyDeviceToHost));
    st.extensionRays = init->extensionRays;
    st.shadowRays = init->shadowRays;
    timer.Collect();
    sppDone += passSpp;
    st.primaryRays += static_cast<uint64_t>(pixels) * passSpp;
    auto now = std::chrono::steady_clock::now();
    st.seconds = std::chrono::duration<double>(now - t0).count();
    if (opt.checkpoint && std::chrono::duration<double>(now - lastCheckpoint).count() >= opt.checkpointSeconds) {
      HostFilm snapshot;
      readFilm(snapshot);
      opt.checkpoint(snapshot);
      lastCheckpoint = now;
    }
    if (opt.checkNan && init->firstBad != kNoBadSample) break;  // --check-nan: stop at the pass that found one
    if (progress && !progress(sppDone, opt.spp, st)) break;
    if (opt.timeLimit > 0.0 && st.seconds >= opt.timeLimit) break;
  }

  // Read back: statistics, then the film through pinned (or, for the naive twin, pageable) memory.
  st.droppedSamples = init->dropped;
  st.activeLanesShade = init->shadeWarps ? static_cast<double>(init->shadeLanes) / init->shadeWarps : 0.0;
  st.classesPerShadeWarp = init->shadeWarps ? static_cast<double>(init->shadeClasses) / init->shadeWarps : 0.0;
  std::vector<unsigned long long> live(kMaxStatBounces);
  TRACER_CUDA_CHECK(cudaMemcpy(live.data(), wave.live.Get(), sizeof(unsigned long long) * kMaxStatBounces,
                               cudaMemcpyDeviceToHost));
  HostFilm hf;
  double readMs = readFilm(hf);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& kv : timer.Totals()) st.kernelMs.emplace_back(kv.first, kv.second);
  st.kernelMs.emplace_back("readback", readMs);
  st.livePerBounce.clear();
  for (int b = 0; b < kMaxStatBounces; ++b)
    if (live[b]) st.livePerBounce.push_back(live[b]);
  st.peakDeviceBytes = DeviceBytesPeak();
  result.width = opt.width;
  result.height = opt.height;
  result.sppDone = sppDone;
  result.rgb = hf.Resolve();
  result.film = std::move(hf);
  result.firstNonFinite = NonFiniteSample::Decode(init->firstBad);
  return result;
}

}  // namespace

RenderResult RenderCuda(const SceneData& data, const RenderOptions& opt, const ProgressFn& progress) {
  if (CudaContextDead()) throw std::runtime_error("the CUDA context is no longer usable after an earlier error");
  if (opt.naiveLayout) return RenderWithLayout<NaiveLayout>(data, opt, progress);
  return RenderWithLayout<AlignedLayout>(data, opt, progress);
}

}  // namespace tracer
