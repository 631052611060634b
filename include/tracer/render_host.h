// @file render_host.h: what a render is asked to do and what it returns, for the CPU and CUDA renderers.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tracer/integrator.h"
#include "tracer/scene_data_host.h"

namespace tracer {

enum class Compaction { kWarpAggregated, kPerThreadAtomic, kNone };
enum class LightSampling { kPower, kTiles };
enum class MinPlusKernel { kNaive, kCoalesced, kTiled, kDpx };

// Film in fixed point, 3 per pixel; also the checkpoint format's payload.
struct HostFilm {
  int width = 0, height = 0;
  std::vector<unsigned long long> sum;
  unsigned long long dropped = 0;
  int sppDone = 0;
  void Reset(int w, int h);
  std::vector<float> Resolve() const;  // sum / scale / sppDone
};

// Called at pass boundaries with the film so far (for --checkpoint).
using CheckpointFn = std::function<void(const HostFilm&)>;

struct RenderOptions {
  int width = 512, height = 512;
  int spp = 64;
  uint32_t seed = 1;
  int maxDepth = 8;
  int rouletteDepth = 3;
  float clamp = 0.0f;
  int threads = 0;               // CPU: 0 = all cores
  long long pathsInFlight = 0;   // 0 = automatic
  double timeLimit = 0.0;        // seconds; 0 = none; checked at pass boundaries
  bool quiet = false;
  // GPU variants, each the naive twin of an optimisation
  bool naiveLayout = false;
  Compaction compaction = Compaction::kWarpAggregated;
  bool singleShadeKernel = false;  // one shade kernel switching on the material instead of per-class queues
  bool plainLoads = false;         // BVH and scene through plain loads instead of the read-only path
  bool pageableReadback = false;
  // light sampling
  LightSampling lightSampling = LightSampling::kPower;
  int lightClusters = 256;
  int tileSize = 16;
  float tileGuideMix = 0.5f;
  MinPlusKernel minPlus = MinPlusKernel::kDpx;  // fastest on an H200 (see README); --naive-minplus for the naive one
  bool naiveReduction = false;
  // Long renders: continue from a film (its sppDone samples per pixel are kept and sampling continues at
  // sample index sppDone, so the result equals an uninterrupted render), and save the film regularly.
  const HostFilm* resume = nullptr;
  CheckpointFn checkpoint;
  double checkpointSeconds = 60.0;
  bool checkNan = false;      // stop after the pass in which a non-finite sample appeared (--check-nan)
  bool collectStats = false;  // time each stage with CUDA events and count lanes, classes and live paths
  bool regenerate = true;     // refill the pool with new paths as old ones end (off: one generation per pass)
  bool timePerBounce = false; // with collectStats: time intersect separately for each bounce
};

struct RenderStats {
  uint64_t extensionRays = 0;   // closest-hit rays traced (primary included)
  uint64_t primaryRays = 0;
  uint64_t shadowRays = 0;
  uint64_t droppedSamples = 0;  // non-finite contributions counted and dropped
  std::vector<uint64_t> livePerBounce;  // rays entering intersect at each bounce (when collected)
  double seconds = 0.0;         // rendering only, not loading or building
  std::vector<std::pair<std::string, double>> kernelMs;  // per stage, summed (GPU: CUDA events)
  double activeLanesShade = 0.0;  // average active lanes per warp in the shade kernels (GPU, collected)
  double classesPerShadeWarp = 0.0;  // average distinct material classes among a shade warp's lanes
  size_t peakDeviceBytes = 0;
};

// The first non-finite sample of a render: its pixel and the depth of the path vertex that produced it
// (the smallest pixel when several passes or threads found one).
struct NonFiniteSample {
  bool found = false;
  uint32_t pixel = 0, depth = 0;
  static NonFiniteSample Decode(unsigned long long packed) {
    NonFiniteSample s;
    s.found = packed != kNoBadSample;
    s.pixel = static_cast<uint32_t>(packed >> 32);
    s.depth = static_cast<uint32_t>(packed & 0xffffffffu);
    return s;
  }
};

struct RenderResult {
  NonFiniteSample firstNonFinite;
  std::vector<float> rgb;  // linear radiance, width*height*3, row 0 at the top
  HostFilm film;           // the fixed-point sums behind rgb
  int width = 0, height = 0;
  int sppDone = 0;
  std::string backend;     // "cpu" or "cuda (GPU name)"
  RenderStats stats;
};

// Called after each pass with (samples per pixel done, samples per pixel asked for, rays so far).
// Returning false stops the render at that pass boundary.
using ProgressFn = std::function<bool(int sppDone, int sppTotal, const RenderStats&)>;

// Name of a min-plus kernel as the CLI spells it ("naive", "coalesced", "tiled", "dpx"), and the reverse;
// the latter returns false for an unknown name.
const char* MinPlusKernelName(MinPlusKernel k);
bool MinPlusKernelFromName(const std::string& name, MinPlusKernel* k);

// Median of timed repeats (0 for none).
double Median(std::vector<double> v);

// The per-render constants that the stage functions read, from the options.
RenderParams MakeRenderParams(const RenderOptions& options);

// Samples per pixel per pass: enough work to fill a pool of `pool` paths a few times.
int SamplesPerPass(long long pixels, long long pool, int sppRemaining);

RenderResult RenderCpu(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress = {});

}  // namespace tracer
