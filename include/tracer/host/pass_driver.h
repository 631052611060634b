// @file pass_driver.h: one pass driver for every backend. RunPasses owns the frame: pool sizing, the pass
// loop and its sample ranges, tile-guide refreshes, checkpoints, stop conditions (--spp, --time, signals,
// --check-nan) and the result. A Backend only runs what the driver asks for: allocate a pool, refresh the
// guide, render one pass of samples into its film, read the film back.
//
// A pass is a range of sample indices [sampleBase, sampleBase + spp) over every pixel. Samples are keyed by
// (seed, pixel, sample index) and the film sums in fixed point, so passes can be run in any order and on any
// backend and the sums still agree bit for bit: a distributed scheduler (MPI) can hand passes to ranks and
// add their films.
#pragma once
#include <cstdint>
#include <string>

#include "tracer/core/render_params.h"
#include "tracer/host/render_options.h"
#include "tracer/host/render_result.h"

namespace tracer {

// How a backend wants its path pool sized when --paths-in-flight is 0.
struct PoolPolicy {
  long long maxPaths;  // at most this many paths in flight
  bool allSamples;     // true: up to pixels x spp paths (GPU); false: up to one path per pixel (CPU)
  long long multiple;  // the size (also a user-given one) is rounded up to a multiple of this, at least one
};

// Running totals of a render, after the last pass.
struct PassTotals {
  uint64_t extensionRays = 0, shadowRays = 0, dropped = 0;
  unsigned long long firstBad = NonFiniteSample::kNone;  // packed (pixel << 32 | depth), as FilmView
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;  // "cpu (N threads)", "cuda (GPU name)"
  virtual PoolPolicy Pool() const = 0;
  // Allocates the path pool and the film; the film starts from options.resume when given.
  virtual void Allocate(long long poolPaths) = 0;
  virtual bool HasTileGuide() const = 0;
  // Refresh number `refresh` of the tile guide (statistics, costs, min-plus propagation, cdfs).
  virtual void RefreshTileGuide(int refresh) = 0;
  // Renders samples [rp.sampleBase, rp.sampleBase + spp) of every pixel into the film; returns when done.
  virtual void RunPass(const RenderParams& rp, int spp) = 0;
  virtual PassTotals Totals() const = 0;
  // Copies the film's fixed-point sums into film.sum (already sized for the image).
  virtual void ReadFilm(HostFilm& film) = 0;
  // At the end: what only this backend measures (per-stage ms, lanes per warp, live paths, peak memory).
  virtual void AddStats(RenderStats& stats) = 0;
};

// Renders options.spp samples per pixel (less when stopped early) with the backend.
RenderResult RunPasses(const RenderOptions& options, Backend& backend, const ProgressFn& progress = {});

// The path pool's size for these options and policy.
long long PoolSizeFor(const RenderOptions& options, const PoolPolicy& policy);

// Samples per pixel per pass: enough work to fill a pool of `pool` paths a few times.
int SamplesPerPass(long long pixels, long long pool, int sppRemaining);

// Passes before which the tile guide is refreshed: 0, 1, 2, 4, 8, ... ("every few passes"). The guide changes
// only between passes, so each pass samples one fixed distribution and stays unbiased.
inline bool IsTileRefreshPass(int pass) { return (pass & (pass - 1)) == 0; }

// The per-render constants that the stage functions read, from the options.
RenderParams MakeRenderParams(const RenderOptions& options);

}  // namespace tracer
