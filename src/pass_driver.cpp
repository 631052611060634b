// @file pass_driver.cpp: RunPasses, the one pass loop every backend runs under, and the pool and pass sizes.
#include "tracer/host/pass_driver.h"

#include <algorithm>

#include "tracer/core/film.h"
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

RenderParams MakeRenderParams(const RenderOptions& opt) {
  RenderParams rp{};
  rp.width = opt.width;
  rp.height = opt.height;
  rp.seed = opt.seed;
  rp.maxDepth = opt.maxDepth;
  rp.rouletteDepth = opt.rouletteDepth;
  rp.clamp = opt.clamp;
  rp.envBsdfOnly = opt.envSampling == EnvSampling::kBsdfOnly ? 1 : 0;
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
  if (sppDone_ >= opt_.spp) return step;
  if (tileGuide_ && IsTileRefreshPass(pass_) && refreshedPass_ != pass_) {
    refreshedPass_ = pass_;
    step.kind = PassStep::Kind::kRefreshGuide;
    step.refresh = refreshes_++;
    return step;
  }
  const long long pixels = static_cast<long long>(opt_.width) * opt_.height;
  ++pass_;
  step.kind = PassStep::Kind::kPass;
  step.sampleBase = static_cast<uint32_t>(sppDone_);
  step.spp = SamplesPerPass(pixels, pool_, opt_.spp - sppDone_);
  if (opt_.varianceAov) step.spp = std::min(step.spp, std::max(1, opt_.spp / kVarianceBatches));
  return step;
}

bool LocalPassSchedule::CombineFilm(HostFilm& film) {
  film.sppDone = sppDone_;
  return true;
}

RenderResult RunPasses(const RenderOptions& opt, Backend& backend, const ProgressFn& progress) {
  LocalPassSchedule schedule(opt, progress);
  return RunPasses(opt, backend, schedule);
}

RenderResult RunPasses(const RenderOptions& opt, Backend& backend, PassSchedule& schedule) {
  const long long pixels = static_cast<long long>(opt.width) * opt.height;
  const long long pool = PoolSizeFor(opt, backend.Pool());
  backend.Allocate(pool);
  schedule.Begin(backend, pool);

  RenderResult result;
  result.backend = backend.Name();
  RenderStats& st = result.stats;
  RenderParams rp = MakeRenderParams(opt);
  // This process's film, summed over the processes where the schedule says so.
  auto combinedFilm = [&](HostFilm& film) {
    film.Reset(opt.width, opt.height);
    film.dropped = backend.Totals().dropped;
    backend.ReadFilm(film);
    return schedule.CombineFilm(film);
  };

  // --aov variance: each pass's mean per pixel and channel, from the film's growth (batch means).
  const bool variance = opt.varianceAov;
  HostFilm before;
  std::vector<double> s1, s2;
  double samples = 0.0;
  int batches = 0;
  if (variance) {
    before.Reset(opt.width, opt.height);
    if (opt.resume) before.sum = opt.resume->sum;
    s1.assign(before.sum.size(), 0.0);
    s2.assign(before.sum.size(), 0.0);
  }
  auto addBatch = [&](int spp) {
    HostFilm now;
    now.Reset(opt.width, opt.height);
    backend.ReadFilm(now);
    const double n = static_cast<double>(spp), scale = 1.0 / (kFilmScale * n);
    for (size_t i = 0; i < now.sum.size(); ++i) {
      const double m = static_cast<double>(now.sum[i] - before.sum[i]) * scale;
      s1[i] += n * m;
      s2[i] += n * m * m;
    }
    samples += n;
    ++batches;
    before.sum.swap(now.sum);
  };

  Stopwatch clock;
  PassReport last;
  last.stats = &st;
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
    st.primaryRays += static_cast<uint64_t>(pixels) * static_cast<uint64_t>(step.spp);
    st.seconds = clock.Seconds();
    last.spp = step.spp;
    last.firstBad = totals.firstBad;
    if (variance) addBatch(step.spp);
  }

  HostFilm film;
  combinedFilm(film);
  st.seconds = clock.Seconds();
  backend.AddStats(st);
  unsigned long long firstBad = backend.Totals().firstBad;
  schedule.CombineStats(st, firstBad);
  result.width = opt.width;
  result.height = opt.height;
  result.sppDone = film.sppDone;
  result.rgb = film.Resolve();
  if (variance) {
    result.varianceBatches = batches;
    result.variance.assign(s1.size(), 0.0f);
    if (batches >= 2)
      for (size_t i = 0; i < s1.size(); ++i)
        result.variance[i] =
            static_cast<float>(std::max(0.0, s2[i] - s1[i] * s1[i] / samples) / (batches - 1) / samples);
  }
  result.film = std::move(film);
  result.firstNonFinite = NonFiniteSample::Decode(firstBad);
  return result;
}

}  // namespace tracer
