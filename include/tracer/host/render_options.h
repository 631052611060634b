// @file render_options.h: what a render is asked to do, for every backend.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "tracer/core/compaction.h"
#include "tracer/host/film.h"

namespace tracer {

enum class LightSampling { kPower, kTiles };
// Next-event estimation of the environment: kPortals (the default, --env-sampling portals: where the scene has
// portals, kImportance mixed with sampling through them, core/portals.h; elsewhere kImportance itself), kImportance
// (--env-sampling importance, portals' naive twin: the map's 2D distribution, or the sphere for a constant colour), or
// none (kBsdfOnly, --env-sampling uniform, kImportance's naive twin: only BSDF-sampled rays that leave the scene see
// the environment), or kGuided (--env-sampling guided: kImportance mixed with a per-tile directional guide learned
// before the render, core/env_guide.h; for interiors lit through openings that have no portals).
enum class EnvSampling { kImportance, kBsdfOnly, kGuided, kPortals };
// The min-plus step of the tile guide: kBand over the banded dissimilarities (core/minplus.h; memory linear in
// the tiles), or one of the dense kernels over the T x T matrix (the profile's teaching pairs; T^2 memory).
enum class MinPlusKernel { kNaive, kCoalesced, kTiled, kDpx, kBand };

// Called at pass boundaries with the film so far (for --checkpoint).
using CheckpointFn = std::function<void(const HostFilm&)>;

struct RenderOptions {
  int width = 512, height = 512;
  int spp = 64;
  uint32_t seed = 1;
  int maxDepth = 8;
  int rouletteDepth = 3;
  float clamp = 0.0f;
  int threads = 0;              // CPU: 0 = all cores
  long long pathsInFlight = 0;  // 0 = automatic
  double timeLimit = 0.0;       // seconds; 0 = none; checked at pass boundaries
  // --aov variance: passes of at most max(1, spp / kVarianceBatches) samples, whose means give
  // RenderResult::variance
  bool varianceAov = false;
  // --denoise: the film also sums the odd-numbered samples apart (HostFilm::odd), the denoiser's half-buffers
  bool halfBuffers = false;
  // GPU: the camera rays' hits of samples 0 to firstHitSamples - 1 are kept on the device (DeviceFilmView::firstHits),
  // so that the first-hit features (--denoise's, --aov's) are computed from them instead of tracing the rays again;
  // 0: none (the CPU renderer keeps none).
  int firstHitSamples = 0;
  // --adaptive: after adaptiveMinSpp samples, a tile of 8x8 pixels stops sampling once its pixels' relative standard
  // error (pixel_batches.h) is at most adaptiveThreshold; 0: off. Passes of at most max(1, min / 8) samples
  // until the minimum, then at most an eighth of the samples so far: the batches behind each pixel's error.
  float adaptiveThreshold = 0.0f;
  int adaptiveMinSpp = 64;
  bool quiet = false;
  // GPU variants, each the naive twin of an optimisation
  bool naiveLayout = false;
  Compaction compaction = Compaction::kWarpAggregated;
  bool singleShadeKernel = false;  // one shade kernel switching on the material instead of per-class queues
  bool plainLoads = false;         // BVH and scene through plain loads instead of the read-only path
  bool pageableReadback = false;
  // GPU, compacted queues: each bounce's shadow rays traced before the next bounce starts (--serial-shadows), not on a
  // second stream beside it (which needs a second shadow buffer: 64 bytes a pool slot).
  bool serialShadows = false;
  // GPU, compacted queues: the miss stage and each material class's shade stage one after another (--serial-shading),
  // not side by side on streams of their own.
  bool serialShading = false;
  bool binaryBvh = false;  // traverse the binary BVH (two-box nodes) instead of the compressed wide one
  // GPU, wide BVH: the intersect stage (and --trace-rays) on persistent threads that hand a warp's idle lanes new rays
  // whenever fewer than this many of its 32 lanes still trace; 0 (--one-thread-per-ray, the naive twin): one per ray.
  int persistentRefill = 24;
  // GPU, wide BVH, with persistentRefill > 0: the first bounce (the camera's rays, in pixel order: coherent, so a
  // warp's lanes finish together and refills gain nothing) traced one thread per ray, the later ones persistent.
  // Off (an explicit --persistent N, the naive twin): every bounce persistent.
  bool perRayCameraBounce = true;
  // GPU, compacted: sort extension rays after the first bounce by direction octant and origin (core/ray_sort.h).
  bool sortRays = false;
  // light sampling
  LightSampling lightSampling = LightSampling::kPower;
  EnvSampling envSampling = EnvSampling::kPortals;
  int lightClusters = 256;
  int tileSize = 16;
  float tileGuideMix = 0.5f;
  int envGuideTile = 16;     // --env-guide-tile: pixels a side of the environment guide's tiles
  float envGuideMix = 0.5f;  // --env-guide-mix: the guide's share of environment samples, in (0, 1)
  int envGuideDepths = 1;    // --env-guide-depths: path vertices of depth below this use the guide
  // --env-portal-mix: the portals' share of environment samples, in (0, 1]; negative (auto): the environment's own
  // (EnvParams::portalMix, host/env_map.h)
  float envPortalMix = -1.0f;
  bool envPortalByArea = false;      // --naive-portal-pick: portal triangles picked by area (core/portals.h)
  bool envPortalAreaPoints = false;  // --naive-portal-point: portal points uniform in area (core/portals.h)
  bool envPortalLoop = false;        // --naive-portal-pdf: portal samples' pdf summed over every piece (core/portals.h)
  MinPlusKernel minPlus = MinPlusKernel::kBand;  // --minplus naive|coalesced|tiled|dpx: a dense kernel (GPU only)
  bool naiveReduction = false;
  // Long renders: continue from a film (its sppDone samples per pixel are kept and sampling continues at
  // sample index sppDone, so the result equals an uninterrupted render), and save the film regularly.
  const HostFilm* resume = nullptr;
  CheckpointFn checkpoint;
  double checkpointSeconds = 60.0;
  bool checkNan = false;       // stop after the pass in which a non-finite sample appeared (--check-nan)
  bool collectStats = false;   // time each stage with CUDA events and count lanes, classes and live paths
  bool regenerate = true;      // refill the pool with new paths as old ones end (off: one generation per pass)
  bool timePerBounce = false;  // with collectStats: time intersect separately for each bounce
};

// Name of a min-plus kernel as the CLI spells it ("naive", "coalesced", "tiled", "dpx"), and the reverse;
// the latter returns false for an unknown name.
const char* MinPlusKernelName(MinPlusKernel k);
bool MinPlusKernelFromName(const std::string& name, MinPlusKernel* k);

}  // namespace tracer
