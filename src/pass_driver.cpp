// @file pass_driver.cpp: RunPasses, the one pass loop every backend runs under, and the pool and pass sizes.
#include "tracer/host/pass_driver.h"

#include <algorithm>

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
  return rp;
}

RenderResult RunPasses(const RenderOptions& opt, Backend& backend, const ProgressFn& progress) {
  const long long pixels = static_cast<long long>(opt.width) * opt.height;
  const long long pool = PoolSizeFor(opt, backend.Pool());
  backend.Allocate(pool);

  RenderResult result;
  result.backend = backend.Name();
  RenderStats& st = result.stats;
  RenderParams rp = MakeRenderParams(opt);
  int sppDone = opt.resume ? opt.resume->sppDone : 0;
  auto readFilm = [&](HostFilm& film) {
    film.Reset(opt.width, opt.height);
    film.sppDone = sppDone;
    film.dropped = backend.Totals().dropped;
    backend.ReadFilm(film);
  };

  Stopwatch clock;
  double lastCheckpoint = 0.0;
  for (int pass = 0, refreshes = 0; sppDone < opt.spp;) {
    const int passSpp = SamplesPerPass(pixels, pool, opt.spp - sppDone);
    if (backend.HasTileGuide() && IsTileRefreshPass(pass)) {
      backend.RefreshTileGuide(refreshes++);
      rp.guideLights = 1;
    }
    ++pass;
    rp.sampleBase = static_cast<uint32_t>(sppDone);
    backend.RunPass(rp, passSpp);
    sppDone += passSpp;

    const PassTotals totals = backend.Totals();
    st.extensionRays = totals.extensionRays;
    st.shadowRays = totals.shadowRays;
    st.droppedSamples = totals.dropped;
    st.primaryRays += static_cast<uint64_t>(pixels) * static_cast<uint64_t>(passSpp);
    const double now = clock.Seconds();
    st.seconds = now;
    if (opt.checkpoint && now - lastCheckpoint >= opt.checkpointSeconds) {
      HostFilm snapshot;
      readFilm(snapshot);
      opt.checkpoint(snapshot);
      lastCheckpoint = now;
    }
    // Stop conditions, all at pass boundaries: --check-nan found one, the caller (signals), --time.
    if (opt.checkNan && totals.firstBad != NonFiniteSample::kNone) break;
    if (progress && !progress(sppDone, opt.spp, st)) break;
    if (opt.timeLimit > 0.0 && st.seconds >= opt.timeLimit) break;
  }

  HostFilm film;
  readFilm(film);
  st.seconds = clock.Seconds();
  backend.AddStats(st);
  result.width = opt.width;
  result.height = opt.height;
  result.sppDone = sppDone;
  result.rgb = film.Resolve();
  result.film = std::move(film);
  result.firstNonFinite = NonFiniteSample::Decode(backend.Totals().firstBad);
  return result;
}

}  // namespace tracer
