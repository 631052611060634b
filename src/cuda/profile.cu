// @file profile.cu: --profile and --benchmark: each optimisation against its naive twin, timed in one process
// (median of repeats after a warm-up; kernels timed with CUDA events), with the evidence that explains it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profile_builders.h"
#include "tracer/core/light_tiles.h"
#include "tracer/core/minplus.h"
#include "tracer/core/ray_sort.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/minplus_launch.h"
#include "tracer/cuda/profile_env.h"
#include "tracer/cuda/tile_stats_launch.h"
#include "tracer/host/backends.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/denoise.h"
#include "tracer/host/file_util.h"
#include "tracer/host/json_writer.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/profile.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/timing.h"
#include "tracer/host/trace_rays.h"
#include "tracer/host/version.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {
namespace {

// One configuration, measured: the whole render (median wall time, no instrumentation) and, from separate
// instrumented runs, the median time of each stage and the statistics.
struct Measurement {
  std::string label;
  double renderMs = 0.0;
  std::map<std::string, double> kernelMs;
  RenderStats stats;
  int spp = 0;
  long long pixels = 0;
  double SamplesPerSecond() const { return static_cast<double>(pixels) * spp / (renderMs * 1e-3); }
  double Kernel(const std::string& k) const {
    auto it = kernelMs.find(k);
    return it == kernelMs.end() ? 0.0 : it->second;
  }
  double ShadeMs() const {
    double s = 0;
    for (auto& kv : kernelMs)
      if (kv.first.rfind("shade", 0) == 0) s += kv.second;
    return s;
  }
};

Measurement Measure(const SceneData& data, RenderOptions opt, const std::string& label, int repeats) {
  Measurement m;
  m.label = label;
  opt.quiet = true;
  opt.collectStats = false;
  RenderCuda(data, opt);  // warm-up: module load, first-touch allocation
  std::vector<double> times;
  size_t peak = 0;  // of the timed renders: the renders that time each stage allocate less (no stage runs aside)
  for (int r = 0; r < repeats; ++r) {
    const RenderResult res = RenderCuda(data, opt);
    times.push_back(res.stats.seconds * 1e3);
    peak = std::max(peak, res.stats.peakDeviceBytes);
  }
  m.renderMs = Median(times);
  opt.collectStats = true;
  std::map<std::string, std::vector<double>> ks;
  for (int r = 0; r < repeats; ++r) {
    RenderResult res = RenderCuda(data, opt);
    for (auto& kv : res.stats.kernelMs) ks[kv.first].push_back(kv.second);
    m.stats = res.stats;
    m.spp = res.sppDone;
  }
  for (auto& kv : ks) m.kernelMs[kv.first] = Median(kv.second);
  m.stats.peakDeviceBytes = std::max(m.stats.peakDeviceBytes, peak);
  m.pixels = static_cast<long long>(opt.width) * opt.height;
  return m;
}

// Primary and diffuse-bounce ray throughput of the intersect kernel alone: one generation of camera rays
// filling the pool (no regeneration), so bounce 0 is all primary rays and bounce 1 all secondary rays.
struct RayRates {
  double primaryPerSec = 0.0, secondaryPerSec = 0.0;
  unsigned long long primaryRays = 0, secondaryRays = 0;
};
RayRates MeasureRayRates(const SceneData& data, RenderOptions opt, int repeats) {
  opt.spp = 1;
  opt.pathsInFlight = static_cast<long long>(opt.width) * opt.height;
  opt.regenerate = false;
  opt.collectStats = true;
  opt.timePerBounce = true;
  opt.quiet = true;
  RenderCuda(data, opt);
  std::vector<double> p, s;
  RayRates rr;
  for (int r = 0; r < repeats; ++r) {
    RenderResult res = RenderCuda(data, opt);
    double t0 = 0, t1 = 0;
    for (auto& kv : res.stats.kernelMs) {
      if (kv.first == "intersect#0") t0 = kv.second;
      if (kv.first == "intersect#1") t1 = kv.second;
    }
    const auto& live = res.stats.livePerBounce;
    rr.primaryRays = live.size() > 0 ? live[0] : 0;
    rr.secondaryRays = live.size() > 1 ? live[1] : 0;
    if (t0 > 0) p.push_back(rr.primaryRays / (t0 * 1e-3));
    if (t1 > 0) s.push_back(rr.secondaryRays / (t1 * 1e-3));
  }
  rr.primaryPerSec = Median(p);
  rr.secondaryPerSec = Median(s);
  return rr;
}

std::string GpuDescription(JsonWriter* json) {
  cudaDeviceProp prop;
  int dev = 0, driver = 0, runtime = 0, clockKHz = 0, memClockKHz = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&dev));
  TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&memClockKHz, cudaDevAttrMemoryClockRate, dev);
  if (json) {
    json->BeginObject("gpu");
    json->Field("name", prop.name);
    json->Field("sm_count", prop.multiProcessorCount);
    json->Field("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
    json->Field("driver_version", driver);
    json->Field("runtime_version", runtime);
    json->Field("max_sm_clock_mhz", clockKHz / 1000.0);
    json->Field("memory_clock_mhz", memClockKHz / 1000.0);
    json->Field("memory_gib", static_cast<double>(prop.totalGlobalMem) / (1 << 30));
    json->EndObject();
  }
  char buf[sizeof prop.name + 128];
  std::snprintf(buf, sizeof buf, "%s (%d SMs, sm_%d%d, driver %d.%d, max SM clock %d MHz)", prop.name,
                prop.multiProcessorCount, prop.major, prop.minor, driver / 1000, (driver % 1000) / 10, clockKHz / 1000);
  return buf;
}

// Atomically, like the images: a report is either the previous one or the whole new one.
void WriteJson(const std::string& path, const std::string& text) {
  AtomicWriteFile(path, [&](const std::string& tmp) {
    std::ofstream f(tmp);
    f << text << "\n";
    f.flush();
    return static_cast<bool>(f);
  });
}

void MeasurementJson(JsonWriter& j, const Measurement& m) {
  j.BeginObject();
  j.Field("label", m.label);
  j.Field("render_ms", m.renderMs);
  j.Field("samples_per_s", m.SamplesPerSecond());
  j.Field("spp", m.spp);
  j.Field("extension_rays", static_cast<unsigned long long>(m.stats.extensionRays));
  j.Field("shadow_rays", static_cast<unsigned long long>(m.stats.shadowRays));
  j.Field("active_lanes_per_shade_warp", m.stats.activeLanesShade);
  j.Field("classes_per_shade_warp", m.stats.classesPerShadeWarp);
  j.Field("peak_device_bytes", static_cast<unsigned long long>(m.stats.peakDeviceBytes));
  j.Field("pool_paths", m.stats.poolPaths);
  j.BeginObject("kernel_ms");
  for (auto& kv : m.kernelMs) j.Field(kv.first.c_str(), kv.second);
  j.EndObject();
  j.BeginArray("live_per_bounce");
  for (auto v : m.stats.livePerBounce) j.Field(nullptr, static_cast<unsigned long long>(v));
  j.EndArray();
  j.EndObject();
}

std::string LiveList(const RenderStats& st, size_t maxEntries = 9) {
  std::string s;
  for (size_t i = 0; i < st.livePerBounce.size() && i < maxEntries; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.2fM", i ? " " : "", st.livePerBounce[i] / 1e6);
    s += buf;
  }
  return s;
}

// Light selection by power (naive) and by tiles, against a reference by power.
QualityPair MeasureLightQuality(const SceneData& data, const RenderOptions& o, int refFactor, int repeats) {
  RenderOptions power = o, tiles = o;
  power.lightSampling = LightSampling::kPower;
  tiles.lightSampling = LightSampling::kTiles;
  return MeasureQuality(data, power, power, tiles, refFactor, repeats);
}

// Opens a report with the fields every report carries: the GPU, the commit, the scene and the settings.
// Returns the GPU's one-line description.
std::string BeginReport(JsonWriter& j, const RenderOptions& base, const ProfileSettings& ps) {
  j.BeginObject();
  std::string gpu = GpuDescription(&j);
  j.Field("git_commit", BuildCommit());
  j.Field("version", VersionString());
  j.Field("scene", ps.sceneName);
  j.Field("width", base.width);
  j.Field("height", base.height);
  j.Field("spp", base.spp);
  j.Field("max_depth", base.maxDepth);
  return gpu;
}

}  // namespace

// One row of the --profile table: an optimisation against its naive twin.
struct ProfileRow {
  std::string name, stage;
  const Measurement* naive;
  double naiveMs, optMs;
  std::string evidence;
};

// The whole-render twins: each measured optimisation against the optimised render.
struct TwinMeasurements {
  Measurement opt, layout, atomics, none, single, plain, pageable, serialShadows, serialShading, binary, perRay,
      allPersistent, sorted, spatialSplits, objectSplits, noSplitTop;
  // The scene's BVHs came from the GPU builder (H-PLOC): noSplitTop renders its tree without the spatial-split top.
  bool gpuTree = false;
  // The spatial-splits row's two wide BVHs (both from the host builder): the split tree's references per triangle,
  // and the SAH costs with and without spatial splits.
  double refsPerTriangle = 1.0, sahSpatialSplits = 0.0, sahObjectSplits = 0.0;
};

// The GPU builder's spatial-split top (split_top.h) against the scene's GPU tree without it (its naive twin, as
// --no-spatial-splits builds it). Where the waste gate says no, or the top's SAH cost was higher, both are one tree.
void AddSplitTopRow(const SceneData& data, const TwinMeasurements& m, std::vector<ProfileRow>& rows) {
  if (!m.gpuTree) return;
  const Measurement &opt = m.opt, &off = m.noSplitTop;
  const std::string& method = data.bvhReport.method;
  const bool tried = method.find("spatial-split top") != std::string::npos;
  char ev[512];
  std::snprintf(
      ev, sizeof ev, "intersect %.2f vs %.2f ms, shadow %.2f vs %.2f ms; %s", off.Kernel("intersect"),
      opt.Kernel("intersect"), off.Kernel("shadow"), opt.Kernel("shadow"),
      tried ? method.c_str() : "not built here: the triangles' waste is under the gate, or the top is turned off");
  rows.push_back({"GPU BVH spatial-split top (on vs off)", "intersect+shadow", &off,
                  off.Kernel("intersect") + off.Kernel("shadow"), opt.Kernel("intersect") + opt.Kernel("shadow"), ev});
}

// The shadow stage beside the next bounce against in line (--serial-shadows), and the miss and shade stages side by
// side against one after another (--serial-shading). Per-kernel times come from renders that time each stage on its
// own, so with every stage in line: the overlap shows in the render's time alone.
void AddShadowAsideRow(const TwinMeasurements& m, std::vector<ProfileRow>& rows) {
  const Measurement &opt = m.opt, &ser = m.serialShadows;
  char ev[512];
  std::snprintf(ev, sizeof ev,
                "the shadow stage takes %.2f ms timed in line; beside the next bounce the render saves %.2f ms; a "
                "second shadow buffer of %zu bytes a path slot",
                opt.Kernel("shadow"), ser.renderMs - opt.renderMs, sizeof(ShadowItem));
  rows.push_back({"shadow rays (beside the next bounce vs in line)", "render", &ser, ser.renderMs, opt.renderMs, ev});
  const Measurement& seq = m.serialShading;
  std::snprintf(ev, sizeof ev, "miss and shade %.2f ms timed one after another; side by side the render saves %.2f ms",
                opt.Kernel("miss") + opt.ShadeMs(), seq.renderMs - opt.renderMs);
  rows.push_back(
      {"miss and shade stages (side by side vs one after another)", "render", &seq, seq.renderMs, opt.renderMs, ev});
}

void AddTwinRows(const SceneData& data, const TwinMeasurements& m, const RenderOptions& base,
                 std::vector<ProfileRow>& rows) {
  const Measurement &opt = m.opt, &layout = m.layout, &atomics = m.atomics, &none = m.none, &single = m.single,
                    &plain = m.plain, &pageable = m.pageable, &binary = m.binary, &perRay = m.perRay,
                    &sorted = m.sorted;
  char ev[512];
  // Layout: same bytes, different instruction counts; the L1 merges the naive 4-byte loads of a line.
  {
    double ni = layout.Kernel("intersect"), oi = opt.Kernel("intersect");
    double ns = layout.ShadeMs(), os = opt.ShadeMs();
    std::snprintf(ev, sizeof ev,
                  "loads per ray: ray 2x16B vs 8x4B, hit 1x16B vs 4x4B, path 2x16B vs 7x4B; intersect %.2f vs %.2f ms, "
                  "shade %.2f vs %.2f ms",
                  ni, oi, ns, os);
    rows.push_back(
        {"ray-state layout (aligned float4 vs AoS float3)", "render", &layout, layout.renderMs, opt.renderMs, ev});
  }
  {
    std::snprintf(ev, sizeof ev,
                  "atomics per queue push: 1 per warp vs 1 per lane; shade %.2f vs %.2f ms, intersect %.2f vs %.2f ms",
                  atomics.ShadeMs(), opt.ShadeMs(), atomics.Kernel("intersect"), opt.Kernel("intersect"));
    rows.push_back(
        {"queue push (warp-aggregated vs per-thread atomics)", "render", &atomics, atomics.renderMs, opt.renderMs, ev});
  }
  {
    std::snprintf(ev, sizeof ev, "active lanes per shade warp %.1f vs %.1f; live per bounce (compacted): %s",
                  none.stats.activeLanesShade, opt.stats.activeLanesShade, LiveList(opt.stats).c_str());
    rows.push_back({"compaction (compacted queues vs none)", "render", &none, none.renderMs, opt.renderMs, ev});
  }
  {
    std::snprintf(ev, sizeof ev, "material classes per shade warp %.2f vs %.2f; shade %.2f vs %.2f ms",
                  single.stats.classesPerShadeWarp, opt.stats.classesPerShadeWarp, single.ShadeMs(), opt.ShadeMs());
    rows.push_back(
        {"shading (per-class queues vs one switching kernel)", "shade", &single, single.ShadeMs(), opt.ShadeMs(), ev});
  }
  {
    double rays = static_cast<double>(opt.stats.extensionRays);
    std::snprintf(ev, sizeof ev, "intersect %.0f vs %.0f Mrays/s", rays / (plain.Kernel("intersect") * 1e3),
                  rays / (opt.Kernel("intersect") * 1e3));
    rows.push_back({"BVH loads (read-only path __ldg vs plain)", "intersect", &plain, plain.Kernel("intersect"),
                    opt.Kernel("intersect"), ev});
  }
  {
    // Both traversal kernels: closest hit (intersect) and any hit (shadow).
    const double nm = binary.Kernel("intersect") + binary.Kernel("shadow"),
                 om = opt.Kernel("intersect") + opt.Kernel("shadow");
    std::snprintf(ev, sizeof ev, "intersect %.2f vs %.2f ms, shadow %.2f vs %.2f ms; %s", binary.Kernel("intersect"),
                  opt.Kernel("intersect"), binary.Kernel("shadow"), opt.Kernel("shadow"), DescribeBvhs(data).c_str());
    rows.push_back({"BVH (compressed 8-wide vs binary)", "intersect+shadow", &binary, nm, om, ev});
  }
  {
    // The wide traversal over the host builder's trees with and without spatial splits (--no-spatial-splits), both
    // built here whichever builder made the scene's own.
    const Measurement &os = m.objectSplits, &ss = m.spatialSplits;
    const double nm = os.Kernel("intersect") + os.Kernel("shadow"), om = ss.Kernel("intersect") + ss.Kernel("shadow");
    std::snprintf(ev, sizeof ev,
                  "intersect %.2f vs %.2f ms, shadow %.2f vs %.2f ms; %.2f references/triangle; SAH cost %.2f vs "
                  "%.2f (host builder; the other rows render the %s builder's tree)",
                  os.Kernel("intersect"), ss.Kernel("intersect"), os.Kernel("shadow"), ss.Kernel("shadow"),
                  m.refsPerTriangle, m.sahObjectSplits, m.sahSpatialSplits, data.bvhReport.builder.c_str());
    rows.push_back({"wide BVH (spatial splits vs object splits only)", "intersect+shadow", &os, nm, om, ev});
  }
  {
    // The intersect stage only: the shadow stage stays one thread per ray (ShadowStage in core/stages.h).
    const double nm = perRay.Kernel("intersect"), om = opt.Kernel("intersect");
    std::snprintf(ev, sizeof ev, "a warp's idle lanes get new rays below %d of 32 still tracing; %.0f vs %.0f Mrays/s",
                  base.persistentRefill > 0 ? base.persistentRefill : RenderOptions{}.persistentRefill,
                  static_cast<double>(opt.stats.extensionRays) / (nm * 1e3),
                  static_cast<double>(opt.stats.extensionRays) / (om * 1e3));
    rows.push_back(
        {"traversal threads (persistent with dynamic fetch vs one per ray)", "intersect", &perRay, nm, om, ev});
    const Measurement& ap = m.allPersistent;
    std::snprintf(ev, sizeof ev, "camera rays are coherent: refills gain nothing there; render %.2f vs %.2f ms",
                  ap.renderMs, opt.renderMs);
    rows.push_back({"per-bounce mode (camera bounce one per ray vs all persistent)", "intersect", &ap,
                    ap.Kernel("intersect"), om, ev});
  }
  {
    // Off by default (the optimised render does not sort): this row's "optimised" side is the sorted render, and
    // its time includes the sort, which the intersect saving has to pay for.
    const double nm = opt.Kernel("intersect"), om = sorted.Kernel("intersect") + sorted.Kernel("sort_rays");
    std::snprintf(ev, sizeof ev, "off by default; intersect %.2f vs %.2f ms, plus sorting %.2f ms (%d-bit keys)", nm,
                  sorted.Kernel("intersect"), sorted.Kernel("sort_rays"), kRaySortKeyBits);
    rows.push_back({"ray sorting (none vs octant + origin cell radix sort)", "intersect", &opt, nm, om, ev});
  }
  {
    double bytes = static_cast<double>(base.width) * base.height * 3 * 8;
    double pm = pageable.Kernel("readback"), om = opt.Kernel("readback");
    std::snprintf(ev, sizeof ev, "film %.1f MB: %.1f vs %.1f GB/s", bytes / 1e6, bytes / (pm * 1e6),
                  bytes / (om * 1e6));
    rows.push_back({"film readback (pinned vs pageable)", "readback", &pageable, pm, om, ev});
  }
}

// The kernels measured on their own: min-plus propagation, the statistics reduction, and light selection.
void AddKernelRows(const SceneData& data, const RenderOptions& base, const RenderOptions& o, const ProfileSettings& ps,
                   std::vector<ProfileRow>& rows) {
  char ev[512];
  // Min-plus propagation: at this image's tile and cluster counts, and at the reference size of the issue
  // (8192 tiles x 256 clusters, about a 1920x1080 image at 16-pixel tiles with the default cluster count).
  const TileBand band{(base.width + base.tileSize - 1) / base.tileSize,
                      (base.height + base.tileSize - 1) / base.tileSize, kTileRadius};
  const int tiles = band.NumTiles();
  const int clusters = std::max(1, data.clusters.Count());
  // The dense kernels at this image's size only while the matrix is small (4K at 16-pixel tiles: 4.2 GB).
  constexpr double kDenseProfileBytes = 1.1e9;
  const bool denseHere = 4.0 * tiles * static_cast<double>(tiles) <= kDenseProfileBytes;
  // The four dense kernels at one size; the image size's tiled time also serves the banded row.
  struct DenseTimes {
    int T, K;
    double naive, coalesced, tiled, dpx;
  };
  auto timeDense = [&](int T, int K) {
    std::fprintf(stderr, "  measuring min-plus (%d tiles x %d clusters)\n", T, K);
    return DenseTimes{T,
                      K,
                      TimeMinPlusMs(MinPlusKernel::kNaive, T, K, ps.repeats),
                      TimeMinPlusMs(MinPlusKernel::kCoalesced, T, K, ps.repeats),
                      TimeMinPlusMs(MinPlusKernel::kTiled, T, K, ps.repeats),
                      TimeMinPlusMs(MinPlusKernel::kDpx, T, K, ps.repeats)};
  };
  std::vector<DenseTimes> dense;
  if (denseHere) dense.push_back(timeDense(tiles, clusters));
  dense.push_back(timeDense(8192, 256));
  {
    std::fprintf(stderr, "  measuring min-plus, banded (%d tiles x %d clusters)\n", tiles, clusters);
    const double mpBand = TimeMinPlusBandMs(band, clusters, ps.repeats);
    // Without the dense run the row compares the band with itself (1.00x) and says why.
    const double mpTiled = denseHere ? dense.front().tiled : mpBand;
    std::snprintf(ev, sizeof ev, "terms per output: %d (tiles within %d on each axis) vs %d; D: %.1f vs %.1f MB%s",
                  band.Size(), band.radius, tiles, 4e-6 * tiles * band.Size(),
                  4e-6 * tiles * static_cast<double>(tiles), denseHere ? "" : "; dense too big to run here");
    char name[96];
    std::snprintf(name, sizeof name, "min-plus step %dx%d (banded vs dense tiled)", tiles, clusters);
    rows.push_back({name, "minplus", nullptr, mpTiled, mpBand, ev});
  }
  for (const DenseTimes& d : dense) {
    const double ops = 2.0 * d.T * static_cast<double>(d.T) * d.K;
    char size[64];
    std::snprintf(size, sizeof size, "%dx%dx%d", d.T, d.T, d.K);
    std::snprintf(ev, sizeof ev, "%s: naive %.3f, coalesced %.3f, tiled %.3f, dpx %.3f ms; tiled %.0f Gop/s", size,
                  d.naive, d.coalesced, d.tiled, d.dpx, ops / (d.tiled * 1e6));
    rows.push_back(
        {std::string("min-plus step ") + size + " (tiled vs naive)", "minplus", nullptr, d.naive, d.tiled, ev});
    std::snprintf(ev, sizeof ev, "warp reads C[k][c..c+31] as one line instead of D with a stride of T floats");
    rows.push_back(
        {std::string("min-plus step ") + size + " (coalesced vs naive)", "minplus", nullptr, d.naive, d.coalesced, ev});
    std::snprintf(ev, sizeof ev, "fixed-point __viaddmin_s32, one VIADDMNMX per term instead of FADD+FMNMX");
    rows.push_back(
        {std::string("min-plus step ") + size + " (DPX vs tiled float)", "minplus", nullptr, d.tiled, d.dpx, ev});
  }
  {
    const int records = tiles * 256;
    double rn = TimeTileStatsMs(true, records, tiles * clusters, 256, ps.repeats);
    double ri = TimeTileStatsMs(false, records, tiles * clusters, 256, ps.repeats);
    std::snprintf(ev, sizeof ev,
                  "%d records, runs of 256 equal keys: divergent tid %% (2*stride) vs sequential + shuffles", records);
    rows.push_back({"statistics reduction (interleaved+shuffle vs neighbored)", "reduce", nullptr, rn, ri, ev});
  }
  if (data.clusters.Count() > 0) {
    std::fprintf(stderr, "  measuring light selection quality (power vs tiles, reference at 16x spp)\n");
    QualityPair q = MeasureLightQuality(data, o, 16, std::max(2, ps.repeats / 2));
    std::snprintf(ev, sizeof ev, "RMSE at equal spp: power %.4g, tiles %.4g (%.2fx); at equal time tiles/power %.2fx",
                  q.rmseNaive, q.rmseOpt, q.rmseOpt / q.rmseNaive, q.EqualTimeRatio());
    rows.push_back(
        {"light selection (tiles vs power; time, and RMSE in evidence)", "render", nullptr, q.msNaive, q.msOpt, ev});
  }
  if (data.env.params.pick > 0.0f) {
    // Only with an environment light (--env or --env-map): without one the two renders are the same.
    std::fprintf(stderr,
                 "  measuring environment sampling quality (BSDF only vs importance + NEE, reference at 16x)\n");
    RenderOptions bsdfOnly = o, importance = o;
    bsdfOnly.envSampling = EnvSampling::kBsdfOnly;
    importance.envSampling = EnvSampling::kImportance;
    QualityPair q = MeasureQuality(data, importance, bsdfOnly, importance, 16, std::max(2, ps.repeats / 2));
    std::snprintf(ev, sizeof ev,
                  "environment's share of light selection %.3f; RMSE at equal spp: BSDF only %.4g, importance %.4g "
                  "(%.2fx); at equal time importance/BSDF only %.2fx",
                  data.env.params.pick, q.rmseNaive, q.rmseOpt, q.rmseOpt / q.rmseNaive, q.EqualTimeRatio());
    rows.push_back({"environment sampling (importance + NEE vs BSDF only; time, RMSE in evidence)", "render", nullptr,
                    q.msNaive, q.msOpt, ev});
    const EnvGuideProfileRow g = ProfileEnvGuide(data, o, std::max(2, ps.repeats / 2));
    rows.push_back({"environment guide (guided vs importance; time, RMSE in evidence)", "render", nullptr,
                    g.importanceMs, g.guidedMs, g.evidence});
    if (!data.portals.empty()) {
      const EnvPortalsProfileRow p = ProfileEnvPortals(data, o, std::max(2, ps.repeats / 2));
      rows.push_back(
          {"env portals (portals vs importance)", "render", nullptr, p.importanceMs, p.portalsMs, p.evidence});
      rows.push_back({"portal pdf (drawn piece's term vs loop over pieces)", "render", nullptr, p.loopMs, p.drawnMs,
                      p.pdfEvidence});
      rows.push_back({"portal points (by solid angle vs by area)", "render", nullptr, p.areaPointsMs, p.solidPointsMs,
                      p.pointEvidence});
    }
  }
}

// The denoiser's row: its kernels against its naive twin's (time), and what each leaves of the noise (evidence).
DenoiseProfile MeasureDenoiser(const SceneData& data, const RenderOptions& o, const ProfileSettings& ps) {
  std::fprintf(stderr, "  measuring the denoiser (regression vs a-trous, reference at 16x spp)\n");
  return ProfileDenoiseCuda(data, o, ps.featureSamples, 16, ps.repeats);
}
void AddDenoiseRow(const DenoiseProfile& d, std::vector<ProfileRow>& rows) {
  char ev[256];
  std::snprintf(ev, sizeof ev,
                "%d spp; relMSE vs 16x spp: raw %.4g, a-trous %.4g, regression %.4g; + first-hit features %.2f ms",
                d.spp, d.relMseRaw, d.relMseAtrous, d.relMseNfor, d.featuresKeptMs);
  rows.push_back(
      {"denoiser (regression vs a-trous; time, relMSE in evidence)", "denoise", nullptr, d.atrousMs, d.nforMs, ev});
  rows.push_back({"first-hit features: the render's hits vs traced again", "denoise", nullptr, d.featuresMs,
                  d.featuresKeptMs, "the same features; hits kept for the render's first samples"});
  std::snprintf(ev, sizeof ev, "the same image: largest |per-pixel - tiled| / (tiled + 0.01) %.2g",
                d.nforTwinDifference);
  rows.push_back({"regression: tiled vs per-pixel", "denoise", nullptr, d.nforPerPixelMs, d.nforMs, ev});
}

void PrintProfileTable(const std::vector<ProfileRow>& rows, const Measurement& opt) {
  std::printf("\n%-52s | %-9s | %10s | %10s | %7s | %s\n", "optimization", "stage", "naive ms", "optim. ms", "speedup",
              "evidence");
  std::printf("%s\n", std::string(150, '-').c_str());
  for (const ProfileRow& r : rows)
    std::printf("%-52s | %-9s | %10.3f | %10.3f | %6.2fx | %s\n", r.name.c_str(), r.stage.c_str(), r.naiveMs, r.optMs,
                r.optMs > 0 ? r.naiveMs / r.optMs : 0.0, r.evidence.c_str());
  std::printf("\noptimised: %.1f M samples/s, %.1f M extension rays/s, %.1f M shadow rays/s\n",
              opt.SamplesPerSecond() / 1e6, opt.stats.extensionRays / (opt.renderMs * 1e3),
              opt.stats.shadowRays / (opt.renderMs * 1e3));
}

void ProfileRowsJson(JsonWriter& j, const std::vector<ProfileRow>& rows) {
  j.BeginArray("optimizations");
  for (const ProfileRow& r : rows) {
    j.BeginObject();
    j.Field("name", r.name);
    j.Field("stage", r.stage);
    j.Field("naive_ms", r.naiveMs);
    j.Field("optimized_ms", r.optMs);
    j.Field("speedup", r.optMs > 0 ? r.naiveMs / r.optMs : 0.0);
    j.Field("evidence", r.evidence);
    j.EndObject();
  }
  j.EndArray();
}

// Live paths per bounce without regeneration: how fast paths die, and what compaction has to work with.
void LiveDecayJson(JsonWriter& j, const SceneData& data, const RenderOptions& o) {
  RenderOptions decay = o;
  decay.regenerate = false;
  decay.spp = 1;
  decay.pathsInFlight = static_cast<long long>(o.width) * o.height;
  decay.collectStats = true;
  decay.quiet = true;
  RenderResult d = RenderCuda(data, decay);
  j.BeginArray("live_paths_per_bounce_one_generation");
  for (auto v : d.stats.livePerBounce) j.Field(nullptr, static_cast<unsigned long long>(v));
  j.EndArray();
  std::printf("live paths per bounce, one generation of %lld paths: %s\n", decay.pathsInFlight,
              LiveList(d.stats, 16).c_str());
}

int RunProfile(const SceneData& data, const RenderOptions& base, const ProfileSettings& ps) {
  JsonWriter j;
  std::string gpu = BeginReport(j, base, ps);
  j.Field("repeats", ps.repeats);
  std::fprintf(stderr, "profiling %s on %s: %dx%d, %d spp, max depth %d, median of %d after a warm-up\n",
               ps.sceneName.c_str(), gpu.c_str(), base.width, base.height, base.spp, base.maxDepth, ps.repeats);

  RenderOptions o = base;
  o.naiveLayout = false;
  o.compaction = Compaction::kWarpAggregated;
  o.singleShadeKernel = o.plainLoads = o.pageableReadback = o.serialShadows = o.serialShading = o.binaryBvh =
      o.sortRays = false;
  if (o.persistentRefill == 0) o.persistentRefill = RenderOptions{}.persistentRefill;
  auto variant = [&](const char* label, auto tweak) {
    RenderOptions v = o;
    tweak(v);
    std::fprintf(stderr, "  measuring %s\n", label);
    return Measure(data, v, label, ps.repeats);
  };
  TwinMeasurements m;
  m.opt = Measure(data, o, "optimised", ps.repeats);
  m.layout = variant("naive layout", [](RenderOptions& v) { v.naiveLayout = true; });
  m.atomics = variant("per-thread atomics", [](RenderOptions& v) { v.compaction = Compaction::kPerThreadAtomic; });
  m.none = variant("no compaction", [](RenderOptions& v) { v.compaction = Compaction::kNone; });
  m.single = variant("single shade kernel", [](RenderOptions& v) { v.singleShadeKernel = true; });
  m.plain = variant("plain loads", [](RenderOptions& v) { v.plainLoads = true; });
  m.pageable = variant("pageable readback", [](RenderOptions& v) { v.pageableReadback = true; });
  m.serialShadows = variant("shadow rays in line", [](RenderOptions& v) { v.serialShadows = true; });
  m.serialShading = variant("miss and shade stages in line", [](RenderOptions& v) { v.serialShading = true; });
  m.binary = variant("binary BVH", [](RenderOptions& v) { v.binaryBvh = true; });
  m.perRay = variant("one thread per ray", [](RenderOptions& v) { v.persistentRefill = 0; });
  m.allPersistent = variant("persistent every bounce", [](RenderOptions& v) { v.perRayCameraBounce = false; });
  m.sorted = variant("sorted rays", [](RenderOptions& v) { v.sortRays = true; });
  {
    // Spatial splits and their twin: the scene's wide BVH rebuilt by the host builder with and without them.
    const std::vector<Vec3> positions = OriginalPositions(data);
    SceneData split = data, objectOnly = data;
    BvhBuildOptions withSplits, without;
    without.spatialSplits = false;
    std::fprintf(stderr, "  building the wide BVH with and without spatial splits\n");
    split.wide = BuildWideBvh(positions, data.bvh, withSplits);
    objectOnly.wide = BuildWideBvh(positions, data.bvh, without);
    m.refsPerTriangle = WideReferencesPerTriangle(split);
    m.sahSpatialSplits = WideSahCost(split.wide);
    m.sahObjectSplits = WideSahCost(objectOnly.wide);
    std::fprintf(stderr, "  measuring spatial splits\n");
    m.spatialSplits = Measure(split, o, "spatial splits", ps.repeats);
    std::fprintf(stderr, "  measuring object splits only\n");
    m.objectSplits = Measure(objectOnly, o, "object splits only", ps.repeats);
    // Only an H-PLOC build with the default options rebuilds the scene's own binary BVH (not PLOC's passes).
    m.gpuTree = data.bvhReport.builder == "gpu" && data.bvhReport.method.rfind("H-PLOC", 0) == 0;
    if (m.gpuTree) {
      // The GPU builder is deterministic and its binary BVH the same with and without the top: the scene's arrays fit.
      SceneData withoutTop = data;
      // As --no-spatial-splits builds it: off also when TRACER_SPLIT_TOP is set, which spatialSplits = false overrides.
      BvhBuildOptions plain;
      plain.splitTop = false;
      plain.spatialSplits = false;
      Bvh binary;
      BuildBvhsOnGpu(positions, plain, binary, withoutTop.wide);
      std::fprintf(stderr, "  measuring the GPU tree without its spatial-split top\n");
      m.noSplitTop = Measure(withoutTop, o, "no spatial-split top", ps.repeats);
    }
  }

  std::vector<ProfileRow> rows;
  AddTwinRows(data, m, base, rows);
  AddShadowAsideRow(m, rows);
  AddSplitTopRow(data, m, rows);
  AddKernelRows(data, base, o, ps, rows);
  AddDenoiseRow(MeasureDenoiser(data, o, ps), rows);
  PrintProfileTable(rows, m.opt);

  ProfileRowsJson(j, rows);
  j.BeginArray("measurements");
  for (const Measurement* x :
       {&m.opt, &m.layout, &m.atomics, &m.none, &m.single, &m.plain, &m.pageable, &m.serialShadows, &m.serialShading,
        &m.binary, &m.perRay, &m.allPersistent, &m.sorted, &m.spatialSplits, &m.objectSplits})
    MeasurementJson(j, *x);
  if (m.gpuTree) MeasurementJson(j, m.noSplitTop);
  j.EndArray();
  LiveDecayJson(j, data, o);
  CompareBvhBuilders(data, o, ps.repeats, j);
  j.EndObject();
  WriteJson(ps.jsonPath, j.Str());
  std::printf("wrote %s\n", ps.jsonPath.c_str());
  if (ps.samplesPerSecond) *ps.samplesPerSecond = m.opt.SamplesPerSecond();
  return 0;
}

namespace {

// Shadow rays/s: the whole render's shadow rays over the shadow kernel's time.
double ShadowRate(const Measurement& m) { return m.stats.shadowRays / (m.Kernel("shadow") * 1e-3); }

// "light_sampling": tile-guided against power light selection, at equal spp and equal time.
void LightSamplingJson(JsonWriter& j, const QualityPair& q) {
  j.BeginObject("light_sampling");
  j.Field("rmse_power", q.rmseNaive);
  j.Field("rmse_tiles", q.rmseOpt);
  j.Field("rmse_ratio_equal_spp", q.rmseOpt / q.rmseNaive);
  j.Field("rmse_ratio_equal_time", q.EqualTimeRatio());
  j.Field("ms_power", q.msNaive);
  j.Field("ms_tiles", q.msOpt);
  j.EndObject();
}

// "denoiser": its kernels' times and the images' relMSE.
void DenoiseJson(JsonWriter& j, const DenoiseProfile& d) {
  j.BeginObject("denoiser");
  j.Field("spp", d.spp);
  j.Field("features_kept_hits_ms", d.featuresKeptMs);
  j.Field("features_traced_ms", d.featuresMs);
  j.Field("nfor_ms", d.nforMs);
  j.Field("atrous_ms", d.atrousMs);
  j.Field("nfor_per_pixel_ms", d.nforPerPixelMs);
  j.Field("relmse_raw", d.relMseRaw);
  j.Field("relmse_nfor", d.relMseNfor);
  j.Field("relmse_atrous", d.relMseAtrous);
  j.EndObject();
}

// "traversal": each BVH's measurement and ray rates (wide, then binary).
void TraversalJson(JsonWriter& j, const SceneData& data, const Measurement& wide, const RayRates& wideRates,
                   const Measurement& binary, const RayRates& binaryRates) {
  j.BeginObject("traversal");
  for (const bool isWide : {true, false}) {
    const Measurement& m = isWide ? wide : binary;
    const RayRates& r = isWide ? wideRates : binaryRates;
    j.BeginObject(isWide ? "wide" : "binary");
    j.Field("primary_rays_per_s", r.primaryPerSec);
    j.Field("diffuse_rays_per_s", r.secondaryPerSec);
    j.Field("shadow_rays_per_s", ShadowRate(m));
    j.Field("render_ms", m.renderMs);
    j.Field("bytes_per_triangle", BvhBytesPerTriangle(data, isWide));
    j.EndObject();
  }
  j.EndObject();
}

}  // namespace

int RunBenchmark(const SceneData& data, const RenderOptions& base, const ProfileSettings& ps) {
  JsonWriter j;
  std::string gpu = BeginReport(j, base, ps);
  j.Field("triangles", static_cast<long long>(data.bvh.order.size()));
  j.Field("emitters", static_cast<long long>(data.emitterTri.size()));
  std::fprintf(stderr, "benchmark %s on %s: %dx%d, %d spp, max depth %d\n", ps.sceneName.c_str(), gpu.c_str(),
               base.width, base.height, base.spp, base.maxDepth);
  RenderOptions o = base;
  Measurement opt = Measure(data, o, "optimised", ps.repeats);
  RenderOptions v = o;
  v.naiveLayout = true;
  Measurement layout = Measure(data, v, "naive layout", ps.repeats);
  v = o;
  v.compaction = Compaction::kPerThreadAtomic;
  Measurement atomics = Measure(data, v, "naive compaction", ps.repeats);
  v = o;
  v.compaction = Compaction::kNone;
  Measurement none = Measure(data, v, "no compaction", ps.repeats);
  v = o;
  v.binaryBvh = !o.binaryBvh;
  Measurement otherBvh = Measure(data, v, o.binaryBvh ? "wide BVH" : "binary BVH", ps.repeats);
  RayRates rr = MeasureRayRates(data, o, ps.repeats);
  RayRates rrOther = MeasureRayRates(data, v, ps.repeats);
  const Measurement& wideM = o.binaryBvh ? otherBvh : opt;
  const Measurement& binaryM = o.binaryBvh ? opt : otherBvh;
  const RayRates& wideRr = o.binaryBvh ? rrOther : rr;
  const RayRates& binaryRr = o.binaryBvh ? rr : rrOther;
  QualityPair q;
  if (data.clusters.Count() > 0) q = MeasureLightQuality(data, o, 16, std::max(2, ps.repeats / 2));
  const DenoiseProfile dn = MeasureDenoiser(data, o, ps);

  const double sec = opt.renderMs * 1e-3;
  std::printf("\n%s (%zu triangles, %zu emitters) %dx%d, %d spp, depth %d, on %s\n", ps.sceneName.c_str(),
              data.bvh.order.size(), data.emitterTri.size(), base.width, base.height, opt.spp, base.maxDepth,
              gpu.c_str());
  std::printf("  samples/s            %10.1f M\n", opt.SamplesPerSecond() / 1e6);
  std::printf("  extension rays/s     %10.1f M  (whole render, all bounces)\n", opt.stats.extensionRays / sec / 1e6);
  std::printf("  shadow rays/s        %10.1f M\n", opt.stats.shadowRays / sec / 1e6);
  std::printf("  primary rays/s       %10.1f M  (intersect kernel alone, %llu camera rays)\n", rr.primaryPerSec / 1e6,
              rr.primaryRays);
  std::printf("  diffuse rays/s       %10.1f M  (intersect kernel alone, %llu first-bounce rays)\n",
              rr.secondaryPerSec / 1e6, rr.secondaryRays);
  std::printf("  peak device memory   %10.1f MiB  (path pool of %lld paths)\n", opt.stats.peakDeviceBytes / 1048576.0,
              opt.stats.poolPaths);
  std::printf(
      "  traversal, wide vs binary BVH: primary %.2f vs %.2f G rays/s, diffuse %.2f vs %.2f G rays/s, shadow %.2f vs "
      "%.2f G rays/s (shadow kernel); render %.1f vs %.1f ms\n  %s\n",
      wideRr.primaryPerSec / 1e9, binaryRr.primaryPerSec / 1e9, wideRr.secondaryPerSec / 1e9,
      binaryRr.secondaryPerSec / 1e9, ShadowRate(wideM) / 1e9, ShadowRate(binaryM) / 1e9, wideM.renderMs,
      binaryM.renderMs, DescribeBvhs(data).c_str());
  CompareBvhBuilders(data, o, ps.repeats, j);
  std::printf("  per kernel (ms, summed over the render):");
  for (auto& kv : opt.kernelMs) std::printf(" %s %.2f;", kv.first.c_str(), kv.second);
  std::printf(
      "\n  naive twins, render time relative to optimised: naive-layout %.2fx, naive-compaction %.2fx, no-compaction "
      "%.2fx\n",
      layout.renderMs / opt.renderMs, atomics.renderMs / opt.renderMs, none.renderMs / opt.renderMs);
  if (data.clusters.Count() > 0) {
    std::printf(
        "  light selection at %d spp (RMSE vs power at 16x spp): power %.4g, tiles %.4g = %.2fx; equal time %.2fx; "
        "render %.1f vs %.1f ms\n",
        o.spp, q.rmseNaive, q.rmseOpt, q.rmseOpt / q.rmseNaive, q.EqualTimeRatio(), q.msNaive, q.msOpt);
    LightSamplingJson(j, q);
  }
  std::printf(
      "  denoiser at %dx%d, %d spp: first-hit features %.2f ms (traced again %.2f ms), regression %.2f ms (per-pixel "
      "twin %.2f ms), a-trous %.2f ms (kernels); relMSE raw %.4g, regression %.4g, a-trous %.4g\n",
      base.width, base.height, dn.spp, dn.featuresKeptMs, dn.featuresMs, dn.nforMs, dn.nforPerPixelMs, dn.atrousMs,
      dn.relMseRaw, dn.relMseNfor, dn.relMseAtrous);
  DenoiseJson(j, dn);
  j.Field("samples_per_s", opt.SamplesPerSecond());
  if (ps.samplesPerSecond) *ps.samplesPerSecond = opt.SamplesPerSecond();
  j.Field("extension_rays_per_s", opt.stats.extensionRays / sec);
  j.Field("shadow_rays_per_s", opt.stats.shadowRays / sec);
  j.Field("primary_rays_per_s", rr.primaryPerSec);
  j.Field("diffuse_rays_per_s", rr.secondaryPerSec);
  j.Field("peak_device_bytes", static_cast<unsigned long long>(opt.stats.peakDeviceBytes));
  TraversalJson(j, data, wideM, wideRr, binaryM, binaryRr);
  j.BeginObject("naive_ratios");
  j.Field("naive_layout", layout.renderMs / opt.renderMs);
  j.Field("naive_compaction", atomics.renderMs / opt.renderMs);
  j.Field("no_compaction", none.renderMs / opt.renderMs);
  j.EndObject();
  j.BeginArray("measurements");
  for (const Measurement* m : {&opt, &layout, &atomics, &none, &otherBvh}) MeasurementJson(j, *m);
  j.EndArray();
  j.EndObject();
  WriteJson(ps.jsonPath, j.Str());
  std::printf("  wrote %s\n", ps.jsonPath.c_str());
  return 0;
}

}  // namespace tracer
