// @file pass_driver.cpp: RunPasses, the one pass loop every backend runs under, and the pool and pass sizes.
#include "tracer/host/pass_driver.h"

#include <algorithm>
#include <future>
#include <memory>
#include <stdexcept>

#include "tracer/core/film.h"
#include "tracer/host/pixel_batches.h"
#include "tracer/host/timing.h"

namespace tracer {

long long PoolSizeFor(const RenderOptions& opt, const PoolPolicy& policy) {
  const long long pixels = static_cast<long long>(opt.width) * opt.height;
  long long pool = opt.pathsInFlight;
  if (pool <= 0) pool = std::min<long long>(policy.maxPaths, policy.allSamples ? pixels * opt.spp : pixels);
  const long long m = std::max<long long>(1, policy.multiple);
  return std::max<long long>(m, (pool + m - 1) / m * m);
}

int SamplesPerPass(long long pixels, long long pool, int sppRemaining) {
  long long want = (4 * pool + pixels - 1) / std::max(1LL, pixels);
  return static_cast<int>(std::max(1LL, std::min<long long>(want, sppRemaining)));
}

int AdaptivePassSpp(const RenderOptions& opt, int sppDone) {
  const int batch = std::max(1, opt.adaptiveMinSpp / 8);
  if (sppDone < opt.adaptiveMinSpp) return std::min(batch, opt.adaptiveMinSpp - sppDone);
  return std::max(batch, sppDone / 8);
}

RenderParams MakeRenderParams(const RenderOptions& opt) {
  RenderParams rp{};
  rp.width = opt.width;
  rp.height = opt.height;
  rp.seed = opt.seed;
  rp.maxDepth = opt.maxDepth;
  rp.rouletteDepth = opt.rouletteDepth;
  rp.clamp = opt.clamp;
  rp.envBsdfOnly = opt.envSampling == EnvSampling::kBsdfOnly ? 1 : 0;
  rp.envPortalMix = opt.envSampling == EnvSampling::kPortals ? opt.envPortalMix : 0.0f;
  rp.envPortalByArea = opt.envPortalByArea ? 1 : 0;
  rp.envPortalLoop = opt.envPortalLoop ? 1 : 0;
  rp.envPortalAreaPoints = opt.envPortalAreaPoints ? 1 : 0;
  return rp;
}

LocalPassSchedule::LocalPassSchedule(const RenderOptions& opt, const ProgressFn& progress)
    : opt_(opt), progress_(progress) {}

void LocalPassSchedule::Begin(const Backend& backend, long long pool) {
  pool_ = pool;
  tileGuide_ = backend.HasTileGuide();
  sppDone_ = opt_.resume ? opt_.resume->sppDone : 0;
}

// Stop conditions, all at pass boundaries: --check-nan found one, the caller (signals), --time.
bool LocalPassSchedule::Stops(const PassReport& last) const {
  if (opt_.checkNan && last.firstBad != NonFiniteSample::kNone) return true;
  if (progress_ && !progress_(sppDone_, opt_.spp, *last.stats)) return true;
  return opt_.timeLimit > 0.0 && last.stats->seconds >= opt_.timeLimit;
}

PassStep LocalPassSchedule::Next(const PassReport& last) {
  PassStep step;  // kFinish
  if (last.spp > 0) {
    sppDone_ += last.spp;
    // The checkpoint first, then the stop conditions of the same pass.
    if (opt_.checkpoint && last.stats->seconds - lastCheckpoint_ >= opt_.checkpointSeconds) {
      lastCheckpoint_ = last.stats->seconds;
      stopCheckPending_ = true;
      afterCheckpoint_ = last;
      step.kind = PassStep::Kind::kCheckpoint;
      return step;
    }
    if (Stops(last)) return step;
  } else if (stopCheckPending_) {
    stopCheckPending_ = false;
    if (Stops(afterCheckpoint_)) return step;
  }
  if (sppDone_ >= opt_.spp || last.livePixels == 0) return step;
  if (tileGuide_ && IsTileRefreshPass(pass_) && refreshedPass_ != pass_) {
    refreshedPass_ = pass_;
    step.kind = PassStep::Kind::kRefreshGuide;
    step.refresh = refreshes_++;
    return step;
  }
  const long long pixels = last.livePixels > 0 ? last.livePixels : static_cast<long long>(opt_.width) * opt_.height;
  ++pass_;
  step.kind = PassStep::Kind::kPass;
  step.sampleBase = static_cast<uint32_t>(sppDone_);
  step.spp = SamplesPerPass(pixels, tileGuide_ ? std::min(pool_, kSteadyPassPool) : pool_, opt_.spp - sppDone_);
  if (opt_.adaptiveThreshold > 0.0f)
    step.spp = std::min(step.spp, AdaptivePassSpp(opt_, sppDone_));
  else if (opt_.varianceAov)
    step.spp = std::min(step.spp, std::max(1, opt_.spp / kVarianceBatches));
  return step;
}

bool LocalPassSchedule::CombineFilm(Backend& backend, HostFilm& film) {
  backend.ReadFilm(film.sum.data());
  if (!film.odd.empty()) backend.ReadOddFilm(film.odd.data());
  film.sppDone = sppDone_;
  return true;
}

RenderResult RunPasses(const RenderOptions& opt, Backend& backend, const ProgressFn& progress) {
  LocalPassSchedule schedule(opt, progress);
  return RunPasses(opt, backend, schedule);
}

namespace {

// --aov variance and --adaptive: each pixel's batch means, one batch per pass (pixel_batches.h). Adaptive sampling
// starts with every pixel active and, after each pass past the minimum, keeps those still noisy. Does nothing for a
// render without either.
class PassStatistics {
 public:
  explicit PassStatistics(const RenderOptions& opt)
      : opt_(opt), adaptive_(opt.adaptiveThreshold > 0.0f), on_(opt.varianceAov || adaptive_) {
    if (!on_) return;
    pool_ = std::make_unique<ThreadPool>(ThreadPool::ThreadsFor(opt.threads));  // the loops, on every core
    batches_.Reset(opt.width, opt.height, opt.resume ? opt.resume->sum : std::vector<unsigned long long>{},
                   pool_.get());
    now_.Reset(opt.width, opt.height);
    activeSpp_ = opt.resume ? opt.resume->sppDone : 0;
    if (!adaptive_) return;
    active_.resize(static_cast<size_t>(opt.width) * opt.height);
    for (uint32_t p = 0; p < active_.size(); ++p) active_[p] = p;
  }

  // The pixels the last pass sampled.
  uint64_t SampledPixels() const {
    return adaptive_ ? active_.size() : static_cast<uint64_t>(opt_.width) * static_cast<uint64_t>(opt_.height);
  }

  // After a pass of `spp` samples per pixel: its batch, and under --adaptive the pixels that stop (which the backend
  // no longer samples, and `last` counts).
  void AfterPass(Backend& backend, int spp, PassReport& last) {
    if (!on_) return;
    backend.ReadFilm(now_.sum.data());  // (every value overwritten)
    batches_.Add(now_.sum, active_, spp);
    activeSpp_ += spp;
    if (!adaptive_ || activeSpp_ < opt_.adaptiveMinSpp) return;
    std::vector<uint32_t> still = batches_.StillActive(active_, opt_.adaptiveThreshold);
    if (still.size() == active_.size()) return;
    active_.swap(still);
    if (!active_.empty()) backend.SetActivePixels(active_);
    last.livePixels = static_cast<long long>(active_.size());
  }

  // Into the result: each pixel's samples and whether every pixel converged (--adaptive), the variance (--aov).
  void Finish(HostFilm& film, RenderResult& result) const {
    if (adaptive_) film.pixelSpp = batches_.Samples();
    result.converged = adaptive_ && active_.empty();
    if (!opt_.varianceAov) return;
    result.variance = batches_.Variance();
    result.varianceBatches = batches_.LeastBatches();
  }

 private:
  const RenderOptions& opt_;
  const bool adaptive_, on_;
  std::unique_ptr<ThreadPool> pool_;
  PixelBatches batches_;          // (runs on pool_)
  std::vector<uint32_t> active_;  // adaptive: ascending; else empty (every pixel)
  int activeSpp_ = 0;             // samples of each pixel still active
  HostFilm now_;                  // the film after the last pass
};

}  // namespace

RenderResult RunPasses(const RenderOptions& opt, Backend& backend, PassSchedule& schedule) {
  // Half-buffers continue only a film that kept them (a checkpoint of a render without them has no odd sums); a film
  // with them resumed into a render without them just leaves them out.
  if (opt.halfBuffers && opt.resume && opt.resume->odd.size() != opt.resume->sum.size())
    throw std::invalid_argument("RunPasses: half-buffers (--denoise) cannot continue a film without its odd sums");
  const long long pool = PoolSizeFor(opt, backend.Pool());
  schedule.Prepare(backend, pool);
  const Stopwatch allocateClock;
  backend.Allocate(pool);
  const double allocateSeconds = allocateClock.Seconds();
  schedule.Begin(backend, pool);

  RenderResult result;
  result.backend = backend.Name();
  RenderStats& st = result.stats;
  st.poolPaths = pool;
  RenderParams rp = MakeRenderParams(opt);
  // This process's film, summed over the processes where the schedule says so; with half-buffers, the odd sums too
  // (so that a checkpoint keeps them).
  auto combinedFilm = [&](HostFilm& film) {
    if (film.sum.empty()) film.Reset(opt.width, opt.height);
    if (opt.halfBuffers && film.odd.empty()) film.odd.assign(film.sum.size(), 0ull);
    film.dropped = backend.Totals().dropped;
    return schedule.CombineFilm(backend, film);
  };

  PassReport last;
  last.stats = &st;
  PassStatistics statistics(opt);
  // The final film's memory, zeroed while the first passes render: a big film's fresh pages would otherwise fault
  // after the last pass (docs/PERFORMANCE.md).
  HostFilm film;
  std::future<void> filmReady = std::async(std::launch::async, [&] {
    film.Reset(opt.width, opt.height);
    if (opt.halfBuffers) film.odd.assign(film.sum.size(), 0ull);
  });
  Stopwatch clock;
  for (;;) {
    const PassStep step = schedule.Next(last);
    last.spp = 0;
    if (step.kind == PassStep::Kind::kFinish) break;
    if (step.kind == PassStep::Kind::kRefreshGuide) {
      backend.RefreshTileGuide(step.refresh, schedule.GuideShare());
      rp.guideLights = 1;
      continue;
    }
    if (step.kind == PassStep::Kind::kCheckpoint) {
      HostFilm snapshot;
      if (combinedFilm(snapshot)) opt.checkpoint(snapshot);
      continue;
    }
    rp.sampleBase = step.sampleBase;
    backend.RunPass(rp, step.spp);
    const PassTotals totals = backend.Totals();
    st.extensionRays = totals.extensionRays;
    st.shadowRays = totals.shadowRays;
    st.droppedSamples = totals.dropped;
    st.primaryRays += statistics.SampledPixels() * static_cast<uint64_t>(step.spp);
    st.seconds = clock.Seconds();
    last.spp = step.spp;
    last.firstBad = totals.firstBad;
    statistics.AfterPass(backend, step.spp, last);
  }

  filmReady.get();
  const Stopwatch readback;
  combinedFilm(film);
  st.readbackSeconds = readback.Seconds();
  st.seconds = clock.Seconds();
  backend.AddStats(st);
  st.allocateSeconds = allocateSeconds;
  unsigned long long firstBad = backend.Totals().firstBad;
  schedule.CombineStats(st, firstBad);
  result.width = opt.width;
  result.height = opt.height;
  result.sppDone = film.sppDone;
  statistics.Finish(film, result);
  const Stopwatch resolve;
  result.rgb = film.Resolve();
  st.resolveSeconds = resolve.Seconds();
  result.film = std::move(film);
  result.firstNonFinite = NonFiniteSample::Decode(firstBad);
  return result;
}

}  // namespace tracer
