// @file cpu_backend.cpp: the reference backend: the wavefront stages of core/stages.h, the same bodies the
// GPU runs, executed over host queues by a thread pool, in the optimised (aligned, compacted) variant.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tracer/core/stages.h"
#include "tracer/host/backends.h"
#include "tracer/host/env_guide.h"
#include "tracer/host/knobs.h"
#include "tracer/host/ray_dump.h"
#include "tracer/host/ray_file.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/tile_guide.h"

namespace tracer {
namespace {

using L = AlignedLayout;

bool InjectedPassFault() { return knobs::FaultInject() == "cpu-pass"; }

// Pushes of one chunk of items, first into chunk-local queues, then appended to the shared queues with one
// atomic add per queue: the host's counterpart of the GPU's warp-aggregated push. With one atomic add per
// push on the shared counters instead, the threads fight over their cache line and the CPU renderer ran 2.1x
// slower on 2 cores (Cornell box, 512x512).
class ChunkQueues {
 public:
  static constexpr int kCapacity = 256;  // items per chunk; each pushes at most once to each queue
  ChunkQueues()
      : rays_(kCapacity),
        throughput_(kCapacity),
        info_(kCapacity),
        shadows_(kCapacity),
        classQueue_(static_cast<size_t>(kCapacity) * (kNumMaterialClasses + 1)) {}

  // The stage's view with its outputs pointed here: the hit queues, or the shadow queue and the next ray
  // buffer. Its inputs (the current rays, and for shading the hit queues) stay the shared ones.
  WaveView<L> Redirect(WaveView<L> w, Pushes outputs) {
    counters_ = WaveCounters{};
    w.counters = &counters_;
    if (outputs == Pushes::kHitQueues) {
      w.classQueue = classQueue_.data();
      w.pool = kCapacity;
    } else {
      const int next = 1 - w.cur;
      w.shadows[w.cur] = shadows_.data();
      w.rays[next] = rays_.data();
      w.paths[next] = L::PathBuffers{throughput_.data(), info_.data()};
    }
    return w;
  }

  // Appends what was pushed to the shared queues of `w`.
  void Flush(const WaveView<L>& w) {
    WaveCounters& shared = *w.counters;
    for (int k = 0; k <= kNumMaterialClasses; ++k) {
      const uint32_t n = counters_.classCount[k];
      if (n == 0) continue;
      const uint32_t base = AtomicAddU32(&shared.classCount[k], n);
      std::copy_n(&classQueue_[static_cast<size_t>(k) * kCapacity], n,
                  &w.classQueue[static_cast<size_t>(k) * w.pool + base]);
    }
    if (const uint32_t n = counters_.shadowCount[w.cur]) {
      const uint32_t base = AtomicAddU32(&shared.shadowCount[w.cur], n);
      std::copy_n(shadows_.data(), n, &w.shadows[w.cur][base]);
    }
    const int next = 1 - w.cur;
    if (const uint32_t n = counters_.rayCount[next]) {
      const uint32_t base = AtomicAddU32(&shared.rayCount[next], n);
      const L::PathBuffers local{throughput_.data(), info_.data()};
      for (uint32_t j = 0; j < n; ++j) {
        Ray r = L::LoadRay(rays_.data(), static_cast<int>(j));
        r.index = static_cast<int32_t>(base + j);  // a continuation's index is its slot
        L::StoreRay(w.rays[next], r.index, r);
        L::StorePath(w.paths[next], r.index, L::LoadPath(local, static_cast<int>(j)));
      }
    }
  }

 private:
  WaveCounters counters_{};
  std::vector<RayState> rays_;
  std::vector<Float4> throughput_;
  std::vector<Int4> info_;
  std::vector<ShadowItem> shadows_;
  std::vector<int32_t> classQueue_;
};

// Runs stage bodies for RunBounces on the thread pool. Stages run one after the other, so a body's Count()
// reads the counters the previous stage left.
class CpuExecutor {
 public:
  CpuExecutor(ThreadPool& pool, const WaveCounters& counters) : pool_(pool), counters_(counters) {}
  template <class Body>
  void Run(const Body& body) {
    const size_t n = static_cast<size_t>(body.Count());
    pool_.ParallelFor(n, ChunkQueues::kCapacity, [&](size_t b, size_t e) {
      if constexpr (Body::kPushes != Pushes::kNothing) {
        thread_local ChunkQueues queues;
        Body local = body;
        local.w = queues.Redirect(body.w, Body::kPushes);
        for (size_t i = b; i < e; ++i) local(static_cast<int>(i));
        queues.Flush(body.w);
      } else {
        for (size_t i = b; i < e; ++i) body(static_cast<int>(i));
      }
    });
  }
  template <class Body>
  void Serial(const Body& body) {
    body();
  }
  void Begin(const char*, int = -1) {}
  void End() {}
  bool Drained(int, int cur) const { return PassDrained(counters_, cur); }
  [[noreturn]] void Fail(const char* message) const { throw std::runtime_error(message); }

  // --dump-rays (RunBounces calls it before intersect and before shadow): the live rays of the queue as ray
  // records whose id is the pixel. Reads only, so the image does not change.
  void DumpRays(const WaveView<L>& w, int bounce, bool shadow, bool inPlace) {
    if (!dump_) return;
    const int b = inPlace ? 0 : w.cur;
    const uint32_t n =
        inPlace ? static_cast<uint32_t>(w.pool) : (shadow ? counters_.shadowCount[b] : counters_.rayCount[b]);
    std::vector<RayRecord> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      const int slot = static_cast<int>(i);
      Ray r = shadow ? L::LoadShadow(w.shadows[b], slot).ray : L::LoadRay(w.rays[b], slot);
      if (r.tmax < 0.0f) continue;  // a dead slot (no compaction)
      if (!shadow) r.index = static_cast<int32_t>(L::LoadPath(w.paths[b], slot).pixel);
      out.push_back(RayRecord{{r.o.x, r.o.y, r.o.z}, {r.d.x, r.d.y, r.d.z}, r.tmax, static_cast<uint32_t>(r.index)});
    }
    dump_->Append(bounce, shadow, out);
  }
  void SetDump(RayDumpWriter* dump) { dump_ = dump; }

 private:
  ThreadPool& pool_;
  const WaveCounters& counters_;
  RayDumpWriter* dump_ = nullptr;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(const SceneData& data, const RenderOptions& opt)
      : opt_(opt), threads_(ThreadPool::ThreadsFor(opt.threads)), pool_(threads_), scene_(data.View()) {
    RequireBvh(data, opt.binaryBvh);
    if (opt.lightSampling == LightSampling::kTiles && WantsTileGuide(data))
      guide_ = std::make_unique<TileGuideHost>(data, opt, &pool_);
    if (opt.envSampling == EnvSampling::kGuided && data.env.params.pick > 0.0f) {
      envGuide_ = LearnEnvGuide(scene_, opt, pool_);
      scene_.envGuide = envGuide_->view;
    }
  }

  std::string Name() const override { return "cpu (" + std::to_string(threads_) + " threads)"; }
  PoolPolicy Pool() const override { return PoolPolicy{1LL << 17, false, 1}; }

  void Allocate(long long poolPaths) override {
    const size_t n = static_cast<size_t>(poolPaths);
    for (int b = 0; b < 2; ++b) {
      rays_[b].resize(n);
      throughput_[b].resize(n);
      info_[b].resize(n);
      view_.rays[b] = rays_[b].data();
      view_.paths[b] = L::PathBuffers{throughput_[b].data(), info_[b].data()};
    }
    hits_.resize(n);
    shadows_.resize(n);
    queues_.resize(n * (kNumMaterialClasses + 1));
    view_.hits = hits_.data();
    view_.shadows[0] = view_.shadows[1] = shadows_.data();  // a bounce's shadow stage runs before the next bounce
    view_.classQueue = queues_.data();
    hitClass_.resize(n);
    view_.hitClass = hitClass_.data();
    view_.counters = &counters_;
    view_.livePerBounce = opt_.collectStats ? live_ : nullptr;
    view_.pool = static_cast<int32_t>(n);
    view_.collectStats = 0;  // lane statistics are the GPU's
    film_.assign(static_cast<size_t>(opt_.width) * opt_.height * 3, 0ull);
    oddFilm_.assign(opt_.halfBuffers ? film_.size() : 0, 0ull);
    counters_ = WaveCounters{};
    counters_.firstBad = kNoBadSample;
    if (opt_.resume) {
      film_ = opt_.resume->sum;
      if (!oddFilm_.empty()) oddFilm_ = opt_.resume->odd;  // (RunPasses checked that it has them)
      counters_.dropped = opt_.resume->dropped;
    }
  }

  bool HasTileGuide() const override { return guide_ != nullptr; }
  void RefreshTileGuide(int refresh, const TileStatsShare& share) override {
    guide_->Refresh(refresh, share);
    scene_ = guide_->View();
    if (envGuide_) scene_.envGuide = envGuide_->view;
  }

  void SetActivePixels(const std::vector<uint32_t>& pixels) override { active_ = pixels; }

  void RunPass(const RenderParams& passParams, int spp) override {
    RenderParams rp = passParams;
    rp.activeCount = static_cast<uint32_t>(active_.size());
    rp.activePixels = active_.data();
    // Test hook, as the CUDA backend's: TRACER_FAULT_INJECT=cpu-pass fails the second pass, as a backend that
    // breaks in the middle of a render (tests/mpi_test.cpp: one rank of an MPI job). Unset in normal use.
    if (passes_ == 1 && InjectedPassFault())
      throw std::runtime_error("the CPU backend failed its second pass (injected by TRACER_FAULT_INJECT=cpu-pass)");
    // Fresh queue counters for the pass; the running totals stay.
    StartPass(counters_, PassPixels(rp) * static_cast<unsigned long long>(spp));
    const FilmView film{film_.data(),
                        &counters_.dropped,
                        &counters_.firstBad,
                        opt_.width,
                        opt_.height,
                        oddFilm_.empty() ? nullptr : oddFilm_.data(),
                        nullptr,
                        0u};  // (the CPU's first-hit features trace their rays again)
    BounceOptions bo;
    bo.regenerate = opt_.regenerate;
    CpuExecutor ex(pool_, counters_);
    if (passes_++ == 0) ex.SetDump(dump_);  // --dump-rays: the first pass only
    // The compaction modes run here too (both push modes are one atomic add on the host), so the CPU tests
    // cover the stage bodies' no-compaction paths that the GPU's naive twin uses.
    if (opt_.compaction == Compaction::kNone) ex.Run(InitPoolStage<L>{view_});
    bo.binaryBvh = opt_.binaryBvh;
    DispatchCompaction(opt_.compaction, [&](auto c) {
      DispatchBvh(bo.binaryBvh, [&](auto t) {
        RunBounces<L, decltype(c)::value, false, decltype(t)>(ex, view_, scene_, rp, film, bo);
      });
    });
  }

  PassTotals Totals() const override {
    return PassTotals{counters_.extensionRays, counters_.shadowRays, counters_.dropped, counters_.firstBad};
  }
  void ReadFilm(unsigned long long* sum) override { std::copy(film_.begin(), film_.end(), sum); }
  void ReadOddFilm(unsigned long long* sum) override { std::copy(oddFilm_.begin(), oddFilm_.end(), sum); }
  void SetDump(RayDumpWriter* dump) { dump_ = dump; }
  void AddStats(RenderStats& st) override {
    st.livePerBounce.clear();
    if (opt_.collectStats)
      for (unsigned long long n : live_)
        if (n) st.livePerBounce.push_back(n);
  }

 private:
  const RenderOptions& opt_;
  int threads_;
  ThreadPool pool_;
  SceneView scene_;
  std::unique_ptr<TileGuideHost> guide_;
  std::unique_ptr<EnvGuideHost> envGuide_;  // --env-sampling guided
  std::vector<RayState> rays_[2];
  std::vector<Float4> throughput_[2];
  std::vector<Int4> info_[2];
  std::vector<Hit> hits_;
  std::vector<ShadowItem> shadows_;
  std::vector<int32_t> queues_;
  std::vector<int8_t> hitClass_;
  std::vector<unsigned long long> film_;
  std::vector<unsigned long long> oddFilm_;  // options.halfBuffers: the odd-numbered samples' sums; else empty
  WaveCounters counters_{};
  unsigned long long live_[kMaxStatBounces] = {};
  WaveView<L> view_{};
  RayDumpWriter* dump_ = nullptr;
  int passes_ = 0;
  std::vector<uint32_t> active_;  // adaptive sampling's pixels; empty: every pixel
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const SceneData& scene, const RenderOptions& options) {
  return std::make_unique<CpuBackend>(scene, options);
}

RenderResult RenderCpu(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress) {
  CpuBackend backend(scene, options);
  return RunPasses(options, backend, progress);
}

RenderResult RenderCpuDumpingRays(const SceneData& scene, const RenderOptions& options, const std::string& dir,
                                  const ProgressFn& progress) {
  RayDumpWriter dump(dir);
  CpuBackend backend(scene, options);
  backend.SetDump(&dump);
  return RunPasses(options, backend, progress);
}

}  // namespace tracer
