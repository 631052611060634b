// @file sah_top.cu: the SAH top's kernels but the grid-wide levels: TopBig (a block a group), TopSmall (a warp a
// group), the root group (TopBounds, TopInit), H-PLOC's clusters to the top's list (TopFlags, TopCompact) and the
// top's nodes' bottom-up choices (TopClimb); and BuildTop, which runs them.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>

#include "bvh_build/sah_top.h"
#include "bvh_build/sah_top_wide.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// TopBig: the groups of more than kTopSmall clusters, a block each, from a queue that the blocks fill with the
// children they make (ready[q]: task q is filled). A block bins its group's clusters (shared-memory atomics), finds the
// cheapest split (one warp), and partitions the clusters into the other buffer: left ones from the front, right ones
// from the back, both children's centroid bounds reduced on the way. Children of one cluster are that cluster; of at
// most kTopSmall go to TopSmall's list; larger ones back to the queue. The blocks stop when no task is queued or being
// worked on (outstanding 0).
__global__ void __launch_bounds__(kTopBlock, 2)
    TopBig(PlocTree t, TopBuffers buf, TopState* s, TopQueues queues, int* parent) {
  using Ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
  __shared__ TopBins bins;
  __shared__ TopTask task;
  __shared__ int taskIndex, split, counts[2 * kTopBlock / 32];
  __shared__ uint32_t kidBounds[2][6];  // children's centroid bounds: ordered min x, y, z, max x, y, z
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  for (;;) {
    if (tid == 0) {
      int q = atomicAdd(&s->bigHead, 1);
      for (;;) {
        if (Ref(queues.ready[q]).load(cuda::std::memory_order_acquire)) break;
        if (Ref(s->outstanding).load(cuda::std::memory_order_acquire) == 0) {
          q = -1;
          break;
        }
        __nanosleep(128);
      }
      taskIndex = q;
      if (q >= 0) task = queues.big[q];
    }
    ClearBins(bins, tid, kTopBlock);
    if (tid < 12) kidBounds[tid / 6][tid % 6] = tid % 6 < 3 ? 0xffffffffu : 0u;
    __syncthreads();
    if (taskIndex < 0) return;
    const int begin = task.begin, end = task.end;
    const int* in = buf.Buffer(task.parity);
    int* out = buf.Buffer(ChildParity(task.parity));
    const TopGrid grid(task.clo, task.chi);
    for (int i = begin + tid; i - lane < end; i += kTopBlock) {  // every lane of a warp with work goes round
      const uint32_t mask = __ballot_sync(kFullMask, i < end);
      if (i >= end) continue;
      const int k = __ldcg(in + i);
      AddToBins(bins, grid, t.lo[k], t.hi[k], t.Count(k), mask);
    }
    __syncthreads();
    if (warp == 0) {
      const int sp = BestBinnedSplit(bins);
      if (lane == 0) split = sp;
    }
    __syncthreads();
    const int sp = split, axis = sp >= 0 ? sp / kTopBins : 0, last = sp % kTopBins, half = begin + (end - begin) / 2;
    Vec3 loL(kInf), hiL(-kInf), loR(kInf), hiR(-kInf);  // each child's centroid bounds, this thread's part
    int leftDone = 0, rightDone = 0;
    for (int base = begin; base < end; base += kTopBlock) {
      const int i = base + tid;
      const bool valid = i < end;
      int k = 0;
      bool left = false;
      Vec3 c;
      if (valid) {
        k = __ldcg(in + i);
        c = Centroid(t.lo[k], t.hi[k]);
        left = sp >= 0 ? grid.Bin(c, axis) <= last : i < half;
      }
      const RoundRank r = RankInRound(valid, left, counts);
      if (valid) {
        out[left ? begin + leftDone + r.rank : end - 1 - (rightDone + r.rank)] = k;
        if (left)
          loL = Min(loL, c), hiL = Max(hiL, c);
        else
          loR = Min(loR, c), hiR = Max(hiR, c);
      }
      leftDone += r.left, rightDone += r.right;
    }
    GrowOrderedBounds(kidBounds[0], loL, hiL);
    GrowOrderedBounds(kidBounds[1], loR, hiR);
    __threadfence();  // the partitioned clusters, before thread 0 hands them on
    __syncthreads();
    if (tid == 0) {
      const int nl = leftDone, childParity = ChildParity(task.parity);
      int kid[2];
      for (int h = 0; h < 2; ++h) {
        const int first = h ? begin + nl : begin, last1 = h ? end : begin + nl, count = last1 - first;
        if (count == 1) {
          kid[h] = __ldcg(out + first);
          continue;
        }
        kid[h] = atomicAdd(&s->nextNode, 1);
        TopTask c{first, last1, kid[h], childParity, {}, {}};
        for (int e = 0; e < 3; ++e)
          c.clo[e] = FloatFromOrdered(kidBounds[h][e]), c.chi[e] = FloatFromOrdered(kidBounds[h][3 + e]);
        PushTopTask(s, queues, c, 0);  // never wide: at most kTopWide clusters here
      }
      LinkTopNode(t, parent, task.node, kid[0], kid[1]);
      Ref(s->outstanding).fetch_sub(1, cuda::std::memory_order_release);
    }
    __syncthreads();  // the shared task and bins, before the next task
  }
}

// One warp's shared memory in TopSmall: a group's clusters (local numbers 0..m-1), their order (perm, partitioned in
// place through tmp), a stack of subgroups (ranges of perm) and bins.
struct TopWarp {
  int node[kTopSmall], count[kTopSmall];
  float cen[3][kTopSmall], lo[3][kTopSmall], hi[3][kTopSmall];
  int perm[kTopSmall], tmp[kTopSmall];
  int3 stack[kTopSmall / 2 + 1];  // (begin, end, node): each pushed subgroup has at least two clusters
  TopBins bins;
};

// Whether local cluster q comes before p along axis a: by centroid, then by number (a strict total order).
__device__ bool Before(const TopWarp& w, int a, int q, int p) {
  return w.cen[a][q] < w.cen[a][p] || (w.cen[a][q] == w.cen[a][p] && q < p);
}

// TopSmall: each warp builds the whole subtree of a group of at most kTopSmall clusters, subgroup by subgroup: those
// of at most kTopExact clusters split exactly (each lane tries one cluster as the first on the right, on each axis),
// larger ones binned as TopBig does.
__global__ void __launch_bounds__(32 * kTopSmallWarps)
    TopSmall(PlocTree t, TopBuffers buf, TopState* s, const TopTask* small, int* parent) {
  __shared__ TopWarp warps[kTopSmallWarps];
  const int lane = static_cast<int>(threadIdx.x & 31);
  TopWarp& w = warps[threadIdx.x / 32];
  const int tasks = s->smallCount;
  const int warpsInGrid = static_cast<int>(gridDim.x) * kTopSmallWarps;
  for (int g = static_cast<int>(blockIdx.x) * kTopSmallWarps + static_cast<int>(threadIdx.x / 32); g < tasks;
       g += warpsInGrid) {
    const TopTask task = small[g];
    const int m = task.end - task.begin;
    const int* in = buf.Buffer(task.parity);
    for (int j = lane; j < m; j += 32) {
      const int k = __ldcg(in + task.begin + j);
      const Float4 lo = t.lo[k], hi = t.hi[k];
      const Vec3 c = Centroid(lo, hi);
      w.node[j] = k, w.count[j] = t.Count(k), w.perm[j] = j;
      w.cen[0][j] = c.x, w.cen[1][j] = c.y, w.cen[2][j] = c.z;
      w.lo[0][j] = lo.x, w.lo[1][j] = lo.y, w.lo[2][j] = lo.z;
      w.hi[0][j] = hi.x, w.hi[1][j] = hi.y, w.hi[2][j] = hi.z;
    }
    if (lane == 0) w.stack[0] = make_int3(0, m, task.node);
    int sp = 1;
    __syncwarp();
    while (sp > 0) {
      const int3 u = w.stack[--sp];
      const int b = u.x, e = u.y, mm = e - b;
      __syncwarp();                         // the stack entry is read before it is overwritten
      int axis = 0, pivot = -1, last = -1;  // exact: the first on the right; binned: the last bin on the left
      bool exact = mm <= kTopExact;
      float origin = 0.0f, scale = 0.0f;
      if (exact) {
        float best = kInf;
        int split = -1;
        const int p = lane < mm ? w.perm[b + lane] : 0;
        for (int a = 0; a < 3; ++a) {
          TopBox l = TopBox::Empty(), r = TopBox::Empty();
          for (int i = b; i < e && lane < mm; ++i) {
            const int q = w.perm[i];
            const TopBox x{{w.lo[0][q], w.lo[1][q], w.lo[2][q]}, {w.hi[0][q], w.hi[1][q], w.hi[2][q]}, w.count[q]};
            if (Before(w, a, q, p))
              l.Grow(x);
            else
              r.Grow(x);
          }
          if (lane < mm && l.n > 0) {
            const float c = l.Cost() + r.Cost();
            if (split < 0 || c < best) best = c, split = a * kTopSmall + p;
          }
        }
        WarpArgMin(best, split);
        axis = split / kTopSmall, pivot = split % kTopSmall;  // always found: mm >= 2 and the order is strict
      } else {
        float clo[3] = {kInf, kInf, kInf}, chi[3] = {-kInf, -kInf, -kInf};
        for (int i = b + lane; i < e; i += 32) {
          const int q = w.perm[i];
          for (int a = 0; a < 3; ++a) clo[a] = Fminf(clo[a], w.cen[a][q]), chi[a] = Fmaxf(chi[a], w.cen[a][q]);
        }
        for (int a = 0; a < 3; ++a)
          for (int o = 16; o > 0; o /= 2)
            clo[a] = Fminf(clo[a], __shfl_xor_sync(kFullMask, clo[a], o)),
            chi[a] = Fmaxf(chi[a], __shfl_xor_sync(kFullMask, chi[a], o));
        const TopGrid grid(clo, chi);
        ClearBins(w.bins, lane, 32);
        __syncwarp();
        for (int i = b + lane; i - lane < e; i += 32) {
          const uint32_t mask = __ballot_sync(kFullMask, i < e);
          if (i >= e) continue;
          const int q = w.perm[i];
          AddToBins(w.bins, grid, Float4{w.lo[0][q], w.lo[1][q], w.lo[2][q], 0.0f},
                    Float4{w.hi[0][q], w.hi[1][q], w.hi[2][q], 0.0f}, w.count[q], mask);
        }
        __syncwarp();
        const int sp2 = BestBinnedSplit(w.bins);
        axis = sp2 >= 0 ? sp2 / kTopBins : 0, last = sp2 >= 0 ? sp2 % kTopBins : -1;
        origin = grid.Origin(axis), scale = grid.Scale(axis);
      }
      // Partition perm[b, e) through tmp: left ones from the front, right ones from the back.
      int leftDone = 0, rightDone = 0;
      for (int base = b; base < e; base += 32) {
        const int i = base + lane;
        const bool valid = i < e;
        bool left = false;
        int q = 0;
        if (valid) {
          q = w.perm[i];
          left = exact       ? Before(w, axis, q, pivot)
                 : last >= 0 ? TopBin(w.cen[axis][q], origin, scale) <= last
                             : i < b + mm / 2;
        }
        const uint32_t lm = __ballot_sync(kFullMask, valid && left), rm = __ballot_sync(kFullMask, valid && !left);
        const uint32_t below = (1u << lane) - 1u;
        if (valid) w.tmp[left ? b + leftDone + __popc(lm & below) : e - 1 - rightDone - __popc(rm & below)] = q;
        leftDone += __popc(lm), rightDone += __popc(rm);
      }
      __syncwarp();
      for (int i = b + lane; i < e; i += 32) w.perm[i] = w.tmp[i];
      __syncwarp();
      int kid[2];
      for (int h = 0; h < 2; ++h) {
        const int first = h ? b + leftDone : b, end1 = h ? e : b + leftDone;
        if (end1 - first == 1) {
          kid[h] = w.node[w.perm[first]];
        } else {
          int id = 0;
          if (lane == 0) {
            id = atomicAdd(&s->nextNode, 1);
            w.stack[sp] = make_int3(first, end1, id);
          }
          kid[h] = __shfl_sync(kFullMask, id, 0);
          ++sp;
        }
      }
      if (lane == 0) LinkTopNode(t, parent, u.z, kid[0], kid[1]);
      __syncwarp();
    }
  }
}

// The clusters' centroid bounds (bounds: ordered min x, y, z, max x, y, z), for the root group.
__global__ void TopBounds(PlocTree t, TopBuffers buf, const TopState* s, uint32_t* bounds) {
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
  const int m = s->items;
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < m;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const int k = buf.list[i];
    const Vec3 c = Centroid(t.lo[k], t.hi[k]);
    const float cc[3] = {c.x, c.y, c.z};
    for (int a = 0; a < 3; ++a) {
      const uint32_t u = OrderedFromFloat(cc[a]);
      cmin[a] = min(cmin[a], u), cmax[a] = max(cmax[a], u);
    }
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
  }
}

// The root group (all clusters; the root is node 2n - 2) to the first grid-wide level, TopBig's queue or TopSmall's
// list; the inner nodes the clustering made are [n, 2n - m), so the top's others are numbered from 2n - m. status[3]:
// the clustering handed over a count that does not add up.
__global__ void TopInit(PlocTree t, TopState* s, const uint32_t* bounds, TopQueues q, int* parent, const int* made,
                        int* status) {
  const int m = s->items, root = 2 * t.n - 2;
  if (m < 2 || (made && *made != t.n - m)) {
    status[3] = 1;
    return;
  }
  s->nextNode = 2 * t.n - m;
  parent[root] = -1;
  TopTask task{0, m, root, 2, {}, {}};
  for (int a = 0; a < 3; ++a) task.clo[a] = FloatFromOrdered(bounds[a]), task.chi[a] = FloatFromOrdered(bounds[3 + a]);
  PushTopTask(s, q, task, 1);  // to grid-wide level 0, if it is that large
}

// H-PLOC's handed-over clusters (HandOver: -1 elsewhere) to the top's list, in order: flags, their exclusive sum (CUB),
// then each to its place.
__global__ void TopFlags(const int* handed, int n, int* flags) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) flags[i] = handed[i] >= 0;
}
__global__ void TopCompact(const int* handed, const int* flags, const int* scan, int n, int* list, TopState* s) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  if (flags[i]) list[scan[i]] = handed[i];
  if (i == n - 1) s->items = scan[i] + flags[i];
}

// The top's nodes' bottom-up choices (MakeNode): each cluster handed over climbs from its parent, and of two children
// the second to arrive makes the node (Apetrei 2014's climb), up to the root.
__global__ void TopClimb(PlocTree t, TopBuffers buf, const TopState* s, const int* parent, int* arrive, int maxLeaf,
                         double ci, double ct, bool wide) {
  using Ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
  const int m = s->items;
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < m;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    int k = buf.list[i];
    for (;;) {
      const int p = parent[k];
      if (p < 0) break;
      if (Ref(arrive[p - t.n]).fetch_add(1, cuda::std::memory_order_acq_rel) == 0) break;
      const int2 ab = t.kids[p - t.n];
      MakeNode(t, p, ab.x, ab.y, BoxMin(t.lo[ab.x], t.lo[ab.y]), BoxMax(t.hi[ab.x], t.hi[ab.y]), maxLeaf, ci, ct, wide);
      k = p;
    }
  }
}

// TopBig's blocks: resident together (each waits for tasks the others make).
constexpr int kTopBigBlocksPerSm = 2;
int TopBigBlocks() { return kTopBigBlocksPerSm * Multiprocessors(); }

}  // namespace

size_t TopScanBytes(int n, cudaStream_t st) {
  size_t bytes = 0;
  TRACER_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<int*>(nullptr), static_cast<int*>(nullptr), n, st));
  return bytes;
}

// TopBig's queue places: a block takes one more than there are tasks before it stops.
size_t TopReadySize(size_t n) { return n + static_cast<size_t>(TopBigBlocks()); }

// Whether the SAH top runs for n triangles: from kSahTopAuto triangles (see the SAH top's comment in sah_top.cuh), or
// as TRACER_SAH_TOP says (1 on, 0 off: a measuring knob).
bool SahTopOn(size_t n) {
  const knobs::Switch s = knobs::SahTop();
  return s == knobs::Switch::kAuto ? n >= kSahTopAuto : s == knobs::Switch::kOn;
}

// The list and buffer a in the unsorted Morton codes' 8 bytes a triangle, buffer b in the unsorted triangle numbers,
// the parents (2n - 1) and arrivals (n - 1) in the triangles' boxes, all free once the leaves are made (InitLeaves).
// The top's counters start at 0; H-PLOC hands its clusters over in buffer a, at their places, -1 elsewhere.
TopScratch PrepareTop(const BuildArrays& a, int n, bool passes, cudaStream_t st) {
  int* keys = reinterpret_cast<int*>(a.keys);
  const TopScratch top{TopBuffers{keys, keys + n, a.ids}, reinterpret_cast<int*>(a.triLo),
                       reinterpret_cast<int*>(a.triHi)};
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.topState, 0, sizeof(TopState), st));
  if (!passes) TRACER_CUDA_CHECK(cudaMemsetAsync(top.buf.a, 0xff, static_cast<size_t>(n) * sizeof(int), st));
  return top;
}

// The SAH top over the clusters the clustering handed over (TopBounds, TopInit, the grid-wide levels, TopBig,
// TopSmall, TopClimb).
void BuildTop(const BuildArrays& a, const PlocTree& tree, const TopScratch& top, const BvhBuildOptions& options,
              bool passes, size_t tempBytes, cudaStream_t st) {
  const int n = tree.n, sms = Multiprocessors();
  const TopBuffers& buf = top.buf;
  int *parent = top.parent, *arrive = top.arrive;
  if (!passes) {  // H-PLOC handed its clusters over in buffer a, at their places: to the list, in Morton order
    int *flags = a.order, *scan = a.cNode[0];  // both free until the sweeps
    const unsigned grid = GridFor(static_cast<size_t>(n), kBlock);
    TopFlags<<<grid, kBlock, 0, st>>>(buf.a, n, flags);
    TRACER_CHECK_LAUNCH("TopFlags");
    size_t bytes = tempBytes;
    TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(a.temp, bytes, flags, scan, n, st));
    TopCompact<<<grid, kBlock, 0, st>>>(buf.a, flags, scan, n, buf.list, a.topState);
    TRACER_CHECK_LAUNCH("TopCompact");
  }
  TRACER_CUDA_CHECK(cudaMemsetAsync(arrive, 0, static_cast<size_t>(n - 1) * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.topQueues.ready, 0, TopReadySize(static_cast<size_t>(n)) * sizeof(int), st));
  const uint32_t initBounds[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.topBounds, initBounds, sizeof initBounds, cudaMemcpyHostToDevice, st));
  const unsigned spread = std::min(GridFor(static_cast<size_t>(n), kBlock), static_cast<unsigned>(8 * sms));
  TopBounds<<<spread, kBlock, 0, st>>>(tree, buf, a.topState, a.topBounds);
  TRACER_CHECK_LAUNCH("TopBounds");
  TopInit<<<1, 1, 0, st>>>(tree, a.topState, a.topBounds, a.topQueues, parent, passes ? nullptr : a.counter, a.status);
  TRACER_CHECK_LAUNCH("TopInit");
  TopWideLevels(a, tree, buf, parent, sms, st);
  TopBig<<<TopBigBlocks(), kTopBlock, 0, st>>>(tree, buf, a.topState, a.topQueues, parent);
  TRACER_CHECK_LAUNCH("TopBig");
  const unsigned smallBlocks =
      std::min(GridFor(static_cast<size_t>(n) / kTopSmall + 1, kTopSmallWarps), static_cast<unsigned>(16 * sms));
  TopSmall<<<smallBlocks, 32 * kTopSmallWarps, 0, st>>>(tree, buf, a.topState, a.topQueues.small, parent);
  TRACER_CHECK_LAUNCH("TopSmall");
  TopClimb<<<spread, kBlock, 0, st>>>(tree, buf, a.topState, parent, arrive, options.maxLeafSize, options.intersectCost,
                                      options.traversalCost, options.wide);
  TRACER_CHECK_LAUNCH("TopClimb");
}

}  // namespace tracer::gpu_build
