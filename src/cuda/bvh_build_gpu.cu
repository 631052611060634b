// @file bvh_build_gpu.cu: the GPU BVH builder of host/bvh_build_gpu.h, its driver: one allocation carved into the
// build's arrays, the stages queued on one stream (kernels/bvh_build/: Morton order, H-PLOC or PLOC's passes, the SAH
// top, both layouts), the trees read back, and the host builders where the GPU's tree cannot be used.
//
// Compiled with --fmad=false (CMakeLists.txt), as are the stages: the wide BVH's choices and boxes come from
// core/wide_collapse.h in double precision, and only without FMA contraction do they round as the host collapse's do.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bvh_build/hploc.h"
#include "bvh_build/morton.h"
#include "bvh_build/ploc.h"
#include "bvh_build/sah_top.h"
#include "bvh_build/split_top.h"
#include "bvh_build/sweep.h"
#include "tracer/core/spatial_split.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/raii.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/huge_pages.h"
#include "tracer/host/knobs.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer::gpu_build {
namespace {

// Hands out aligned arrays from one allocation (base null: only counts the bytes; an empty array is null). One
// cudaMalloc for the whole build: each cudaMalloc and cudaFree costs tens of microseconds, and cudaFree waits for the
// device, which for a scene of a few hundred thousand triangles took longer than the build itself.
struct Carver {
  unsigned char* base;
  size_t used = 0;
  template <typename T>
  T* Take(size_t n) {
    T* p = base && n ? reinterpret_cast<T*>(base + used) : nullptr;
    used += (n * sizeof(T) + 255) & ~static_cast<size_t>(255);
    return p;
  }
};

// Whether the build tries the spatial-split top: never, where the waste gate passes, or always.
enum class SplitTopPlan { kOff, kByWaste, kForced };

// What the build runs: PLOC's passes or H-PLOC, with the SAH top or without, and the scratch bytes CUB needs; and the
// spatial-split top after it.
struct Plan {
  bool passes, top;
  size_t tempBytes;
  SplitTopPlan splitTop = SplitTopPlan::kOff;
};

// The spatial-split top as the options and TRACER_SPLIT_TOP say (H-PLOC only, with the wide BVH and spatial splits).
SplitTopPlan SplitTopFor(const BvhBuildOptions& options, bool passes) {
  if (passes || !options.wide || !options.spatialSplits) return SplitTopPlan::kOff;
  switch (knobs::SplitTop()) {
    case knobs::SplitTopKnob::kOff:
      return SplitTopPlan::kOff;
    case knobs::SplitTopKnob::kAuto:
      return SplitTopPlan::kByWaste;
    case knobs::SplitTopKnob::kForced:
      return SplitTopPlan::kForced;
    case knobs::SplitTopKnob::kUnset:
      break;
  }
  return options.splitTop ? SplitTopPlan::kByWaste : SplitTopPlan::kOff;
}

// The scratch of CUB's sort and of the clustering's scan (the larger).
size_t CubTempBytes(int n, const Plan& plan, cudaStream_t st) {
  const size_t sortBytes = MortonSortBytes(n, st);
  const size_t scanBytes = plan.passes ? PassScanBytes(n, st) : plan.top ? TopScanBytes(n, st) : 0;
  return std::max(sortBytes, scanBytes);
}

// The build's arrays and the tree's from one allocation, carved twice by the same code: first to size it (c.base
// null), then to hand out the arrays.
// positions: room for the triangles' positions (not for the references of the spatial-split top's tree).
void Carve(Carver& c, size_t numTris, const Plan& plan, bool wide, BuildArrays& a, PlocTree& tree,
           bool positions = true) {
  const int n = static_cast<int>(numTris);
  const bool top = plan.top;
  const size_t inner = numTris - 1, nodes = 2 * numTris - 1, tempBytes = plan.tempBytes;
  const size_t pass = plan.passes ? numTris : 0, hier = plan.passes ? 0 : numTris;
  a.pos = c.Take<float>(positions ? 9 * numTris : 0);
  a.triLo = c.Take<Float4>(numTris), a.triHi = c.Take<Float4>(numTris);
  a.bounds = c.Take<uint32_t>(6);
  a.waste = c.Take<double>(2 * kMaxBoxBlocks + 2);
  a.keys = c.Take<uint64_t>(numTris), a.sortedKeys = c.Take<uint64_t>(numTris);
  a.ids = c.Take<int>(numTris), a.sortedTri = c.Take<int>(numTris);
  a.temp = c.Take<unsigned char>(tempBytes);
  a.cNode[0] = c.Take<int>(numTris), a.cNode[1] = c.Take<int>(pass);
  a.bound = c.Take<int>(hier), a.counter = c.Take<int>(1);
  a.flags = c.Take<unsigned long long>(pass), a.scanned = c.Take<unsigned long long>(pass);
  for (int h = 0; h < 2; ++h) a.cLo[h] = c.Take<Float4>(pass), a.cHi[h] = c.Take<Float4>(pass);
  a.nn = c.Take<int>(pass);
  a.state = c.Take<PassState>(2), a.passes = c.Take<int>(1);
  a.totals = c.Take<int>(2), a.status = c.Take<int>(4), a.counters = c.Take<int>(4);
  a.topState = c.Take<TopState>(top ? 1 : 0), a.topBounds = c.Take<uint32_t>(top ? 6 : 0);
  const size_t wideGroups = top ? numTris / kTopWide + 1 : 0, chunks = top ? numTris / kTopChunk + wideGroups : 0;
  a.topQueues.big = c.Take<TopTask>(top ? numTris : 0), a.topQueues.small = c.Take<TopTask>(top ? numTris / 2 + 1 : 0);
  a.topQueues.wide[0] = c.Take<TopTask>(wideGroups), a.topQueues.wide[1] = c.Take<TopTask>(wideGroups);
  a.topQueues.ready = c.Take<int>(top ? TopReadySize(numTris) : 0);
  a.topWide = TopWide{c.Take<TopBins>(wideGroups), c.Take<int>(wideGroups), c.Take<uint32_t>(12 * wideGroups),
                      c.Take<int>(wideGroups),     c.Take<int2>(chunks),    c.Take<int>(chunks)};
  a.binOut = c.Take<BvhNode>(inner), a.wideOut = c.Take<WideNode>(wide ? inner : 0);
  a.wideTriSrc = c.Take<int>(wide ? numTris : 0);
  a.order = c.Take<int32_t>(numTris);
  tree = PlocTree{n,
                  c.Take<Float4>(nodes),
                  c.Take<Float4>(nodes),
                  c.Take<int>(nodes),
                  c.Take<int2>(inner),
                  c.Take<int>(inner),
                  c.Take<double>(inner),
                  c.Take<int>(inner),
                  c.Take<uint8_t>(inner),
                  c.Take<WideChoice>(inner),
                  c.Take<int>(inner),
                  c.Take<int>(wide ? kWideSlots * inner : 0),
                  c.Take<int>(wide ? inner : 0),
                  c.Take<int>(inner),
                  c.Take<int>(inner),
                  c.Take<int4>(inner)};
}

// The tree's leaves from the sorted keys, its counters and places cleared, before the clustering.
void StartTree(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, cudaStream_t st) {
  const size_t inner = static_cast<size_t>(tree.n) - 1;
  TRACER_CUDA_CHECK(cudaMemsetAsync(tree.binAt, 0xff, inner * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(tree.wideAt, 0xff, inner * sizeof(int4), st));
  if (!options.wide) TRACER_CUDA_CHECK(cudaMemsetAsync(tree.wideNodes, 0, inner * sizeof(int), st));
  LaunchInitLeaves(a, tree, st);
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.status, 0, 4 * sizeof(int), st));
}

// The events between the stages, for the report's times.
struct Marks {
  CudaEvent start, sorted, clustered, topped, built, done;
};

// Uploads the positions and queues the stages on st: Morton order, the clustering, the SAH top and both layouts.
// Returns PLOC's passes (0 for H-PLOC).
int RunStages(const std::vector<Vec3>& positions, const BuildArrays& a, const PlocTree& tree,
              const BvhBuildOptions& options, const Plan& plan, Marks& marks, cudaStream_t st) {
  const int n = tree.n;
  const size_t numTris = static_cast<size_t>(n);
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.pos, positions.data(), 9 * numTris * sizeof(float), cudaMemcpyHostToDevice, st));
  marks.start.Record(st);
  MortonOrder(a, n, plan.tempBytes, plan.splitTop == SplitTopPlan::kByWaste, st);
  StartTree(a, tree, options, st);
  marks.sorted.Record(st);

  const TopScratch top = plan.top ? PrepareTop(a, n, plan.passes, st) : TopScratch{};
  int passCount = 0;
  if (plan.passes)
    passCount = ClusterInPasses(a, tree, plan.tempBytes, options, plan.top ? top.buf.list : nullptr, st);
  else
    ClusterHierarchically(a, tree, options, plan.top ? top.buf.a : nullptr, st);
  marks.clustered.Record(st);
  if (plan.top) BuildTop(a, tree, top, options, plan.passes, plan.tempBytes, st);
  marks.topped.Record(st);
  WriteLayouts(a, tree, options, st);
  marks.built.Record(st);
  if (plan.splitTop == SplitTopPlan::kByWaste) LaunchSumWaste(a, n, st);
  return passCount;
}

template <typename T>
void Download(std::vector<T>& dst, const T* src, size_t n, cudaStream_t s) {
  ResizeOnHugePages(dst, n);
  if (n) TRACER_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost, s));
}

// The wide BVH's triangles: copies of the binary BVH's, v0.w = the position there (src: the binary position of each
// wide leaf entry, as VisitWide wrote them).
void GatherWideTriangles(const std::vector<Float4>& tris, const std::vector<int>& src, std::vector<Float4>& wideTris,
                         ThreadPool& pool) {
  ResizeOnHugePages(wideTris, 3 * src.size());
  pool.ParallelFor(src.size(), size_t(1) << 16, [&](size_t begin, size_t end) {
    for (size_t w = begin; w < end; ++w) {
      const size_t p = static_cast<size_t>(src[w]);
      Float4 a = tris[3 * p];
      a.w = FloatFromBits(static_cast<uint32_t>(src[w]));
      wideTris[3 * w] = a;
      wideTris[3 * w + 1] = tris[3 * p + 1];
      wideTris[3 * w + 2] = tris[3 * p + 2];
    }
  });
}

BvhBuildReport HostBuild(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary, WideBvh& wide,
                         const std::string& why) {
  const Stopwatch clock;
  binary = BuildBvh(positions, options);
  wide = options.wide ? BuildWideBvh(positions, binary, options) : WideBvh{};
  BvhBuildReport r;
  r.buildMs = clock.Ms();
  r.note = why;
  return r;
}

// A wide BVH's nodes and its leaf entries' sources (`entries` of them) read back, without its triangles, which
// GatherWideTriangles makes once the tree is chosen. status, counts: as read back for that build.
void DownloadWide(const BuildArrays& b, size_t entries, const int* status, const int* counts, WideBvh& wide,
                  std::vector<int>& src, cudaStream_t st) {
  wide = WideBvh{};
  Download(wide.nodes, b.wideOut, static_cast<size_t>(counts[1]), st);
  Download(src, b.wideTriSrc, entries, st);
  wide.depth = status[1];
}

// The nodes, the order and the wide leaves' sources come back (49 bytes a triangle with the wide BVH); the binary
// BVH's triangles (48 bytes a triangle) are gathered here from the positions, on every core; the wide BVH's wait in
// wideSrc for the choice of tree. status, counts: as read back.
void FetchTrees(const std::vector<Vec3>& positions, const BuildArrays& a, const BvhBuildOptions& options,
                const int* status, const int* counts, Bvh& binary, WideBvh& wide, std::vector<int>& wideSrc,
                CudaEvent& done, ThreadPool& pool, cudaStream_t st) {
  const size_t numTris = positions.size() / 3;
  Download(binary.nodes, a.binOut, static_cast<size_t>(counts[0]), st);
  Download(binary.order, a.order, numTris, st);
  binary.depth = status[0];
  wide = WideBvh{};
  if (options.wide) DownloadWide(a, numTris, status, counts, wide, wideSrc, st);
  done.Record(st);
  done.Synchronize();
  GatherBvhTriangles(positions, binary.order, binary.tris, &pool);
}

// The report of a build that ran on the device.
BvhBuildReport Report(const Plan& plan, const Marks& m, const Stopwatch& wall, int passCount) {
  BvhBuildReport report;
  report.builder = "gpu";
  report.method = std::string(plan.passes ? "PLOC passes" : "H-PLOC") + (plan.top ? " + SAH top" : "");
  report.buildMs = m.built.MsSince(m.start);
  report.sortMs = m.sorted.MsSince(m.start);
  report.clusterMs = m.clustered.MsSince(m.sorted);
  report.topMs = m.topped.MsSince(m.clustered);
  report.sweepMs = m.built.MsSince(m.topped);
  report.transferMs = wall.Ms() - report.buildMs;
  report.iterations = passCount;
  return report;
}

// The wide BVH over the spatial-split top's references (a built with the triangles' tree): built on the device, its
// leaves' sources mapped to the binary BVH's positions, and read back into wide and src (no triangles yet). Returns
// false (why in note) where it is too deep for the traversal or a node does not fit its grid.
// built: recorded once the tree is on the device.
bool BuildSplitWide(const BuildArrays& a, int n, const SplitTop& top, const BvhBuildOptions& options, WideBvh& wide,
                    std::vector<int>& src, std::string& note, CudaEvent& built, cudaStream_t st) {
  Plan plan{false, false, 0};
  plan.tempBytes = CubTempBytes(top.refs, plan, st);
  BuildArrays b;
  PlocTree tree{};
  Carver sizing{nullptr};
  Carve(sizing, static_cast<size_t>(top.refs), plan, true, b, tree, false);
  DeviceBuffer<unsigned char> arena(sizing.used, "the GPU BVH build over the split top's references");
  Carver real{arena.Get()};
  Carve(real, static_cast<size_t>(top.refs), plan, true, b, tree, false);
  const size_t refBytes = static_cast<size_t>(top.refs) * sizeof(Float4);
  TRACER_CUDA_CHECK(cudaMemcpyAsync(b.triLo, top.lo.Get(), refBytes, cudaMemcpyDeviceToDevice, st));
  TRACER_CUDA_CHECK(cudaMemcpyAsync(b.triHi, top.hi.Get(), refBytes, cudaMemcpyDeviceToDevice, st));
  SortKeys(b, top.keys.Get(), top.ids.Get(), top.refs, plan.tempBytes, st);
  StartTree(b, tree, options, st);
  ClusterHierarchically(b, tree, options, nullptr, st, GroupMask(top));
  WriteLayouts(b, tree, options, st);
  MapWideSources(top, a.order, n, b.order, b.wideTriSrc, st);
  built.Record(st);
  int status[4], counts[2];
  TRACER_CUDA_CHECK(cudaMemcpyAsync(status, b.status, sizeof status, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaMemcpyAsync(counts, b.totals, sizeof counts, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  if (status[2] || status[1] > kWideMaxDepth) {
    note = status[2] ? "a node's extent does not fit an 8-bit grid" : "too deep for the traversal";
    return false;
  }
  DownloadWide(b, static_cast<size_t>(top.refs), status, counts, wide, src, st);
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  return true;
}

// The spatial-split top (split_top.h) for the wide BVH: built, and kept where its SAH cost is the lower (or forced:
// TRACER_SPLIT_TOP=1); then wide and wideSrc are its. The report's method says which and both costs, its build time
// includes it. The SAH costs read the nodes alone (WideSahCost counts triangles only for a root box of no area, which
// the long triangles that pass the waste gate do not make).
void TrySplitTop(const BuildArrays& a, int n, const BvhBuildOptions& options, WideBvh& wide, std::vector<int>& wideSrc,
                 BvhBuildReport& report, bool forced, cudaStream_t st) {
  CudaEvent start, end;
  const Stopwatch wall;
  start.Record(st);
  WideBvh split;
  std::vector<int> splitSrc;
  std::string why;
  bool built = false;
  int groups = 0, spatial = 0, refs = 0;
  try {  // (out of device memory, say): the first tree, which is sound, and why
    const SplitTop top = BuildSplitTop(a, n, knobs::SplitTopMin(kSplitTopMin), st);
    if (top.refs == 0) {
      report.method += " (spatial-split top: no split made)";
      return;
    }
    groups = top.groups, spatial = top.spatialSplits, refs = top.refs;
    built = BuildSplitWide(a, n, top, options, split, splitSrc, why, end, st);
  } catch (const std::exception& e) {
    report.method += std::string(" (spatial-split top not used: ") + e.what() + ")";
    return;
  }
  end.Synchronize();
  const double ms = end.MsSince(start);
  report.buildMs += ms;
  report.transferMs += wall.Ms() - ms;
  char text[192];
  if (!built) {
    report.method += " (spatial-split top not used: " + why + ")";
    return;
  }
  const double was = WideSahCost(wide), now = WideSahCost(split);
  const bool keep = forced || now < was;
  std::snprintf(
      text, sizeof text,
      " + spatial-split top%s (%d groups, %d spatial splits, %.3f references a triangle; SAH cost %.2f, without %.2f)",
      keep ? "" : " not kept", groups, spatial, static_cast<double>(refs) / n, now, was);
  report.method += text;
  if (keep) {
    wide = std::move(split);
    wideSrc = std::move(splitSrc);
  }
}

enum class Clustering { kHierarchical, kPasses };

BvhBuildReport Build(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary, WideBvh& wide,
                     Clustering how) {
  const size_t numTris = positions.size() / 3;
  if (numTris < 2) return HostBuild(positions, options, binary, wide, "fewer than two triangles: built on the CPU");
  if (numTris > (1u << 30)) throw std::runtime_error("GPU BVH builder: more than 2^30 triangles");
  const int n = static_cast<int>(numTris);
  Plan plan{how == Clustering::kPasses, n > kSahTopRange && SahTopOn(numTris), 0};
  plan.splitTop = SplitTopFor(options, plan.passes);
  CudaStream stream;
  const cudaStream_t st = stream.Get();
  Marks marks;
  const Stopwatch wall;
  plan.tempBytes = CubTempBytes(n, plan, st);
  BuildArrays a;
  PlocTree tree{};
  Carver sizing{nullptr};
  Carve(sizing, numTris, plan, options.wide, a, tree);
  DeviceBuffer<unsigned char> arena(sizing.used, "the GPU BVH build");
  Carver real{arena.Get()};
  Carve(real, numTris, plan, options.wide, a, tree);
  const int passCount = RunStages(positions, a, tree, options, plan, marks, st);

  int status[4], counts[2];
  double waste[2] = {0.0, 0.0};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(status, a.status, sizeof status, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaMemcpyAsync(counts, a.totals, sizeof counts, cudaMemcpyDeviceToHost, st));
  if (plan.splitTop == SplitTopPlan::kByWaste)
    TRACER_CUDA_CHECK(cudaMemcpyAsync(waste, WasteSums(a, n), sizeof waste, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  if (status[2]) throw std::runtime_error("wide BVH: a node's extent does not fit an 8-bit grid");
  if (status[3]) throw std::logic_error("GPU BVH builder: the clustering handed the SAH top a wrong cluster count");
  if (status[0] >= kBvhStackSize || (options.wide && status[1] > kWideMaxDepth)) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "the GPU-built tree is too deep for the traversal (binary depth %d, wide depth %d): built on the CPU",
                  status[0], status[1]);
    return HostBuild(positions, options, binary, wide, why);
  }
  ThreadPool pool(ThreadPool::ThreadsFor(0));
  std::vector<int> wideSrc;
  FetchTrees(positions, a, options, status, counts, binary, wide, wideSrc, marks.done, pool, st);
  BvhBuildReport report = Report(plan, marks, wall, passCount);
  if (plan.splitTop == SplitTopPlan::kForced ||
      (plan.splitTop == SplitTopPlan::kByWaste && SplitTopWorthTrying(waste[0], waste[1])))
    TrySplitTop(a, n, options, wide, wideSrc, report, plan.splitTop == SplitTopPlan::kForced, st);
  if (options.wide) {
    const Stopwatch gather;
    GatherWideTriangles(binary.tris, wideSrc, wide.tris, pool);
    report.transferMs += gather.Ms();  // the report's "transfers and gathers"
  }
  return report;
}

}  // namespace
}  // namespace tracer::gpu_build

namespace tracer {

BvhBuildReport BuildBvhsOnGpu(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                              WideBvh& wide) {
  return gpu_build::Build(positions, options, binary, wide, gpu_build::Clustering::kHierarchical);
}

BvhBuildReport BuildBvhsOnGpuInPasses(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                                      WideBvh& wide) {
  return gpu_build::Build(positions, options, binary, wide, gpu_build::Clustering::kPasses);
}

BvhBuildReport BuildBvhsAuto(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                             WideBvh& wide) {
  BvhBuildReport gpu = BuildBvhsOnGpu(positions, options, binary, wide);
  if (!options.wide || positions.size() / 3 >= kAutoCompareBelow || gpu.builder != "gpu") return gpu;
  Bvh hostBinary;
  WideBvh hostWide;
  BvhBuildReport host;
  try {
    host = gpu_build::HostBuild(positions, options, hostBinary, hostWide, "");
  } catch (const std::exception& e) {  // (out of host memory, say): the GPU's tree, which is sound, and why
    gpu.note = std::string("auto: the host-built tree to compare with failed (") + e.what() + "); kept the GPU's";
    return gpu;
  }
  const double gpuSah = WideSahCost(wide), hostSah = WideSahCost(hostWide);
  char why[128];
  if (hostSah < gpuSah) {
    binary = std::move(hostBinary);
    wide = std::move(hostWide);
    std::snprintf(why, sizeof why, "auto: SAH cost %.2f, the GPU-built tree's %.2f (built in %.1f ms)", hostSah, gpuSah,
                  gpu.buildMs + gpu.transferMs);
    host.method = why;
    return host;
  }
  std::snprintf(why, sizeof why, " (auto: SAH cost %.2f, the host-built tree's %.2f, built in %.0f ms)", gpuSah,
                hostSah, host.buildMs);
  gpu.method += why;
  return gpu;
}

}  // namespace tracer
