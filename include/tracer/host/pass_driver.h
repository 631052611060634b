// @file pass_driver.h: one pass driver for every backend. RunPasses owns the frame: pool sizing, the pass
// loop and its sample ranges, tile-guide refreshes, checkpoints, stop conditions (--spp, --time, signals,
// --check-nan) and the result. A Backend only runs what the driver asks for: allocate a pool, refresh the
// guide, render one pass of samples into its film, read the film back.
//
// A pass is a range of sample indices [sampleBase, sampleBase + spp) over every pixel. Samples are keyed by
// (seed, pixel, sample index) and the film sums in fixed point, so passes can be run in any order and on any
// backend and the sums still agree bit for bit: a distributed scheduler (MPI, mpi_driver.h) hands passes to
// ranks and adds their films. A PassSchedule decides the steps of the loop: LocalPassSchedule (one process,
// the default) or a distributed render's.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

// How one process takes part in a tile-guide refresh. Its statistics are a (sum, count) pair per round and
// tile, laid out [round][tile][2]; the process computes those of the tiles t with t % parts == part and leaves
// the others 0, then `combine` (when set) adds the values of every process in place (MPI_Allreduce). Each
// value is then the one process's that computed it, plus zeros, so every process applies the same statistics,
// in the same order, as one process alone would: the guide does not depend on the number of processes.
struct TileStatsShare {
  int part = 0, parts = 1;
  std::function<void(std::vector<float>& values)> combine;
  bool Mine(int tile) const { return tile % parts == part; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;  // "cpu (N threads)", "cuda (GPU name)"
  virtual PoolPolicy Pool() const = 0;
  // Allocates the path pool and the film; the film starts from options.resume when given (with options.halfBuffers,
  // the odd film from its odd sums, which RunPasses requires it to have).
  virtual void Allocate(long long poolPaths) = 0;
  virtual bool HasTileGuide() const = 0;
  // Refresh number `refresh` of the tile guide (statistics, costs, min-plus propagation, cdfs), its statistics
  // shared with other processes as `share` says (the default: this process computes all of them).
  virtual void RefreshTileGuide(int refresh, const TileStatsShare& share) = 0;
  // Adaptive sampling: the passes from now on sample only these pixels (ascending; never empty).
  virtual void SetActivePixels(const std::vector<uint32_t>& pixels) = 0;
  // Renders samples [rp.sampleBase, rp.sampleBase + spp) of every pixel (or of the active ones) into the film;
  // returns when done.
  virtual void RunPass(const RenderParams& rp, int spp) = 0;
  virtual PassTotals Totals() const = 0;
  // Copies the film's fixed-point sums (width x height x 3 values) to `sum`.
  virtual void ReadFilm(unsigned long long* sum) = 0;
  // With options.halfBuffers: the same of the odd-numbered samples' sums (HostFilm::odd).
  virtual void ReadOddFilm(unsigned long long* sum) = 0;
  // At the end: what only this backend measures (per-stage ms, lanes per warp, live paths, peak memory).
  virtual void AddStats(RenderStats& stats) = 0;
};

// One step of the pass loop.
struct PassStep {
  enum class Kind { kPass, kRefreshGuide, kCheckpoint, kFinish };
  Kind kind = Kind::kFinish;
  int refresh = 0;          // kRefreshGuide: the refresh number
  uint32_t sampleBase = 0;  // kPass: render samples [sampleBase, sampleBase + spp)
  int spp = 0;
};

// What the process did in the step before: a pass of `spp` samples per pixel (0 after any other step), with
// the process's running statistics (rays, seconds) and first non-finite sample.
struct PassReport {
  int spp = 0;
  long long livePixels = -1;  // adaptive sampling: the pixels still sampling (0: every one stopped); -1: every pixel
  const RenderStats* stats = nullptr;
  unsigned long long firstBad = NonFiniteSample::kNone;
};

// Decides the steps of RunPasses: which sample ranges this process renders, when the tile guide is
// refreshed, when a checkpoint is saved and when the render stops; and sums the film over the processes.
class PassSchedule {
 public:
  virtual ~PassSchedule() = default;
  // Before the backend allocates its pool of `pool` paths (again if a backend that ran out of memory hands over
  // to another): an MPI job's rank 0 starts handing out passes, so that ranks waiting for work need not wait
  // for its allocation.
  virtual void Prepare(const Backend& backend, long long pool) { (void)backend, (void)pool; }
  // Once, after the backend allocated its pool of `pool` paths, before the first Next.
  virtual void Begin(const Backend& backend, long long pool) = 0;
  virtual PassStep Next(const PassReport& last) = 0;
  // How this process takes part in the refresh that Next just asked for.
  virtual TileStatsShare GuideShare() { return {}; }
  // Reads the backend's film and sums it (sums and dropped samples, film.dropped holding this process's) over
  // every process into `film` on the process that writes files, sets film.sppDone to the samples per pixel it
  // holds, and returns true there; false on the others, whose `film` it may leave empty. `film` comes sized for the
  // image (HostFilm::Reset), and with film.odd sized too where the odd samples' sums are wanted as well.
  virtual bool CombineFilm(Backend& backend, HostFilm& film) = 0;
  // At the end, after CombineFilm: the statistics of every process summed (rays, dropped samples) and the
  // first non-finite sample (the smallest packed value), on the process that writes.
  virtual void CombineStats(RenderStats& stats, unsigned long long& firstBad) { (void)stats, (void)firstBad; }
};

// One process renders every pass: today's schedule. Stops at --spp, at the first pass boundary after --time,
// after the pass that found a non-finite sample (--check-nan), or when `progress` returns false (signals);
// saves a checkpoint every options.checkpointSeconds.
class LocalPassSchedule final : public PassSchedule {
 public:
  LocalPassSchedule(const RenderOptions& options, const ProgressFn& progress);
  void Begin(const Backend& backend, long long pool) override;
  PassStep Next(const PassReport& last) override;
  bool CombineFilm(Backend& backend, HostFilm& film) override;

 private:
  bool Stops(const PassReport& last) const;
  const RenderOptions& opt_;
  ProgressFn progress_;
  long long pool_ = 1;
  bool tileGuide_ = false;
  int sppDone_ = 0, pass_ = 0, refreshes_ = 0, refreshedPass_ = -1;
  double lastCheckpoint_ = 0.0;
  bool stopCheckPending_ = false;  // a checkpoint came between a pass and its stop conditions
  PassReport afterCheckpoint_;
};

// Renders options.spp samples per pixel (less when stopped early) with the backend, alone.
RenderResult RunPasses(const RenderOptions& options, Backend& backend, const ProgressFn& progress = {});
// The same loop with the steps `schedule` decides; the result's film and statistics are the combined ones on
// the process where CombineFilm returns true; elsewhere this process's own statistics and whatever film
// CombineFilm left.
RenderResult RunPasses(const RenderOptions& options, Backend& backend, PassSchedule& schedule);

// The path pool's size for these options and policy.
long long PoolSizeFor(const RenderOptions& options, const PoolPolicy& policy);

// Samples per pixel per pass: enough work to fill a pool of `pool` paths a few times.
int SamplesPerPass(long long pixels, long long pool, int sppRemaining);
// Renders with the tile guide (learned between passes) and the MPI driver's work units size their passes as if the
// pool held at most this many paths, the GPU's pool before it grew with the device's memory: the guide is refreshed
// after as many samples, and ranks balance over as many units, as when each was measured (docs/PERFORMANCE.md).
constexpr long long kSteadyPassPool = 1LL << 21;
// --aov variance caps a pass at spp / kVarianceBatches samples (at least 1), so a frame of spp >= 16 has at least
// this many passes (batches).
constexpr int kVarianceBatches = 16;
// Adaptive sampling's cap on a pass after `sppDone` samples per pixel (RenderOptions::adaptiveThreshold).
int AdaptivePassSpp(const RenderOptions& options, int sppDone);

// Passes before which the tile guide is refreshed: 0, 1, 2, 4, 8, ... ("every few passes"). The guide changes
// only between passes, so each pass samples one fixed distribution and stays unbiased.
inline bool IsTileRefreshPass(int pass) { return (pass & (pass - 1)) == 0; }

// The per-render constants that the stage functions read, from the options.
RenderParams MakeRenderParams(const RenderOptions& options);

}  // namespace tracer
