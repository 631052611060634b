// @file hploc.cu: H-PLOC, the GPU BVH builder's default clustering: the whole of it in one launch, a warp running PLOC
// on each subtree of the Morton order's implicit LBVH as it climbs (Benthin et al. 2024, Apetrei 2014).
#include <cuda/atomic>

#include "bvh_build/hploc.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// H-PLOC, hierarchical PLOC (Benthin, Meister, Barczak, Mehalwal, Tsakok and Kensler 2024, "H-PLOC: Hierarchical
// Parallel Locally-Ordered Clustering for Bounding Volume Hierarchy Construction", Proc. ACM Comput. Graph. Interact.
// Tech. 7(3)): the whole clustering in one launch. Each thread starts at a leaf and climbs the implicit LBVH of the
// Morton order bottom-up (Apetrei 2014, "Fast and Simple Agglomerative LBVH Construction": a node's parent lies on the
// side of its range whose neighbouring Morton codes differ less; the first child to arrive there stops and the second
// goes on). Wherever a subtree covers more than kHplocKeep leaves, the warp runs PLOC on its clusters (the at most
// kHplocKeep that each child kept) until kHplocKeep are left (one at the root), so merging happens among nearby
// clusters in sequence without a launch per pass.
constexpr int kHplocKeep = 16;  // half a warp: the clusters of two children fill one
constexpr int kHplocBlock = 128;

// Whether the Morton codes at i, i + 1 differ less than those at j, j + 1: by the codes' XOR, then (equal codes) by the
// positions' XOR, which splits a run of equal codes in halves, then by position, so that no two are equal.
__device__ bool NeighboursCloser(const uint64_t* keys, int i, int j) {
  const uint64_t a = keys[i] ^ keys[i + 1], b = keys[j] ^ keys[j + 1];
  if (a != b) return a < b;
  const uint32_t ai = static_cast<uint32_t>(i ^ (i + 1)), bi = static_cast<uint32_t>(j ^ (j + 1));
  return ai != bi ? ai < bi : i < j;
}

// The position of the k-th (from 0) set bit of m (k < popc(m)): the largest q with fewer than k + 1 set bits below q.
__device__ int NthSetBit(uint32_t m, int k) {
  int q = 0;
  for (int w = 16; w > 0; w /= 2)
    if (__popc(m & ((1u << (q + w)) - 1u)) <= k) q += w;
  return q;
}

__device__ Float4 ShflBox(Float4 v, int src) {
  return Float4{__shfl_sync(kFullMask, v.x, src), __shfl_sync(kFullMask, v.y, src), __shfl_sync(kFullMask, v.z, src),
                0.0f};
}
__device__ Float4 ShflDownBox(Float4 v, int d) {
  return Float4{__shfl_down_sync(kFullMask, v.x, d), __shfl_down_sync(kFullMask, v.y, d),
                __shfl_down_sync(kFullMask, v.z, d), 0.0f};
}

// One warp clusters the subtree over leaf positions [l, r], whose children are [l, s) and [s, r]: the clusters each
// child kept (at the start of its range, followed by -1), PLOC within the warp (each cluster's nearest neighbour
// among kRadius on either side, NearerPair, lane positions as the order), until `target` are left, which it stores at
// [l, l + count) for the parent, followed by -1.
template <int kRadius>
__device__ void WarpCluster(const PlocTree& t, int* cNode, int* counter, int l, int s, int r, int target, int maxLeaf,
                            double ci, double ct, bool wide) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int nl = min(kHplocKeep, s - l), nr = min(kHplocKeep, r - s + 1);
  const int at =
      lane < kHplocKeep ? (lane < nl ? l + lane : -1) : (lane - kHplocKeep < nr ? s + lane - kHplocKeep : -1);
  int node = at >= 0 ? cNode[at] : -1;
  uint32_t live = __ballot_sync(kFullMask, node >= 0);
  int num = __popc(live);
  node = __shfl_sync(kFullMask, node, lane < num ? NthSetBit(live, lane) : lane);
  Float4 lo{}, hi{};
  if (lane < num) lo = t.lo[node], hi = t.hi[node];
  while (num > target) {
    float best = kInf;
    int nn = -1;
#pragma unroll
    for (int d = 1; d <= min(kRadius, 31); ++d) {
      const float a = UnionHalfArea(lo, hi, ShflDownBox(lo, d), ShflDownBox(hi, d));
      if (lane + d < num && (nn < 0 || NearerPair(a, lane, lane + d, best, nn))) best = a, nn = lane + d;
      const float back = __shfl_up_sync(kFullMask, a, d);  // the same pair's area, as lane - d found it
      if (lane >= d && lane < num && (nn < 0 || NearerPair(back, lane, lane - d, best, nn))) best = back, nn = lane - d;
    }
    const int other = nn >= 0 ? nn : lane;
    const int othersNn = __shfl_sync(kFullMask, nn, other);  // every lane: a shuffle that some skip never returns
    const bool mutual = lane < num && nn >= 0 && othersNn == lane;
    const bool makes = mutual && lane < nn;
    const uint32_t makers = __ballot_sync(kFullMask, makes);
    int base = 0;
    if (lane == 0) base = atomicAdd(counter, __popc(makers));
    base = __shfl_sync(kFullMask, base, 0);
    const int otherNode = __shfl_sync(kFullMask, node, other);
    const Float4 olo = ShflBox(lo, other), ohi = ShflBox(hi, other);
    if (makes) {
      const int k = t.n + base + __popc(makers & ((1u << lane) - 1u));
      lo = BoxMin(lo, olo), hi = BoxMax(hi, ohi);
      MakeNode(t, k, node, otherNode, lo, hi, maxLeaf, ci, ct, wide);
      node = k;
    }
    __syncwarp();  // the new nodes before other lanes make their parents
    const uint32_t keep = __ballot_sync(kFullMask, lane < num && !(mutual && lane > nn));
    num = __popc(keep);
    const int from = lane < num ? NthSetBit(keep, lane) : lane;
    node = __shfl_sync(kFullMask, node, from);
    lo = ShflBox(lo, from), hi = ShflBox(hi, from);
  }
  const int span = min(kHplocKeep, r - l + 1);
  if (lane < span) cNode[l + lane] = lane < num ? node : -1;
}

// The SAH top's clusters from subtree [l, r] with children [l, s) and [s, r]: those that each child of at most
// stopRange leaves kept (its leaves where it has at most kHplocKeep), at their places in cNode (handed: -1 elsewhere,
// compacted afterwards in Morton order, so that the top does not depend on the order warps finish in). Not inlined: a
// rare path, which inlined cost Hploc<8> spills.
__device__ __noinline__ void HandOver(const int* cNode, int l, int s, int r, int stopRange, int* handed) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (int h = 0; h < 2; ++h) {
    const int first = h ? s : l, size = h ? r - s + 1 : s - l;
    if (size <= stopRange && lane < min(kHplocKeep, size)) handed[first + lane] = cNode[first + lane];
  }
}

// Whether leaves [l, r] are whole groups (the root, without groups): the keys' group bits (groupMask) differ from
// those of the leaves just outside the range. A group's subtree ends in one cluster, so the tree above the groups is
// the one their keys' prefixes describe (the spatial-split top's).
__device__ bool WholeGroups(const uint64_t* keys, int n, int l, int r, uint64_t groupMask) {
  return (l == 0 || ((keys[l - 1] ^ keys[l]) & groupMask) != 0) &&
         (r == n - 1 || ((keys[r] ^ keys[r + 1]) & groupMask) != 0);
}

// bound: n - 1 ints, -1 (where two subtrees meet, the first to arrive leaves its far end); counter: nodes made.
// stopRange > 0: subtrees of more leaves are left to the SAH top, which gets their children's clusters (HandOver).
// kGroups: groupMask holds the keys' group bits, whose subtrees are clustered down to one cluster each (WholeGroups);
// without, the code is what it was before groups (the default build pays nothing for them).
template <int kRadius, bool kGroups>
__global__ void __launch_bounds__(kHplocBlock)
    Hploc(PlocTree t, const uint64_t* keys, int* cNode, int* bound, int* counter, int maxLeaf, double ci, double ct,
          bool wide, int stopRange, int* handed, uint64_t groupMask) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  int lo = i, hi = i, split = 0;  // this lane's subtree: leaf positions [lo, hi], its children meeting at split
  bool active = i < t.n;
  while (__any_sync(kFullMask, active)) {
    __syncwarp();  // what any lane wrote, before each lane's release below
    if (active) {
      // Release: the subtree's nodes and clusters before its sibling can find it; acquire: the sibling's.
      const bool right = lo == 0 || (hi != t.n - 1 && NeighboursCloser(keys, hi, lo - 1));
      cuda::atomic_ref<int, cuda::thread_scope_device> meet(bound[right ? hi : lo - 1]);
      const int other = meet.exchange(right ? lo : hi, cuda::std::memory_order_acq_rel);
      if (other >= 0 && right) split = hi + 1, hi = other;
      if (other >= 0 && !right) split = lo, lo = other;
      active = other >= 0;
    }
    __syncwarp();  // ... for every lane of the warp, which all read it below
    const bool root = active && lo == 0 && hi == t.n - 1;
    const bool whole = kGroups ? active && WholeGroups(keys, t.n, lo, hi, groupMask) : root;
    uint32_t todo = __ballot_sync(kFullMask, active && (hi - lo + 1 > kHplocKeep || whole));
    while (todo) {
      const int src = __ffs(todo) - 1;
      todo &= todo - 1;
      const int l = __shfl_sync(kFullMask, lo, src), r = __shfl_sync(kFullMask, hi, src),
                s = __shfl_sync(kFullMask, split, src);
      const bool one = kGroups ? __shfl_sync(kFullMask, whole, src) : r - l + 1 == t.n;
      if (stopRange > 0 && r - l + 1 > stopRange)
        HandOver(cNode, l, s, r, stopRange, handed);
      else
        WarpCluster<kRadius>(t, cNode, counter, l, s, r, one ? 1 : kHplocKeep, maxLeaf, ci, ct, wide);
    }
    if (root) active = false;
  }
}

}  // namespace

// H-PLOC; with the SAH top (top: the clusters it hands over, at their places), up to subtrees of kSahTopRange leaves;
// with groups (groupMask), each group's subtree down to one cluster.
void ClusterHierarchically(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, int* top,
                           cudaStream_t st, uint64_t groupMask) {
  const int n = tree.n;
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.bound, 0xff, static_cast<size_t>(n) * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.counter, 0, sizeof(int), st));
  const unsigned grid = GridFor(static_cast<size_t>(n), kHplocBlock);
  const double ci = options.intersectCost, ct = options.traversalCost;
  WithPlocRadius([&](auto radius) {
    auto hploc = groupMask ? Hploc<decltype(radius)::value, true> : Hploc<decltype(radius)::value, false>;
    hploc<<<grid, kHplocBlock, 0, st>>>(tree, a.sortedKeys, a.cNode[0], a.bound, a.counter, options.maxLeafSize, ci, ct,
                                        options.wide, top ? kSahTopRange : 0, top, groupMask);
  });
  TRACER_CHECK_LAUNCH("Hploc");
}

}  // namespace tracer::gpu_build
