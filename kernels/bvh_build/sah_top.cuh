// @file sah_top.cuh: the SAH top's constants, queues and device helpers (binning, the cheapest binned split, a block's
// stable partition, handing a group on), shared by its block- and warp-wide kernels (sah_top.cu) and its grid-wide
// levels (sah_top_wide.cu).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda/atomic>

#include "bvh_build/ploc_tree.cuh"

namespace tracer::gpu_build {

// The SAH top. Above Morton ranges of kSahTopRange leaves the clustering stops and hands over the clusters it has
// (each range's at most kHplocKeep; PLOC's passes: the clusters left at a quarter of the triangles), and the tree above
// them is built top down by the surface area heuristic, binned over kTopBins centroid bins on each axis: groups of
// more than kTopWide clusters by the whole grid a level at a time (TopWide*), then a block a group (TopBig), then a
// warp a group of at most kTopSmall, exactly (every centroid order) for at most kTopExact (TopSmall). The clustering
// makes good small subtrees but, greedy and confined to the Morton order, poorer big ones: on a heightfield its boxes
// overlap where SAH's planes tile, and rays visit more wide nodes than on a binned SAH tree. Its nodes then take their
// bottom-up choices (MakeNode) in one climb (TopClimb).
//
// It closes most of the heightfield's gap and helps the sports car and the bunny, but slows the conference room, where
// the clustered tree is better than either SAH tree (and its SAH cost says so); and it about doubles the build time. So
// it runs by default from kSahTopAuto triangles, where the build still keeps over 200 M triangles/s
// (docs/PERFORMANCE.md); TRACER_SAH_TOP=1 or 0 (a measuring knob) turns it on or off at any size. Choosing by SAH cost
// between it and the clustered tree would be better, but needs both and a top several times faster. Ranges of 32
// leaves rather than 64 (each still ending in at most kHplocKeep clusters) hand the top about twice the clusters:
// the 10M terrain's rays 1-7% faster, its build 37 -> 49 ms (206 M triangles/s on an H200); 16 built at 139 M
// triangles/s and traced no faster (docs/PERFORMANCE.md).
constexpr int kSahTopRange = 32;
constexpr size_t kSahTopAuto = size_t(1) << 20;  // triangles
constexpr int kTopBins = 64;                     // two a lane in BestBinnedSplit
constexpr int kTopBlock = 256;                   // TopBig
constexpr int kTopSmall = 128;     // a group of at most this many clusters is built by one warp (TopSmall)
constexpr int kTopExact = 32;      // ... exactly (every centroid order) at most this many, one candidate a lane
constexpr int kTopSmallWarps = 2;  // warps a TopSmall block
constexpr int kTopWide = 4096;     // groups of more clusters are split by the whole grid, a level at a time (TopWide*)
constexpr int kTopChunk = 2048;    // ... each block taking this many of a group's clusters

// A group of clusters that becomes inner node `node`: positions [begin, end) of buffer `parity` (TopBuffers), and
// their centroids' bounds.
struct TopTask {
  int begin, end, node, parity;
  float clo[3], chi[3];
};

// The top's counters, in device memory.
struct TopState {
  int items;                          // clusters handed over (TopBuffers::list)
  int nextNode;                       // the next inner node's number
  int bigHead, bigTail, outstanding;  // TopBig's queue: places taken, places filled, tasks queued and not done
  int smallCount;                     // TopSmall's groups
  int wideCount[2], chunks;           // grid-wide levels: groups (this level's, the next's), this level's chunks
};

// Where a group goes: the grid-wide levels (more than kTopWide clusters), TopBig's queue (more than kTopSmall), or
// TopSmall's list.
struct TopQueues {
  TopTask *big, *small, *wide[2];
  int* ready;
  // A select, not wide[level] (which would copy the struct to local memory)
  __device__ TopTask* Wide(int level) const { return level ? wide[1] : wide[0]; }
};

// The clusters handed over (list, kept for TopClimb), and two buffers the groups are partitioned between: a task of
// parity p reads Buffer(p) and writes its children's clusters to Buffer(ChildParity(p)).
struct TopBuffers {
  int *list, *a, *b;
  __device__ int* Buffer(int p) const { return p == 2 ? list : p == 1 ? b : a; }
};
TRACER_DEVICE int ChildParity(int p) { return p == 1 ? 0 : 1; }

// kTopBins bins on each axis: triangles, and the box of their clusters (floats as OrderedFromFloat).
struct TopBins {
  int count[3][kTopBins];
  uint32_t lo[3][3][kTopBins], hi[3][3][kTopBins];  // [axis][coordinate][bin]
};

TRACER_DEVICE void ClearBins(TopBins& b, int i, int stride) {
  for (; i < 3 * kTopBins; i += stride) {
    const int a = i / kTopBins, k = i % kTopBins;
    b.count[a][k] = 0;
    for (int c = 0; c < 3; ++c) b.lo[a][c][k] = 0xffffffffu, b.hi[a][c][k] = 0u;
  }
}

TRACER_DEVICE Vec3 Centroid(Float4 lo, Float4 hi) {
  return Vec3(lo.x * 0.5f + hi.x * 0.5f, lo.y * 0.5f + hi.y * 0.5f, lo.z * 0.5f + hi.z * 0.5f);
}

// The bin of centroid coordinate c over bounds starting at `origin`, scale = kTopBins / extent (0: one bin).
TRACER_DEVICE int TopBin(float c, float origin, float scale) {
  return min(kTopBins - 1, max(0, static_cast<int>((c - origin) * scale)));
}

struct TopGrid {  // a group's binning: origin and scale per axis
  float origin[3], scale[3];
  __device__ TopGrid(const float* clo, const float* chi) {
    for (int a = 0; a < 3; ++a) {
      const float extent = chi[a] - clo[a];
      origin[a] = clo[a];
      scale[a] = extent > 0.0f ? static_cast<float>(kTopBins) / extent : 0.0f;
    }
  }
  // Selects, not indexing by a (which would put the grid in local memory)
  __device__ float Origin(int a) const { return a == 0 ? origin[0] : a == 1 ? origin[1] : origin[2]; }
  __device__ float Scale(int a) const { return a == 0 ? scale[0] : a == 1 ? scale[1] : scale[2]; }
  __device__ int Bin(Vec3 c, int a) const { return TopBin(a == 0 ? c.x : a == 1 ? c.y : c.z, Origin(a), Scale(a)); }
};

// Adds a cluster to the bins. mask: the lanes of the warp that call it together (a ballot taken before the call,
// every lane in it calling), or 0. Where every lane of mask falls in one bin of an axis, which is the common case in
// the Morton order's consecutive clusters, the warp adds its sum, minima and maxima (REDUX, sm_80 and later) by one
// lane's atomics: 7 where the lanes' own took 7 each on one address, one after another. Otherwise each lane adds its
// values by atomics of its own. (Combining every lane's values with its bin's others first, by __match_any_sync and
// warp reductions by shuffles, made some scenes' tops a little faster and others' several times slower:
// docs/PERFORMANCE.md.)
TRACER_DEVICE void AddToBins(TopBins& b, const TopGrid& g, Float4 lo, Float4 hi, int count, uint32_t mask) {
  const Vec3 c = Centroid(lo, hi);
  const uint32_t l[3] = {OrderedFromFloat(lo.x), OrderedFromFloat(lo.y), OrderedFromFloat(lo.z)};
  const uint32_t h[3] = {OrderedFromFloat(hi.x), OrderedFromFloat(hi.y), OrderedFromFloat(hi.z)};
  (void)mask;  // (older GPUs: no REDUX)
  for (int a = 0; a < 3; ++a) {
    const int k = g.Bin(c, a);
#if __CUDA_ARCH__ >= 800
    if (mask != 0u) {
      const int leader = __ffs(static_cast<int>(mask)) - 1;
      if (__all_sync(mask, k == __shfl_sync(mask, k, leader))) {
        const int n = __reduce_add_sync(mask, count);
        uint32_t rl[3], rh[3];
        for (int e = 0; e < 3; ++e) rl[e] = __reduce_min_sync(mask, l[e]), rh[e] = __reduce_max_sync(mask, h[e]);
        if (static_cast<int>(threadIdx.x & 31) == leader) {
          atomicAdd(&b.count[a][k], n);
          for (int e = 0; e < 3; ++e) atomicMin(&b.lo[a][e][k], rl[e]), atomicMax(&b.hi[a][e][k], rh[e]);
        }
        continue;
      }
    }
#endif
    atomicAdd(&b.count[a][k], count);
    for (int e = 0; e < 3; ++e) atomicMin(&b.lo[a][e][k], l[e]), atomicMax(&b.hi[a][e][k], h[e]);
  }
}

// Grows bounds (6 ordered floats: min x, y, z, max x, y, z; shared or global memory) by box [lo, hi], if not empty.
TRACER_DEVICE void GrowOrderedBounds(uint32_t* bounds, Vec3 lo, Vec3 hi) { GrowOrderedBox(bounds, bounds + 3, lo, hi); }

// A box and a triangle count, for the sweeps over bins.
struct TopBox {
  float lo[3], hi[3];
  int n;
  __device__ static TopBox Empty() { return TopBox{{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}, 0}; }
  __device__ void Grow(const TopBox& o) {
    for (int e = 0; e < 3; ++e) lo[e] = Fminf(lo[e], o.lo[e]), hi[e] = Fmaxf(hi[e], o.hi[e]);
    n += o.n;
  }
  // Half the area times the triangles; infinite, not NaN, where an extent overflows (as UnionHalfArea), so that
  // costs stay ordered and every lane of a warp agrees on the cheapest split.
  __device__ float Cost() const {
    const float x = hi[0] - lo[0], y = hi[1] - lo[1], z = hi[2] - lo[2];
    const float c = (x * y + y * z + z * x) * static_cast<float>(n);
    return c == c ? c : kInf;
  }
};

TRACER_DEVICE TopBox BinBox(const TopBins& b, int a, int k) {
  TopBox r = TopBox::Empty();
  r.n = b.count[a][k];
  if (r.n > 0)
    for (int e = 0; e < 3; ++e) r.lo[e] = FloatFromOrdered(b.lo[a][e][k]), r.hi[e] = FloatFromOrdered(b.hi[a][e][k]);
  return r;
}

// v from the lane d below this one (up) or d above it (down), as __shfl_up_sync and __shfl_down_sync.
TRACER_DEVICE TopBox ShflTopBox(const TopBox& v, int d, bool up) {
  auto from = [d, up](auto x) { return up ? __shfl_up_sync(kFullMask, x, d) : __shfl_down_sync(kFullMask, x, d); };
  TopBox r;
  for (int e = 0; e < 3; ++e) r.lo[e] = from(v.lo[e]), r.hi[e] = from(v.hi[e]);
  r.n = from(v.n);
  return r;
}

// The cheaper of (cost, split) pairs over the warp, the lower split on ties; every lane gets it.
TRACER_DEVICE void WarpArgMin(float& cost, int& split) {
  for (int o = 16; o > 0; o /= 2) {
    const float c = __shfl_xor_sync(kFullMask, cost, o);
    const int s = __shfl_xor_sync(kFullMask, split, o);
    if (s >= 0 && (split < 0 || c < cost || (c == cost && s < split))) cost = c, split = s;
  }
}

// The binned SAH's cheapest split (one warp, every lane gets it): axis * kTopBins + the last bin on the left, or -1
// when every axis has all clusters in one bin. Lane l holds bins 2l and 2l + 1; prefix and suffix boxes by shuffles.
TRACER_DEVICE int BestBinnedSplit(const TopBins& b) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  float best = kInf;
  int split = -1;
  for (int a = 0; a < 3; ++a) {
    const TopBox b0 = BinBox(b, a, 2 * lane), b1 = BinBox(b, a, 2 * lane + 1);
    TopBox pair = b0;
    pair.Grow(b1);
    TopBox pre = pair, suf = pair;  // inclusive prefix over lanes <= lane, suffix over lanes >= lane
    for (int d = 1; d < 32; d *= 2) {
      const TopBox u = ShflTopBox(pre, d, true), w = ShflTopBox(suf, d, false);
      if (lane >= d) pre.Grow(u);
      if (lane + d < 32) suf.Grow(w);
    }
    TopBox before = ShflTopBox(pre, 1, true), after = ShflTopBox(suf, 1, false);
    if (lane == 0) before = TopBox::Empty();
    if (lane == 31) after = TopBox::Empty();
    // after bin 2l: left = before + b0, right = b1 + after; after bin 2l + 1: left = pre, right = after
    TopBox l0 = before, r0 = b1;
    l0.Grow(b0), r0.Grow(after);
    if (l0.n > 0 && r0.n > 0) {
      const float c = l0.Cost() + r0.Cost();
      if (split < 0 || c < best) best = c, split = a * kTopBins + 2 * lane;
    }
    if (pre.n > 0 && after.n > 0) {
      const float c = pre.Cost() + after.Cost();
      if (split < 0 || c < best) best = c, split = a * kTopBins + 2 * lane + 1;
    }
  }
  WarpArgMin(best, split);
  return split;
}

// Inner node `node` over children kid[0], kid[1]: the node's children, and theirs its parent.
TRACER_DEVICE void LinkTopNode(const PlocTree& t, int* parent, int node, int kid0, int kid1) {
  t.kids[node - t.n] = make_int2(kid0, kid1);
  parent[kid0] = node, parent[kid1] = node;
}

// A round of a block's stable partition (all threads call it): this thread's cluster, if valid, goes left or right;
// returns its rank among the round's clusters on its side (those of lower threads), and the round's totals. counts:
// 2 * kTopBlock / 32 ints of shared memory.
struct RoundRank {
  int rank, left, right;
};
TRACER_DEVICE RoundRank RankInRound(bool valid, bool left, int* counts) {
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const uint32_t lm = __ballot_sync(kFullMask, valid && left), rm = __ballot_sync(kFullMask, valid && !left);
  if (lane == 0) counts[2 * warp] = __popc(lm), counts[2 * warp + 1] = __popc(rm);
  __syncthreads();
  const uint32_t below = (1u << lane) - 1u;
  RoundRank r{__popc((left ? lm : rm) & below), 0, 0};
  for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) {
    if (w < warp) r.rank += counts[2 * w + (left ? 0 : 1)];
    r.left += counts[2 * w], r.right += counts[2 * w + 1];
  }
  __syncthreads();  // the counts are rewritten next round
  return r;
}

// Hands group c on: to the grid-wide level after `level` (a parity), TopBig's queue or TopSmall's list.
TRACER_DEVICE void PushTopTask(TopState* s, const TopQueues& q, const TopTask& c, int level) {
  using Ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
  const int count = c.end - c.begin;
  if (count > kTopWide) {
    q.Wide(1 - level)[atomicAdd(&s->wideCount[1 - level], 1)] = c;
  } else if (count > kTopSmall) {
    atomicAdd(&s->outstanding, 1);
    const int at = atomicAdd(&s->bigTail, 1);
    q.big[at] = c;
    Ref(q.ready[at]).store(1, cuda::std::memory_order_release);
  } else {
    q.small[atomicAdd(&s->smallCount, 1)] = c;
  }
}

// The grid-wide levels' arrays (sah_top_wide.cu).
struct TopWide {
  TopBins* bins;        // per group of the level
  int* split;           // per group: BestBinnedSplit's answer
  uint32_t* kidBounds;  // per group: 12, both children's centroid bounds (ordered min x, y, z, max x, y, z)
  int* chunk0;          // per group: its first chunk
  int2* chunkOf;        // per chunk: (group, first position)
  int* chunkLeft;       // per chunk: its clusters on the left
};

}  // namespace tracer::gpu_build
