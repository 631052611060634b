// @file bvh_build_gpu.cu: the GPU BVH builder of host/bvh_build_gpu.h (PLOC, then both layouts).
//
// Compiled with --fmad=false (CMakeLists.txt): the wide BVH's choices and boxes come from core/wide_collapse.h in
// double precision, and only without FMA contraction do they round as the host collapse's do.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "tracer/core/wide_collapse.h"
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

namespace tracer {
namespace {

constexpr int kBlock = 256;

// The binary tree PLOC makes, in device memory. Leaves are nodes [0, n), one triangle each, in Morton order;
// inner nodes are [n, 2n - 1), in the order they were merged, so children always come before their parent and
// the root is 2n - 2 (with the SAH top, its m - 1 nodes over m clusters are [2n - m, 2n - 1), numbered as they are
// made, top down: the root still 2n - 2). Arrays of inner nodes are indexed by node - n.
struct PlocTree {
  int n;
  Float4 *lo, *hi;  // every node's box (w unused)
  int* triFirst;    // every node: its first triangle's position in depth-first leaf order (top-down sweep)
  int2* kids;
  int* count;          // triangles below
  double* binCost;     // binary BVH: SAH cost of the subtree
  int* binNodes;       // binary BVH: its nodes in the subtree when this node is one (0 when it is a leaf)
  uint8_t* binLeaf;    // binary BVH: the subtree is cheaper as one leaf
  WideChoice* choice;  // wide BVH: the dynamic programming's choices
  int* wideNodes;      // wide BVH: nodes in the subtree when this node is a wide node
  // wide BVH: [s - 1], the wide nodes in the subtree when it takes s slots of a wide node above (kWideSlots a node),
  // so that each node counts its own from its children's without walking its slots
  int* wideBelow;
  int* wideFirst;  // wide BVH: depth-first position of the first triangle below (set by the wide sweep)
  int* binAt;      // binary BVH: this node's index there, or -1 (top-down sweep)
  int* binDepth;
  int4* wideAt;  // wide BVH: (index, childBase, triBase, depth) when this node is a wide node, else index -1

  __device__ int Count(int k) const { return k < n ? 1 : count[k - n]; }
  __device__ int BinNodes(int k) const { return k < n ? 0 : binNodes[k - n]; }
  __device__ bool BinaryLeaf(int k) const { return k < n || binLeaf[k - n]; }
  __device__ Vec3 Lo(int k) const { return Vec3(lo[k].x, lo[k].y, lo[k].z); }
  __device__ Vec3 Hi(int k) const { return Vec3(hi[k].x, hi[k].y, hi[k].z); }
};

// Where the clustering stands before a pass, in device memory, so that passes can be queued without waiting for
// each other: the clusters left, the number of the next node, and where the clusters are. Two copies, read by a pass
// and written for the next.
struct PassState {
  int clusters, nodeBase;
  int at;  // which of the two copies holds the clusters
};

// Floats as unsigned integers in the same order, for atomicMin/atomicMax.
__device__ uint32_t OrderedFromFloat(float f) {
  const uint32_t u = __float_as_uint(f);
  return (u >> 31) ? ~u : (u | 0x80000000u);
}
__device__ float FloatFromOrdered(uint32_t u) { return __uint_as_float((u >> 31) ? (u & 0x7fffffffu) : ~u); }

__device__ uint32_t WarpMin(uint32_t v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ uint32_t WarpMax(uint32_t v) {
  for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Each triangle's box, and the box of the centroids (bounds: ordered min x, y, z, then max x, y, z).
__global__ void TriangleBoxes(const float* pos, int n, Float4* triLo, Float4* triHi, uint32_t* bounds) {
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    const float* p = pos + 9 * static_cast<size_t>(t);
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = Fminf(Fminf(p[a], p[3 + a]), p[6 + a]);
      hi[a] = Fmaxf(Fmaxf(p[a], p[3 + a]), p[6 + a]);
      const uint32_t c = OrderedFromFloat(lo[a] * 0.5f + hi[a] * 0.5f);
      cmin[a] = min(cmin[a], c), cmax[a] = max(cmax[a], c);
    }
    triLo[t] = Float4{lo[0], lo[1], lo[2], 0.0f};
    triHi[t] = Float4{hi[0], hi[1], hi[2], 0.0f};
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
  }
}

// 21 bits spread to every third bit of 63.
__device__ uint64_t Spread3(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | x << 32) & 0x001f00000000ffffull;
  x = (x | x << 16) & 0x001f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

// 63-bit Morton codes of the triangles' box centres, 21 bits an axis over the scene's bounds: each axis's extent in
// 2^21 cells (cells stretched to the bounds' shape), or with `cube` (TRACER_MORTON_CUBE, for measuring) the longest
// extent on every axis (cubic cells). Cubic cells on the H100 (H-PLOC, G rays/s, primary / diffuse / ao, per-axis
// -> cubic): sports car 2.79 -> 3.50 / 1.64 -> 1.62 / 2.78 -> 2.84, bunny 2.91 -> 2.62 / 3.47 -> 3.57 / 3.51 -> 3.62,
// conference room 3.85 -> 3.72 / 2.07 -> 2.14 / 5.27 -> 5.41, 10M terrain 2.15 -> 2.21 / 1.05 -> 1.09 / 1.91 -> 1.89;
// builds 2-4% slower (the conference room 1.63 -> 1.66 ms, under 200 M triangles/s). Mixed, so the default stays.
__global__ void MortonCodes(const Float4* triLo, const Float4* triHi, int n, const uint32_t* bounds, uint64_t* keys,
                            int* ids, bool cube) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const float c[3] = {triLo[t].x * 0.5f + triHi[t].x * 0.5f, triLo[t].y * 0.5f + triHi[t].y * 0.5f,
                      triLo[t].z * 0.5f + triHi[t].z * 0.5f};
  float longest = 0.0f;
  if (cube)
    for (int a = 0; a < 3; ++a) longest = Fmaxf(longest, FloatFromOrdered(bounds[3 + a]) - FloatFromOrdered(bounds[a]));
  uint64_t key = 0;
  for (int a = 0; a < 3; ++a) {
    const float lo = FloatFromOrdered(bounds[a]), extent = cube ? longest : FloatFromOrdered(bounds[3 + a]) - lo;
    const float u = extent > 0.0f ? (c[a] - lo) / extent : 0.0f;
    const uint32_t q = static_cast<uint32_t>(Fminf(Fmaxf(u * 2097152.0f, 0.0f), 2097151.0f));
    key |= Spread3(q) << a;
  }
  keys[t] = key;
  ids[t] = t;
}

// Leaf i is the triangle at Morton position i; it starts as cluster i (cLo, cHi: PLOC passes' boxes, or null).
__global__ void InitLeaves(PlocTree t, const int* sortedTri, const Float4* triLo, const Float4* triHi, int* cNode,
                           Float4* cLo, Float4* cHi) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= t.n) return;
  const int tri = sortedTri[i];
  t.lo[i] = triLo[tri];
  t.hi[i] = triHi[tri];
  if (cLo) cLo[i] = triLo[tri], cHi[i] = triHi[tri];
  cNode[i] = i;
}

// The box around two boxes (w unused).
__device__ Float4 BoxMin(Float4 a, Float4 b) { return Float4{Fminf(a.x, b.x), Fminf(a.y, b.y), Fminf(a.z, b.z), 0.0f}; }
__device__ Float4 BoxMax(Float4 a, Float4 b) { return Float4{Fmaxf(a.x, b.x), Fmaxf(a.y, b.y), Fmaxf(a.z, b.z), 0.0f}; }

// Half the area of the box around both, in float; infinite where that overflows (an extent beyond float's range on
// one axis and 0 on another would give inf * 0 = NaN, and NearerPair would then be no order: clusters with no mutual
// nearest neighbour, and H-PLOC's warp would never finish).
__device__ float UnionHalfArea(Float4 alo, Float4 ahi, Float4 blo, Float4 bhi) {
  const Float4 lo = BoxMin(alo, blo), hi = BoxMax(ahi, bhi);
  const float x = hi.x - lo.x, y = hi.y - lo.y, z = hi.z - lo.z;
  const float area = x * y + y * z + z * x;
  return area == area ? area : kInf;
}

// Whether pair (i, j) is nearer than pair (i, k), in a total order of pairs: by the area of the box around both,
// then by how far apart they are in Morton order, then by a hash of their lower position (then that position).
// The order depends on the pair alone, so the nearest-neighbour graph has no cycles longer than two and the nearest
// pair of all is always mutual: every pass merges. The hash settles ties between equal boxes (duplicate triangles)
// without favouring one side: "always the lower neighbour" would make a chain that merges one pair per pass.
__device__ uint32_t PositionHash(uint32_t x) {
  x = (x ^ 61u) ^ (x >> 16);
  x *= 9u;
  x ^= x >> 4;
  x *= 0x27d4eb2du;
  return x ^ (x >> 15);
}
__device__ bool NearerPair(float a, int i, int j, float b, int k) {
  if (a != b) return a < b;
  const int dj = abs(i - j), dk = abs(i - k);
  if (dj != dk) return dj < dk;
  const int mj = min(i, j), mk = min(i, k);
  const uint32_t hj = PositionHash(static_cast<uint32_t>(mj)), hk = PositionHash(static_cast<uint32_t>(mk));
  return hj != hk ? hj < hk : mj < mk;
}

// Each cluster's nearest neighbour (NearerPair) within kRadius positions.
template <int kRadius>
__global__ void PlocNearest(const Float4* cLo, const Float4* cHi, const PassState* state, int stop, int* nn) {
  const int c = state->clusters;
  if (c <= stop || static_cast<int>(blockIdx.x) * kBlock >= c) return;
  __shared__ Float4 sLo[kBlock + 2 * kRadius], sHi[kBlock + 2 * kRadius];
  const int base = static_cast<int>(blockIdx.x) * kBlock - kRadius;
  for (int k = threadIdx.x; k < kBlock + 2 * kRadius; k += kBlock) {
    const int g = base + k;
    if (g >= 0 && g < c) sLo[k] = cLo[g], sHi[k] = cHi[g];
  }
  __syncthreads();
  const int i = static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x);
  if (i >= c) return;
  const int me = static_cast<int>(threadIdx.x) + kRadius;
  const Float4 lo = sLo[me], hi = sHi[me];
  float best = kInf;
  int bestJ = -1;
  for (int d = -kRadius; d <= kRadius; ++d) {
    const int j = i + d;
    if (d == 0 || j < 0 || j >= c) continue;
    const float a = UnionHalfArea(lo, hi, sLo[me + d], sHi[me + d]);
    if (bestJ < 0 || NearerPair(a, i, j, best, bestJ)) best = a, bestJ = j;
  }
  nn[i] = bestJ;
}

// Per cluster: bit 32 when it merges with its mutual nearest neighbour (the lower of the two makes the node), bit 0
// when it survives the pass (all but the higher of a mutual pair). An exclusive sum gives both the new node's
// number and the survivor's new position.
__global__ void PlocFlags(const int* nn, const PassState* state, int stop, int capacity, unsigned long long* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, c = state->clusters;
  if (i >= capacity) return;
  if (i >= c || c <= stop) {  // the scan runs over `capacity`: nothing beyond the clusters counts
    flags[i] = 0;
    return;
  }
  const int j = nn[i];
  const bool mutual = nn[j] == i;
  flags[i] =
      (static_cast<unsigned long long>(mutual && i < j) << 32) | static_cast<unsigned long long>(!(mutual && i > j));
}

// The sweep's blocks: 128 threads, so that a binary and a wide block fit an SM's registers together (163 a thread).
constexpr int kSweepBlock = 128;

// One thread's array in a block's shared memory, element j at j * blockDim.x (so a warp's lanes hit different banks).
// The top-down sweep keeps here its arrays that are indexed by computed values: other warps' acquire fences keep
// emptying the SM's L1 during the sweep, and arrays in local memory then went to L2 on every access (9.9 million
// local sectors from L2 for the conference room's sweep, 60 us a wide node's visit on the H100).
struct LaneArray {
  int* at;
  __device__ int& operator[](int j) const { return at[j * static_cast<int>(blockDim.x)]; }
};

// The slots of node k as a wide node (their subtrees in node[0, m)), in the host collapse's order (its Collect:
// depth first, left first); budget: scratch. Starting from k's two children with the slots each is given, every
// round replaces each entry that splits its slots between its own children by those two, in place, from the back;
// every entry keeps at least one slot, so there are never more than kWideSlots. A round's loads are independent of
// each other (a round costs one trip to L2, not one per entry). Returns m.
__device__ int CollectSlots(const PlocTree& t, int k, const LaneArray& node, const LaneArray& budget) {
  const int2 ab = t.kids[k - t.n];
  const int left = t.choice[k - t.n].nodeSplit;
  node[0] = ab.x, budget[0] = left, node[1] = ab.y, budget[1] = kWideSlots - left;
  int m = 2;
  for (;;) {
    int share[kWideSlots], splits = 0;
    int2 kids[kWideSlots];
    TRACER_UNROLL
    for (int j = 0; j < kWideSlots; ++j) {
      const int q = j < m ? node[j] : 0;
      share[j] = q >= t.n ? t.choice[q - t.n].split[budget[j] - 1] : 0;
      kids[j] = share[j] > 0 ? t.kids[q - t.n] : make_int2(0, 0);
      splits += share[j] > 0;
    }
    if (splits == 0) return m;
    int to = m + splits;
    TRACER_UNROLL
    for (int j = kWideSlots - 1; j >= 0; --j) {
      if (j >= m) continue;
      const int b = budget[j];
      if (share[j] > 0) {
        to -= 2;
        node[to] = kids[j].x, budget[to] = share[j], node[to + 1] = kids[j].y, budget[to + 1] = b - share[j];
      } else {
        --to;
        node[to] = node[j], budget[to] = b;
      }
    }
    m += splits;
  }
}

// Node k's slots as a wide node (CollectSlots): their subtrees, boxes, kinds (inner: a wide node of its own) and
// triangle counts. Every array here is indexed by an unrolled loop's counter, and all slots' loads go out together.
__device__ int WideSlots(const PlocTree& t, int k, const LaneArray& node, const LaneArray& budget, int* q, Vec3* lo,
                         Vec3* hi, bool* inner, int* tris) {
  const int m = CollectSlots(t, k, node, budget);
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    q[j] = j < m ? node[j] : k;
    lo[j] = t.Lo(q[j]), hi[j] = t.Hi(q[j]), tris[j] = t.Count(q[j]);
    inner[j] = j < m && q[j] >= t.n && !t.choice[q[j] - t.n].leaf1;
  }
  return m;
}

// Node k over nodes a and b (box lo, hi): its children, its count, and both layouts' bottom-up choices, the binary
// BVH's SAH leaf-or-split and the wide BVH's dynamic programming, from the children's.
__device__ void MakeNode(const PlocTree& t, int k, int a, int b, Float4 lo, Float4 hi, int maxLeaf, double ci,
                         double ct, bool wide) {
  const int x = k - t.n;
  t.lo[k] = lo, t.hi[k] = hi;
  t.kids[x] = make_int2(a, b);
  const int count = t.Count(a) + t.Count(b);
  t.count[x] = count;
  const double area = BoxHalfArea(t.Lo(k), t.Hi(k));
  auto costOf = [&](int q) { return q < t.n ? ci * BoxHalfArea(t.Lo(q), t.Hi(q)) : t.binCost[q - t.n]; };
  const double split = ct * area + costOf(a) + costOf(b);
  const double leaf = count <= maxLeaf ? ci * count * area : kWideInfCost;
  const bool isLeaf = leaf <= split;
  t.binLeaf[x] = isLeaf;
  t.binCost[x] = isLeaf ? leaf : split;
  t.binNodes[x] = isLeaf ? 0 : 1 + t.BinNodes(a) + t.BinNodes(b);
  double costs[2][kWideSlots];
  const int ab[2] = {a, b};
  for (int h = 0; h < 2; ++h) {
    const int q = ab[h];
    if (q < t.n) {
      WideLeafCosts(1, BoxHalfArea(t.Lo(q), t.Hi(q)), costs[h]);
    } else {
      for (int sl = 0; sl < kWideSlots; ++sl) costs[h][sl] = t.choice[q - t.n].cost[sl];
    }
  }
  WideChoice ch;
  SolveWideChoice(costs[0], costs[1], count, area, ch);
  t.choice[x] = ch;
  if (!wide) return;
  // The wide nodes below: given s slots, the node splits them between its children (split), or takes one as a leaf
  // (none) or as a wide node of its own (wideNodes: itself and, below, its children sharing its kWideSlots). The
  // children's entries are read where needed, not kept in an array indexed by the choices: that array was in local
  // memory, which other warps' acquire fences keep evicting from L1 (9.9 million local sectors from L2 for the
  // conference room's clustering, before).
  auto below = [&](int h, int slots) {
    return ab[h] < t.n ? 0 : t.wideBelow[static_cast<size_t>(ab[h] - t.n) * kWideSlots + slots - 1];
  };
  const int own = 1 + below(0, ch.nodeSplit) + below(1, kWideSlots - ch.nodeSplit);
  t.wideNodes[x] = own;
  TRACER_UNROLL
  for (int sl = 1; sl <= kWideSlots; ++sl) {
    const int share = ch.split[sl - 1];
    t.wideBelow[static_cast<size_t>(x) * kWideSlots + sl - 1] =
        share > 0 ? below(0, share) + below(1, sl - share) : (ch.leaf1 ? 0 : own);
  }
}

// Merges mutual pairs into new nodes (with both layouts' bottom-up choices), and compacts the survivors into copy
// `outAt`. Clustering stops at `stop` clusters or fewer.
__global__ void PlocMerge(PlocTree t, const PassState* state, PassState* next, int stop, int outAt, int* passes,
                          const int* nn, const unsigned long long* flags, const unsigned long long* scanned,
                          const int* cNode, const Float4* cLo, const Float4* cHi, int* outNode, Float4* outLo,
                          Float4* outHi, int maxLeaf, double ci, double ct, bool wide) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, c = state->clusters, nodeBase = state->nodeBase;
  if (c <= stop) {  // done: a queued pass only carries the state over
    if (i == 0) *next = *state;
    return;
  }
  if (i >= c) return;
  const unsigned long long f = flags[i], s = scanned[i];
  if (i == c - 1) {
    const int survivors = static_cast<int>((s + f) & 0xffffffffu), merged = c - survivors;
    *next = PassState{survivors, nodeBase + merged, outAt};
    ++*passes;
  }
  if (!(f & 1u)) return;
  const int pos = static_cast<int>(s & 0xffffffffu);
  if (!(f >> 32)) {
    outNode[pos] = cNode[i], outLo[pos] = cLo[i], outHi[pos] = cHi[i];
    return;
  }
  const int j = nn[i], k = nodeBase + static_cast<int>(s >> 32);
  const Float4 lo = BoxMin(cLo[i], cLo[j]), hi = BoxMax(cHi[i], cHi[j]);
  MakeNode(t, k, cNode[i], cNode[j], lo, hi, maxLeaf, ci, ct, wide);
  outLo[pos] = lo, outHi[pos] = hi, outNode[pos] = k;
}

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
constexpr unsigned kFullMask = 0xffffffffu;

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

// bound: n - 1 ints, -1 (where two subtrees meet, the first to arrive leaves its far end); counter: nodes made.
// stopRange > 0: subtrees of more leaves are left to the SAH top, which gets their children's clusters (HandOver).
template <int kRadius>
__global__ void __launch_bounds__(kHplocBlock)
    Hploc(PlocTree t, const uint64_t* keys, int* cNode, int* bound, int* counter, int maxLeaf, double ci, double ct,
          bool wide, int stopRange, int* handed) {
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
    uint32_t todo = __ballot_sync(kFullMask, active && (hi - lo + 1 > kHplocKeep || root));
    while (todo) {
      const int src = __ffs(todo) - 1;
      todo &= todo - 1;
      const int l = __shfl_sync(kFullMask, lo, src), r = __shfl_sync(kFullMask, hi, src),
                s = __shfl_sync(kFullMask, split, src);
      if (stopRange > 0 && r - l + 1 > stopRange)
        HandOver(cNode, l, s, r, stopRange, handed);
      else
        WarpCluster<kRadius>(t, cNode, counter, l, s, r, r - l + 1 == t.n ? 1 : kHplocKeep, maxLeaf, ci, ct, wide);
    }
    if (root) active = false;
  }
}

// The SAH top. Above Morton ranges of kSahTopRange leaves the clustering stops and hands over the clusters it has
// (each range's at most kHplocKeep; PLOC's passes: the clusters left at a quarter of the triangles), and the tree above
// them is built top down by the surface area heuristic, binned over kTopBins centroid bins on each axis: groups of
// more than kTopWide clusters by the whole grid a level at a time (TopWide*), then a block a group (TopBig), then a
// warp a group of at most kTopSmall, exactly (every centroid order) for at most kTopExact (TopSmall). The clustering
// makes good small subtrees but, greedy and confined to the Morton order, poorer big ones: on a heightfield its boxes
// overlap where SAH's planes tile (the 1M-triangle terrain's diffuse rays visit 16.9 wide nodes per ray on the
// clustered tree, 15.1 on the host's binned SAH tree and 15.4 with this top; the sports car's primary rays 18.1, 16.2
// and 12.8). Its nodes then take their bottom-up choices (MakeNode) in one climb (TopClimb).
//
// On the H100 (2026-11-26, G rays/s, --trace-rays, top / clustering alone / host binned SAH with splits) it closes the
// 10M terrain's gap (diffuse 1.18 / 1.04 / 1.27, primary 2.25 / 2.17 / 2.35) and helps the sports car (primary 3.27 /
// 2.81 / 4.01) and the bunny (diffuse 3.76 / 3.50 / 3.84), but costs the conference room 9-15% (primary 3.28 / 3.85 /
// 3.46, diffuse 1.90 / 2.08 / 2.15): there the clustered tree is better than either SAH tree, and the SAH cost says so
// (9.52 against 10.11). It costs build time: the 10M terrain 19.2 -> 40.9 ms (245 M triangles/s), the conference room
// 1.6 -> 3.4 ms (99 M/s, against the 200 M/s asked for). So it runs by default from kSahTopAuto triangles, where the
// build keeps over 200 M triangles/s; TRACER_SAH_TOP=1 or 0 (a measuring knob) turns it on or off at any size. Choosing
// by SAH cost between it and the clustered tree would be better, but needs both and a top several times faster.
constexpr int kSahTopRange = 64;
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
__device__ int ChildParity(int p) { return p == 1 ? 0 : 1; }

// kTopBins bins on each axis: triangles, and the box of their clusters (floats as OrderedFromFloat).
struct TopBins {
  int count[3][kTopBins];
  uint32_t lo[3][3][kTopBins], hi[3][3][kTopBins];  // [axis][coordinate][bin]
};

__device__ void ClearBins(TopBins& b, int i, int stride) {
  for (; i < 3 * kTopBins; i += stride) {
    const int a = i / kTopBins, k = i % kTopBins;
    b.count[a][k] = 0;
    for (int c = 0; c < 3; ++c) b.lo[a][c][k] = 0xffffffffu, b.hi[a][c][k] = 0u;
  }
}

__device__ Vec3 Centroid(Float4 lo, Float4 hi) {
  return Vec3(lo.x * 0.5f + hi.x * 0.5f, lo.y * 0.5f + hi.y * 0.5f, lo.z * 0.5f + hi.z * 0.5f);
}

// The bin of centroid coordinate c over bounds starting at `origin`, scale = kTopBins / extent (0: one bin).
__device__ int TopBin(float c, float origin, float scale) {
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

// Adds a cluster to the bins, an atomic a value. (Combining a warp's values for one bin first, by __match_any_sync and
// warp reductions, took the conference room's top from 6.8 to 6.0 ms but the bunny's from 1.6 to 4.6 on the H100.)
__device__ void AddToBins(TopBins& b, const TopGrid& g, Float4 lo, Float4 hi, int count) {
  const Vec3 c = Centroid(lo, hi);
  const uint32_t l[3] = {OrderedFromFloat(lo.x), OrderedFromFloat(lo.y), OrderedFromFloat(lo.z)};
  const uint32_t h[3] = {OrderedFromFloat(hi.x), OrderedFromFloat(hi.y), OrderedFromFloat(hi.z)};
  for (int a = 0; a < 3; ++a) {
    const int k = g.Bin(c, a);
    atomicAdd(&b.count[a][k], count);
    for (int e = 0; e < 3; ++e) atomicMin(&b.lo[a][e][k], l[e]), atomicMax(&b.hi[a][e][k], h[e]);
  }
}

// Grows bounds (6 ordered floats: min x, y, z, max x, y, z; shared or global memory) by box [lo, hi], if not empty.
__device__ void GrowOrderedBounds(uint32_t* bounds, Vec3 lo, Vec3 hi) {
  if (!(lo.x <= hi.x)) return;
  const float l3[3] = {lo.x, lo.y, lo.z}, h3[3] = {hi.x, hi.y, hi.z};
  for (int e = 0; e < 3; ++e)
    atomicMin(&bounds[e], OrderedFromFloat(l3[e])), atomicMax(&bounds[3 + e], OrderedFromFloat(h3[e]));
}

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

__device__ TopBox BinBox(const TopBins& b, int a, int k) {
  TopBox r = TopBox::Empty();
  r.n = b.count[a][k];
  if (r.n > 0)
    for (int e = 0; e < 3; ++e) r.lo[e] = FloatFromOrdered(b.lo[a][e][k]), r.hi[e] = FloatFromOrdered(b.hi[a][e][k]);
  return r;
}

// v from the lane d below this one (up) or d above it (down), as __shfl_up_sync and __shfl_down_sync.
__device__ TopBox ShflTopBox(const TopBox& v, int d, bool up) {
  auto from = [d, up](auto x) { return up ? __shfl_up_sync(kFullMask, x, d) : __shfl_down_sync(kFullMask, x, d); };
  TopBox r;
  for (int e = 0; e < 3; ++e) r.lo[e] = from(v.lo[e]), r.hi[e] = from(v.hi[e]);
  r.n = from(v.n);
  return r;
}

// The cheaper of (cost, split) pairs over the warp, the lower split on ties; every lane gets it.
__device__ void WarpArgMin(float& cost, int& split) {
  for (int o = 16; o > 0; o /= 2) {
    const float c = __shfl_xor_sync(kFullMask, cost, o);
    const int s = __shfl_xor_sync(kFullMask, split, o);
    if (s >= 0 && (split < 0 || c < cost || (c == cost && s < split))) cost = c, split = s;
  }
}

// The binned SAH's cheapest split (one warp, every lane gets it): axis * kTopBins + the last bin on the left, or -1
// when every axis has all clusters in one bin. Lane l holds bins 2l and 2l + 1; prefix and suffix boxes by shuffles.
__device__ int BestBinnedSplit(const TopBins& b) {
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
__device__ void LinkTopNode(const PlocTree& t, int* parent, int node, int kid0, int kid1) {
  t.kids[node - t.n] = make_int2(kid0, kid1);
  parent[kid0] = node, parent[kid1] = node;
}

// A round of a block's stable partition (all threads call it): this thread's cluster, if valid, goes left or right;
// returns its rank among the round's clusters on its side (those of lower threads), and the round's totals. counts:
// 2 * kTopBlock / 32 ints of shared memory.
struct RoundRank {
  int rank, left, right;
};
__device__ RoundRank RankInRound(bool valid, bool left, int* counts) {
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
__device__ void PushTopTask(TopState* s, const TopQueues& q, const TopTask& c, int level) {
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
    for (int i = begin + tid; i < end; i += kTopBlock) {
      const int k = __ldcg(in + i);
      AddToBins(bins, grid, t.lo[k], t.hi[k], t.Count(k));
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
        for (int i = b + lane; i < e; i += 32) {
          const int q = w.perm[i];
          AddToBins(w.bins, grid, Float4{w.lo[0][q], w.lo[1][q], w.lo[2][q], 0.0f},
                    Float4{w.hi[0][q], w.hi[1][q], w.hi[2][q], 0.0f}, w.count[q]);
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

// The grid-wide levels: every group of more than kTopWide clusters is split by the whole grid, in chunks of
// kTopChunk clusters, a block each. (With a block a group, TopBig alone, the conference room's top took 6.8 ms and the
// 10M terrain's 149: binned SAH splits are uneven, so the groups along the tree's heaviest path add up to 3.6 times the
// clusters, and one block managed about one cluster in 33 cycles; with these levels 2.4 and 26 ms.) A level:
// TopWideChunks (the level's chunks; bins cleared), TopWideBin (each chunk's bins in shared memory, then added to its
// group's), TopWideSplit (a warp a group), TopWideCount (each chunk's clusters on the left; both children's centroid
// bounds), TopWideScatter (each chunk's clusters to the other buffer, in order: its lefts after those of the group's
// chunks before it, its rights after all the group's lefts and the rights before it, so that the places do not depend
// on timing), TopWideNext (the children, to the next level, TopBig or TopSmall). A level's groups are read from
// TopQueues::wide[level], the next level's written to wide[1 - level].
struct TopWide {
  TopBins* bins;        // per group of the level
  int* split;           // per group: BestBinnedSplit's answer
  uint32_t* kidBounds;  // per group: 12, both children's centroid bounds (ordered min x, y, z, max x, y, z)
  int* chunk0;          // per group: its first chunk
  int2* chunkOf;        // per chunk: (group, first position)
  int* chunkLeft;       // per chunk: its clusters on the left
};

__device__ int Chunks(const TopTask& g) { return (g.end - g.begin + kTopChunk - 1) / kTopChunk; }

__global__ void __launch_bounds__(1024) TopWideChunks(TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int warpSum[32], carry;
  const int count = s->wideCount[level], lane = static_cast<int>(threadIdx.x & 31),
            warp = static_cast<int>(threadIdx.x >> 5);
  if (threadIdx.x == 0) carry = 0, s->wideCount[1 - level] = 0;
  __syncthreads();
  for (int base = 0; base < count; base += static_cast<int>(blockDim.x)) {
    const int g = base + static_cast<int>(threadIdx.x);
    const int n = g < count ? Chunks(q.Wide(level)[g]) : 0;
    int incl = n;  // inclusive sum over the block
    for (int o = 1; o < 32; o *= 2) {
      const int v = __shfl_up_sync(kFullMask, incl, o);
      if (lane >= o) incl += v;
    }
    if (lane == 31) warpSum[warp] = incl;
    __syncthreads();
    for (int v = 0; v < warp; ++v) incl += warpSum[v];
    const int first = carry + incl - n;
    if (g < count) {
      const TopTask task = q.Wide(level)[g];
      w.chunk0[g] = first;
      for (int j = 0; j < n; ++j) w.chunkOf[first + j] = make_int2(g, task.begin + j * kTopChunk);
      ClearBins(w.bins[g], 0, 1);
      for (int e = 0; e < 12; ++e) w.kidBounds[12 * g + e] = e % 6 < 3 ? 0xffffffffu : 0u;
    }
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1) carry = first + n;
    __syncthreads();
  }
  if (threadIdx.x == 0) s->chunks = carry;
}

// A chunk's group and clusters.
struct TopChunk {
  int group, begin, end;
  TopTask task;
  __device__ TopChunk(const TopQueues& q, const TopWide& w, int level, int c) {
    const int2 co = w.chunkOf[c];
    group = co.x, task = q.Wide(level)[co.x], begin = co.y, end = min(co.y + kTopChunk, task.end);
  }
};

__global__ void __launch_bounds__(256)
    TopWideBin(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ TopBins bins;
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    ClearBins(bins, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
    __syncthreads();
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int* in = buf.Buffer(ch.task.parity);
    for (int i = ch.begin + static_cast<int>(threadIdx.x); i < ch.end; i += static_cast<int>(blockDim.x)) {
      const int k = in[i];
      AddToBins(bins, grid, t.lo[k], t.hi[k], t.Count(k));
    }
    __syncthreads();
    TopBins& g = w.bins[ch.group];
    for (int i = static_cast<int>(threadIdx.x); i < 3 * kTopBins; i += static_cast<int>(blockDim.x)) {
      const int a = i / kTopBins, k = i % kTopBins, n = bins.count[a][k];
      if (n == 0) continue;
      atomicAdd(&g.count[a][k], n);
      for (int e = 0; e < 3; ++e)
        atomicMin(&g.lo[a][e][k], bins.lo[a][e][k]), atomicMax(&g.hi[a][e][k], bins.hi[a][e][k]);
    }
    __syncthreads();
  }
}

// One warp a block.
__global__ void __launch_bounds__(32) TopWideSplit(TopState* s, TopWide w, int level) {
  __shared__ TopBins bins;
  constexpr int kWords = static_cast<int>(sizeof(TopBins) / sizeof(uint32_t));
  for (int g = static_cast<int>(blockIdx.x); g < s->wideCount[level]; g += static_cast<int>(gridDim.x)) {
    const uint32_t* from = reinterpret_cast<const uint32_t*>(&w.bins[g]);
    uint32_t* to = reinterpret_cast<uint32_t*>(&bins);
    for (int i = static_cast<int>(threadIdx.x); i < kWords; i += 32) to[i] = from[i];
    __syncwarp();
    const int sp = BestBinnedSplit(bins);
    if (threadIdx.x == 0) w.split[g] = sp;
    __syncwarp();
  }
}

// Whether cluster k at position i of group `task` goes left by split sp (BestBinnedSplit's answer; -1: the first
// half of the positions).
__device__ bool GoesLeft(const PlocTree& t, const TopTask& task, const TopGrid& grid, int sp, int k, int i, Vec3& c) {
  c = Centroid(t.lo[k], t.hi[k]);
  return sp >= 0 ? grid.Bin(c, sp / kTopBins) <= sp % kTopBins : i < task.begin + (task.end - task.begin) / 2;
}

__global__ void __launch_bounds__(256)
    TopWideCount(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int left;
  __shared__ uint32_t bounds[12];
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    if (threadIdx.x == 0) left = 0;
    if (threadIdx.x < 12) bounds[threadIdx.x] = threadIdx.x % 6 < 3 ? 0xffffffffu : 0u;
    __syncthreads();
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int sp = w.split[ch.group];
    const int* in = buf.Buffer(ch.task.parity);
    int mine = 0;
    Vec3 lo[2] = {Vec3(kInf), Vec3(kInf)}, hi[2] = {Vec3(-kInf), Vec3(-kInf)};
    for (int i = ch.begin + static_cast<int>(threadIdx.x); i < ch.end; i += static_cast<int>(blockDim.x)) {
      Vec3 cen;
      const bool l = GoesLeft(t, ch.task, grid, sp, in[i], i, cen);
      mine += l;
      if (l)
        lo[0] = Min(lo[0], cen), hi[0] = Max(hi[0], cen);
      else
        lo[1] = Min(lo[1], cen), hi[1] = Max(hi[1], cen);
    }
    atomicAdd(&left, mine);
    GrowOrderedBounds(bounds, lo[0], hi[0]);
    GrowOrderedBounds(bounds + 6, lo[1], hi[1]);
    __syncthreads();
    if (threadIdx.x == 0) w.chunkLeft[c] = left;
    if (threadIdx.x < 12) {
      uint32_t* g = &w.kidBounds[12 * ch.group + threadIdx.x];
      if (threadIdx.x % 6 < 3)
        atomicMin(g, bounds[threadIdx.x]);
      else
        atomicMax(g, bounds[threadIdx.x]);
    }
    __syncthreads();
  }
}

// The lefts of group g's chunks before chunk c, and of all its chunks (every thread of the block gets both).
__device__ int2 LeftsBefore(const TopWide& w, const TopTask& task, int g, int c, int* sums) {
  if (threadIdx.x == 0) sums[0] = sums[1] = 0;
  __syncthreads();
  const int c0 = w.chunk0[g], n = Chunks(task);
  int before = 0, all = 0;
  for (int j = static_cast<int>(threadIdx.x); j < n; j += static_cast<int>(blockDim.x)) {
    const int v = w.chunkLeft[c0 + j];
    all += v;
    if (c0 + j < c) before += v;
  }
  atomicAdd(&sums[0], before), atomicAdd(&sums[1], all);
  __syncthreads();
  const int2 r = make_int2(sums[0], sums[1]);
  __syncthreads();
  return r;
}

__global__ void __launch_bounds__(kTopBlock)
    TopWideScatter(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int sums[2], counts[2 * kTopBlock / 32];
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    const int2 lefts = LeftsBefore(w, ch.task, ch.group, c, sums);
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int sp = w.split[ch.group];
    const int* in = buf.Buffer(ch.task.parity);
    int* out = buf.Buffer(ChildParity(ch.task.parity));
    const int leftBase = ch.task.begin + lefts.x;
    const int rightBase = ch.task.begin + lefts.y + (ch.begin - ch.task.begin - lefts.x);
    int leftDone = 0, rightDone = 0;
    for (int base = ch.begin; base < ch.end; base += kTopBlock) {
      const int i = base + static_cast<int>(threadIdx.x);
      const bool valid = i < ch.end;
      int k = 0;
      bool left = false;
      if (valid) {
        k = in[i];
        Vec3 cen;
        left = GoesLeft(t, ch.task, grid, sp, k, i, cen);
      }
      const RoundRank r = RankInRound(valid, left, counts);
      if (valid) out[left ? leftBase + leftDone + r.rank : rightBase + rightDone + r.rank] = k;
      leftDone += r.left, rightDone += r.right;
    }
  }
}

// A thread a group: its children (one cluster: that cluster; more: a new node, to the next level or on).
__global__ void TopWideNext(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level, int* parent) {
  const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (g >= s->wideCount[level]) return;
  const TopTask task = q.Wide(level)[g];
  int nl = 0;
  for (int j = 0, c0 = w.chunk0[g], n = Chunks(task); j < n; ++j) nl += w.chunkLeft[c0 + j];
  const int* out = buf.Buffer(ChildParity(task.parity));
  int kid[2];
  for (int h = 0; h < 2; ++h) {
    const int first = h ? task.begin + nl : task.begin, last = h ? task.end : task.begin + nl;
    if (last - first == 1) {
      kid[h] = out[first];
      continue;
    }
    kid[h] = atomicAdd(&s->nextNode, 1);
    TopTask c{first, last, kid[h], ChildParity(task.parity), {}, {}};
    for (int e = 0; e < 3; ++e)
      c.clo[e] = FloatFromOrdered(w.kidBounds[12 * g + 6 * h + e]),
      c.chi[e] = FloatFromOrdered(w.kidBounds[12 * g + 6 * h + 3 + e]);
    PushTopTask(s, q, c, level);
  }
  LinkTopNode(t, parent, task.node, kid[0], kid[1]);
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

// PLOC's passes: the clusters left (state->at holds them) to the top's list.
__global__ void TopGather(const PassState* state, const int* cNode0, const int* cNode1, TopState* s, int* list) {
  const int m = state->clusters, i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i == 0) s->items = m;
  if (i < m) list[i] = (state->at ? cNode1 : cNode0)[i];
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

// The root's place in both layouts, the node counts (totals[0] binary, totals[1] wide), and both sweeps' queues (each
// already -1): the root first, head 0, tail 1.
__global__ void InitRoot(PlocTree t, int* totals, int* binQueue, int* wideQueue, int* counters) {
  const int root = 2 * t.n - 2, x = root - t.n;
  const int2 ab = t.kids[x];
  t.triFirst[root] = 0;
  t.binAt[x] = 0;
  t.binDepth[x] = 0;
  t.wideAt[x] = make_int4(0, 1, 0, 1);
  if (t.wideFirst) t.wideFirst[x] = 0;
  totals[0] = 1 + t.BinNodes(ab.x) + t.BinNodes(ab.y);  // the root is a node even where one leaf would be cheaper
  totals[1] = t.wideNodes[x];
  binQueue[0] = wideQueue[0] = root;
  counters[0] = 0, counters[1] = 1, counters[2] = 0, counters[3] = 1;
}

// The top-down sweeps write both layouts, each in one launch. Inner node k, binary: the depth-first triangle positions
// of its children, and its binary node where the binary BVH has one (its children's places in it). Returns the inner
// children, which come next. status: binary depth, wide depth, a quantisation failure.
__device__ int VisitBinary(const PlocTree& t, int k, BvhNode* binNodes, int* status, const LaneArray& next) {
  const int x = k - t.n;
  const int2 ab = t.kids[x];
  const int first = t.triFirst[k];
  t.triFirst[ab.x] = first;
  t.triFirst[ab.y] = first + t.Count(ab.x);
  const int at = t.binAt[x];
  if (at >= 0) {
    const int depth = t.binDepth[x];
    int place = at + 1, ref[2], cnt[2];
    const int kid[2] = {ab.x, ab.y};
    for (int h = 0; h < 2; ++h) {
      const int q = kid[h];
      if (t.BinaryLeaf(q)) {
        ref[h] = t.triFirst[q], cnt[h] = t.Count(q);
        atomicMax(&status[0], depth + 1);
      } else {
        ref[h] = place, cnt[h] = 0;
        t.binAt[q - t.n] = place;
        t.binDepth[q - t.n] = depth + 1;
        place += t.binNodes[q - t.n];
      }
    }
    const Float4 l0 = t.lo[ab.x], l1 = t.hi[ab.x], r0 = t.lo[ab.y], r1 = t.hi[ab.y];
    BvhNode node;
    node.lxy = Float4{l0.x, l1.x, l0.y, l1.y};
    node.rxy = Float4{r0.x, r1.x, r0.y, r1.y};
    node.lrz = Float4{l0.z, l1.z, r0.z, r1.z};
    node.kids = Int4{ref[0], ref[1], cnt[0], cnt[1]};
    binNodes[at] = node;
  }
  int m = 0;
  if (ab.x >= t.n) next[m++] = ab.x;
  if (ab.y >= t.n) next[m++] = ab.y;
  return m;
}

// A wide node (its wideAt set): places its inner children (their wideAt) and its leaves' triangles (wideTriSrc: their
// binary positions) in the order of its slots; returns the inner children. The node itself is encoded afterwards,
// all wide nodes at once (EncodeWideNodes): only the slots' order is needed here, and the quantisation would add its
// latency to every level of the sweep.
__device__ int VisitWide(const PlocTree& t, int k, int* wideTriSrc, int* status, const LaneArray& node,
                         const LaneArray& budget, const LaneArray& next) {
  const int x = k - t.n, first = t.wideFirst[x];
  const int4 w = t.wideAt[x];
  int q[kWideSlots], tris[kWideSlots], below[kWideSlots];
  Vec3 lo[kWideSlots], hi[kWideSlots];
  bool inner[kWideSlots];
  const int m = WideSlots(t, k, node, budget, q, lo, hi, inner, tris);
  Vec3 blo = lo[0], bhi = hi[0];
  int innerSlots = 0, innerTris = 0;
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    below[j] = inner[j] ? t.wideNodes[q[j] - t.n] - 1 : 0;  // the wide nodes under an inner child
    if (j >= m) continue;
    blo = Min(blo, lo[j]), bhi = Max(bhi, hi[j]);
    if (inner[j]) ++innerSlots, innerTris += tris[j];
  }
  const uint32_t slotChild = AssignWideSlotsPacked(lo, hi, m, blo, bhi);  // as EncodeWideNode does
  uint32_t slotOf = 0;                                                    // 4 bits a child: its slot
  TRACER_UNROLL
  for (int s = 0; s < kWideSlots; ++s) {
    const uint32_t c = (slotChild >> (4 * s)) & 15u;
    if (c) slotOf |= static_cast<uint32_t>(s) << (4 * (c - 1));
  }
  atomicMax(&status[1], w.w);
  // Inner children in slot order from w.y, then their subtrees' nodes in slot order; triangles: this node's leaves in
  // slot order, then the inner children's subtrees' in slot order (as the host collapse emits them). Each child's
  // places from the children before it in slot order.
  const int childBase = w.y + innerSlots, triBase = w.z + (t.Count(k) - innerTris);
  int dfs = 0;  // the child's first triangle, depth first
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    if (j >= m) break;
    const uint32_t sj = (slotOf >> (4 * j)) & 15u;
    int rank = 0, nodesBefore = 0, innerBefore = 0, leafBefore = 0;
    TRACER_UNROLL
    for (int i = 0; i < kWideSlots; ++i) {
      if (i >= m || ((slotOf >> (4 * i)) & 15u) >= sj) continue;
      if (inner[i])
        ++rank, nodesBefore += below[i], innerBefore += tris[i];
      else
        leafBefore += tris[i];
    }
    if (inner[j]) {
      t.wideAt[q[j] - t.n] = make_int4(w.y + rank, childBase + nodesBefore, triBase + innerBefore, w.w + 1);
      t.wideFirst[q[j] - t.n] = first + dfs;
      next[rank] = q[j];
    } else {
      for (int p = 0; p < tris[j]; ++p) wideTriSrc[w.z + leafBefore + p] = first + dfs + p;
    }
    dfs += tris[j];
  }
  return innerSlots;
}

// Every wide node (queue[0, totals[1]): the wide sweep's, each with its place), encoded: slots, grid, imask, meta.
// status[2]: a node's boxes do not quantise.
__global__ void __launch_bounds__(kBlock)
    EncodeWideNodes(PlocTree t, const int* queue, const int* totals, WideNode* wideNodes, int* status) {
  __shared__ int scratch[2 * kWideSlots * kBlock];
  const LaneArray slotNode{scratch + threadIdx.x}, slotBudget{scratch + kWideSlots * kBlock + threadIdx.x};
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < totals[1];
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const int k = queue[i];
    const int4 w = t.wideAt[k - t.n];
    Vec3 lo[kWideSlots], hi[kWideSlots];
    bool inner[kWideSlots];
    int q[kWideSlots], tris[kWideSlots], childOfSlot[kWideSlots];
    const int m = WideSlots(t, k, slotNode, slotBudget, q, lo, hi, inner, tris);
    WideNode node;
    if (EncodeWideNode(lo, hi, inner, tris, m, static_cast<uint32_t>(w.y), static_cast<uint32_t>(w.z), node,
                       childOfSlot))
      wideNodes[w.x] = node;
    else
      atomicExch(&status[2], 1);
  }
}

// A top-down sweep: a queue of the tree's nodes, each put there by its parent's visit. Each warp takes the next 32
// places and visits each node once its parent has put it there; a node's place always comes after its parent's, so
// the earliest waiting node's parent has been visited and nothing waits forever. The children of a round's visits get
// their places with one atomic per warp. total: the nodes to visit (all inner nodes, or the wide nodes). counters:
// head (places taken), tail (places filled).
template <bool kWide>
__device__ void SweepQueue(const PlocTree& t, int* queue, int* counters, int total, BvhNode* binNodes, int* wideTriSrc,
                           int* status, const LaneArray& node, const LaneArray& budget, const LaneArray& next) {
  using Ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (;;) {
    int base = 0;
    if (lane == 0) base = atomicAdd(&counters[0], 32);
    base = __shfl_sync(kFullMask, base, 0);
    if (base >= total) return;
    const int place = base + lane;
    bool done = place >= total;
    while (!__all_sync(kFullMask, done)) {
      int m = 0;
      bool ready = false;
      if (!done) {
        const int k = Ref(queue[place]).load(cuda::std::memory_order_relaxed);
        if (k >= 0) {
          cuda::atomic_thread_fence(cuda::std::memory_order_acquire,
                                    cuda::thread_scope_device);  // what the parent wrote
          ready = true;
          m = kWide ? VisitWide(t, k, wideTriSrc, status, node, budget, next)
                    : VisitBinary(t, k, binNodes, status, next);
        }
      }
      int end = m;  // inclusive sum over the warp
      for (int o = 1; o < 32; o *= 2) {
        const int v = __shfl_up_sync(kFullMask, end, o);
        if (lane >= o) end += v;
      }
      const int sum = __shfl_sync(kFullMask, end, 31);
      int at = 0;
      if (lane == 31 && sum > 0) at = atomicAdd(&counters[1], sum);
      at = __shfl_sync(kFullMask, at, 31);
      if (m > 0) {
        cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);  // before the places
        for (int c = 0; c < m; ++c) Ref(queue[at + end - m + c]).store(next[c], cuda::std::memory_order_relaxed);
      }
      if (ready)
        done = true;
      else if (!done)
        __nanosleep(64);
    }
  }
}

// Both top-down sweeps at once, in one launch (the wide one keeps its own triangle positions, wideFirst): blocks
// [0, binaryBlocks) sweep the binary layout, the rest the wide one.
__global__ void __launch_bounds__(kSweepBlock)
    SweepTopDown(PlocTree t, int* binQueue, int* wideQueue, int* counters, const int* totals, int binaryBlocks,
                 BvhNode* binNodes, int* wideTriSrc, int* status) {
  __shared__ int scratch[3 * kWideSlots * kSweepBlock];  // each thread's slots, their budgets, the children to queue
  const int me = static_cast<int>(threadIdx.x);
  const LaneArray node{scratch + me}, budget{scratch + kWideSlots * kSweepBlock + me},
      next{scratch + 2 * kWideSlots * kSweepBlock + me};
  if (static_cast<int>(blockIdx.x) < binaryBlocks)
    SweepQueue<false>(t, binQueue, counters, t.n - 1, binNodes, wideTriSrc, status, node, budget, next);
  else
    SweepQueue<true>(t, wideQueue, counters + 2, totals[1], binNodes, wideTriSrc, status, node, budget, next);
}

// The binary BVH's order: the triangle at each of its positions. Its triangles (48 bytes each) are gathered on the host
// from the positions (GatherBvhTriangles), which is faster than reading them back.
__global__ void WriteOrder(PlocTree t, const int* sortedTri, int32_t* order) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= t.n) return;
  order[t.triFirst[i]] = sortedTri[i];
}

// Calls launch(std::integral_constant<int, R>{}) with R = kPlocRadius, or TRACER_PLOC_RADIUS (8 or 32) when set: for
// measuring the radius's effect on quality and speed.
template <typename Launch>
void WithPlocRadius(Launch launch) {
  const int r = knobs::PlocRadius(kPlocRadius);
  if (r == 8)
    launch(std::integral_constant<int, 8>{});
  else if (r == 32)
    launch(std::integral_constant<int, 32>{});
  else
    launch(std::integral_constant<int, kPlocRadius>{});
}

// Multiprocessors of the current device.
int Multiprocessors() {
  int device = 0, sms = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(sms, 1);
}

// Blocks for each top-down sweep: a warp for every 32 nodes, at most two blocks of kSweepBlock per SM (or
// TRACER_SWEEP_BLOCKS, for measuring). More warps only wait longer for their nodes. On the H100 (132 SMs), with
// 256-thread blocks and the visits' arrays still in local memory, the conference room's sweeps took 1.55-1.63 ms
// uncapped, 1.58-1.80 with 264 blocks, 1.29 with 132 and 1.28-1.35 with 66; the 10M terrain's 6.68-6.95, 6.39-6.60,
// 6.16 and 6.77 (11.2 with 33). With 128-thread blocks and no local memory: the conference room 0.50, 0.50, 0.51 and
// 0.69 ms with 66, 132, 264 and 396 blocks; the 10M terrain 7.07, 5.86 and 5.89 ms with 132, 264 and 396.
int SweepBlocks(size_t nodes) {
  const int cap = knobs::SweepBlocks(2 * Multiprocessors());
  return std::min(static_cast<int>(GridFor(nodes, kSweepBlock)), cap);
}

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

// The build's arrays besides the tree's (see Build). Those of the other clustering are empty.
struct BuildArrays {
  float* pos;
  Float4 *triLo, *triHi;
  uint32_t* bounds;
  uint64_t *keys, *sortedKeys;
  int *ids, *sortedTri;
  unsigned char* temp;
  int* cNode[2];  // H-PLOC uses the first only
  int *bound, *counter;
  unsigned long long *flags, *scanned;  // PLOC passes
  Float4 *cLo[2], *cHi[2];
  int* nn;
  PassState* state;
  int* passes;
  int *totals, *status, *counters;
  // The SAH top (empty without it). Its list and buffers, parents and arrivals live in arrays the clustering is done
  // with (TopArrays).
  TopState* topState;
  uint32_t* topBounds;
  TopQueues topQueues;
  TopWide topWide;
  BvhNode* binOut;
  WideNode* wideOut;
  int* wideTriSrc;
  int32_t* order;
};

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

// PLOC's passes, queued in groups without waiting for each other: each kernel reads the cluster count from the device
// (grids are sized by a count read back earlier, an upper bound), and a pass over `stop` clusters or fewer does
// nothing. The count after a group is read back while the next group runs, to stop and to shrink the grids. Pass q
// reads state[q % 2] and writes state[(q + 1) % 2]. With the SAH top (top: its list), clustering stops at a quarter of
// the triangles, and the clusters left go to the list. Returns the passes.
int ClusterInPasses(const BuildArrays& a, const PlocTree& tree, size_t tempBytes, const BvhBuildOptions& options,
                    int* top, cudaStream_t st) {
  constexpr int kPassesPerCheck = 8;
  const int n = tree.n, stop = top ? std::max(2, n / 4) : 1;
  const PassState first[2] = {{n, n, 0}, {n, n, 0}};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.state, first, sizeof first, cudaMemcpyHostToDevice, st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.passes, 0, sizeof(int), st));
  PinnedBuffer<PassState> hostState(2);
  CudaEvent groupDone[2];
  int c = n, queued = 0;
  for (int group = 0;; ++group) {
    const unsigned grid = GridFor(static_cast<size_t>(c), kBlock);
    for (int k = 0; k < kPassesPerCheck; ++k, ++queued) {
      const int cur = queued & 1;  // the clusters' double buffers
      PassState *now = a.state + (queued & 1), *next = a.state + 1 - (queued & 1);
      WithPlocRadius([&](auto radius) {
        PlocNearest<decltype(radius)::value><<<grid, kBlock, 0, st>>>(a.cLo[cur], a.cHi[cur], now, stop, a.nn);
      });
      TRACER_CHECK_LAUNCH("PlocNearest");
      PlocFlags<<<grid, kBlock, 0, st>>>(a.nn, now, stop, c, a.flags);
      TRACER_CHECK_LAUNCH("PlocFlags");
      size_t bytes = tempBytes;
      TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(a.temp, bytes, a.flags, a.scanned, c, st));
      PlocMerge<<<grid, kBlock, 0, st>>>(tree, now, next, stop, 1 - cur, a.passes, a.nn, a.flags, a.scanned,
                                         a.cNode[cur], a.cLo[cur], a.cHi[cur], a.cNode[1 - cur], a.cLo[1 - cur],
                                         a.cHi[1 - cur], options.maxLeafSize, options.intersectCost,
                                         options.traversalCost, options.wide);
      TRACER_CHECK_LAUNCH("PlocMerge");
    }
    TRACER_CUDA_CHECK(cudaMemcpyAsync(hostState.Get() + (group & 1), a.state + (queued & 1), sizeof(PassState),
                                      cudaMemcpyDeviceToHost, st));
    groupDone[group & 1].Record(st);
    if (group == 0) continue;
    groupDone[(group - 1) & 1].Synchronize();  // the group before this one: this one runs meanwhile
    const int seen = hostState.Get()[(group - 1) & 1].clusters;
    if (seen <= stop) break;
    if (seen >= c && group > 1) throw std::logic_error("GPU BVH builder: clustering passes merged nothing");
    c = seen;
  }
  if (top) {
    TopGather<<<GridFor(static_cast<size_t>(c), kBlock), kBlock, 0, st>>>(a.state + (queued & 1), a.cNode[0],
                                                                          a.cNode[1], a.topState, top);
    TRACER_CHECK_LAUNCH("TopGather");
  }
  int passes = 0;
  TRACER_CUDA_CHECK(cudaMemcpyAsync(&passes, a.passes, sizeof passes, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  return passes;
}

// H-PLOC; with the SAH top (top: the clusters it hands over, at their places), up to subtrees of kSahTopRange leaves.
void ClusterHierarchically(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, int* top,
                           cudaStream_t st) {
  const int n = tree.n;
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.bound, 0xff, static_cast<size_t>(n) * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.counter, 0, sizeof(int), st));
  const unsigned grid = GridFor(static_cast<size_t>(n), kHplocBlock);
  const double ci = options.intersectCost, ct = options.traversalCost;
  WithPlocRadius([&](auto radius) {
    Hploc<decltype(radius)::value><<<grid, kHplocBlock, 0, st>>>(tree, a.sortedKeys, a.cNode[0], a.bound, a.counter,
                                                                 options.maxLeafSize, ci, ct, options.wide,
                                                                 top ? kSahTopRange : 0, top);
  });
  TRACER_CHECK_LAUNCH("Hploc");
}

// TopBig's blocks: resident together (each waits for tasks the others make).
constexpr int kTopBigBlocksPerSm = 2;
int TopBigBlocks() { return kTopBigBlocksPerSm * Multiprocessors(); }
// TopBig's queue places: a block takes one more than there are tasks before it stops.
size_t TopReadySize(size_t n) { return n + static_cast<size_t>(TopBigBlocks()); }

// Whether the SAH top runs for n triangles: from kSahTopAuto triangles (see the SAH top's comment above), or as
// TRACER_SAH_TOP says (1 on, 0 off: a measuring knob).
bool SahTopOn(size_t n) {
  const knobs::Switch s = knobs::SahTop();
  return s == knobs::Switch::kAuto ? n >= kSahTopAuto : s == knobs::Switch::kOn;
}

// The SAH top's arrays that reuse the build's: the list and buffer a in the unsorted Morton codes' 8 bytes a triangle,
// buffer b in the unsorted triangle numbers, the parents (2n - 1) and arrivals (n - 1) in the triangles' boxes, all
// free once the leaves are made (InitLeaves).
TopBuffers TopArrays(const BuildArrays& a, int n, int** parent, int** arrive) {
  int* keys = reinterpret_cast<int*>(a.keys);
  *parent = reinterpret_cast<int*>(a.triLo);
  *arrive = reinterpret_cast<int*>(a.triHi);
  return TopBuffers{keys, keys + n, a.ids};
}

// The grid-wide levels (TopWide*), each read back to see whether another is needed.
void TopWideLevels(const BuildArrays& a, const PlocTree& tree, const TopBuffers& buf, int* parent, int sms,
                   cudaStream_t st) {
  const size_t n = static_cast<size_t>(tree.n), groups = n / kTopWide + 1;
  const unsigned chunkGrid = std::min(static_cast<unsigned>(n / kTopChunk + groups), static_cast<unsigned>(16 * sms));
  const unsigned groupGrid = std::min(static_cast<unsigned>(groups), static_cast<unsigned>(16 * sms));
  PinnedBuffer<int> count(1);
  for (int level = 0;; level ^= 1) {
    TRACER_CUDA_CHECK(
        cudaMemcpyAsync(count.Get(), &a.topState->wideCount[level], sizeof(int), cudaMemcpyDeviceToHost, st));
    TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
    if (*count.Get() == 0) return;
    TopWideChunks<<<1, 1024, 0, st>>>(a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideChunks");
    TopWideBin<<<chunkGrid, 256, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideBin");
    TopWideSplit<<<groupGrid, 32, 0, st>>>(a.topState, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideSplit");
    TopWideCount<<<chunkGrid, 256, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideCount");
    TopWideScatter<<<chunkGrid, kTopBlock, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideScatter");
    TopWideNext<<<GridFor(groups, kBlock), kBlock, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level,
                                                            parent);
    TRACER_CHECK_LAUNCH("TopWideNext");
  }
}

// The SAH top over the clusters the clustering handed over (TopBounds, TopInit, the grid-wide levels, TopBig,
// TopSmall, TopClimb).
void BuildTop(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, bool passes, size_t tempBytes,
              cudaStream_t st) {
  const int n = tree.n, sms = Multiprocessors();
  int *parent = nullptr, *arrive = nullptr;
  const TopBuffers buf = TopArrays(a, n, &parent, &arrive);
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

enum class Clustering { kHierarchical, kPasses };

BvhBuildReport Build(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary, WideBvh& wide,
                     Clustering how) {
  const size_t numTris = positions.size() / 3;
  if (numTris < 2) return HostBuild(positions, options, binary, wide, "fewer than two triangles: built on the CPU");
  if (numTris > (1u << 30)) throw std::runtime_error("GPU BVH builder: more than 2^30 triangles");
  const int n = static_cast<int>(numTris);
  const bool passes = how == Clustering::kPasses, top = n > kSahTopRange && SahTopOn(numTris);
  CudaStream stream;
  const cudaStream_t st = stream.Get();
  CudaEvent start, sorted, clustered, topped, built, done;
  const Stopwatch wall;

  // One allocation, carved twice by the same code: first to size it, then to hand out the arrays.
  size_t sortBytes = 0, scanBytes = 0;
  TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, static_cast<uint64_t*>(nullptr),
                                                    static_cast<uint64_t*>(nullptr), static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), n, 0, 63, st));
  if (passes)
    TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, static_cast<unsigned long long*>(nullptr),
                                                    static_cast<unsigned long long*>(nullptr), n, st));
  else if (top)
    TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), n, st));
  const size_t inner = numTris - 1, nodes = 2 * numTris - 1, tempBytes = std::max(sortBytes, scanBytes);
  const size_t pass = passes ? numTris : 0, hier = passes ? 0 : numTris;
  BuildArrays a;
  PlocTree tree{};
  auto carve = [&](Carver& c) {
    a.pos = c.Take<float>(9 * numTris);
    a.triLo = c.Take<Float4>(numTris), a.triHi = c.Take<Float4>(numTris);
    a.bounds = c.Take<uint32_t>(6);
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
    a.topQueues.big = c.Take<TopTask>(top ? numTris : 0),
    a.topQueues.small = c.Take<TopTask>(top ? numTris / 2 + 1 : 0);
    a.topQueues.wide[0] = c.Take<TopTask>(wideGroups), a.topQueues.wide[1] = c.Take<TopTask>(wideGroups);
    a.topQueues.ready = c.Take<int>(top ? TopReadySize(numTris) : 0);
    a.topWide = TopWide{c.Take<TopBins>(wideGroups), c.Take<int>(wideGroups), c.Take<uint32_t>(12 * wideGroups),
                        c.Take<int>(wideGroups),     c.Take<int2>(chunks),    c.Take<int>(chunks)};
    a.binOut = c.Take<BvhNode>(inner), a.wideOut = c.Take<WideNode>(options.wide ? inner : 0);
    a.wideTriSrc = c.Take<int>(options.wide ? numTris : 0);
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
                    c.Take<int>(options.wide ? kWideSlots * inner : 0),
                    c.Take<int>(options.wide ? inner : 0),
                    c.Take<int>(inner),
                    c.Take<int>(inner),
                    c.Take<int4>(inner)};
  };
  Carver sizing{nullptr};
  carve(sizing);
  DeviceBuffer<unsigned char> arena(sizing.used, "the GPU BVH build");
  Carver real{arena.Get()};
  carve(real);

  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.pos, positions.data(), 9 * numTris * sizeof(float), cudaMemcpyHostToDevice, st));
  start.Record(st);

  // Morton order.
  const uint32_t initBounds[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.bounds, initBounds, sizeof initBounds, cudaMemcpyHostToDevice, st));
  TriangleBoxes<<<std::min(GridFor(numTris, kBlock), 4096u), kBlock, 0, st>>>(a.pos, n, a.triLo, a.triHi, a.bounds);
  TRACER_CHECK_LAUNCH("TriangleBoxes");
  MortonCodes<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(a.triLo, a.triHi, n, a.bounds, a.keys, a.ids,
                                                           knobs::MortonCube());
  TRACER_CHECK_LAUNCH("MortonCodes");
  size_t bytes = tempBytes;
  TRACER_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(a.temp, bytes, a.keys, a.sortedKeys, a.ids, a.sortedTri, n, 0, 63, st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(tree.binAt, 0xff, inner * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(tree.wideAt, 0xff, inner * sizeof(int4), st));
  if (!options.wide) TRACER_CUDA_CHECK(cudaMemsetAsync(tree.wideNodes, 0, inner * sizeof(int), st));
  InitLeaves<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(tree, a.sortedTri, a.triLo, a.triHi, a.cNode[0], a.cLo[0],
                                                          a.cHi[0]);
  TRACER_CHECK_LAUNCH("InitLeaves");
  sorted.Record(st);

  TRACER_CUDA_CHECK(cudaMemsetAsync(a.status, 0, 4 * sizeof(int), st));
  TopBuffers topBuf{};
  if (top) {
    int *parent = nullptr, *arrive = nullptr;
    topBuf = TopArrays(a, n, &parent, &arrive);
    TRACER_CUDA_CHECK(cudaMemsetAsync(a.topState, 0, sizeof(TopState), st));
    if (!passes) TRACER_CUDA_CHECK(cudaMemsetAsync(topBuf.a, 0xff, numTris * sizeof(int), st));
  }
  int passCount = 0;
  if (passes)
    passCount = ClusterInPasses(a, tree, tempBytes, options, top ? topBuf.list : nullptr, st);
  else
    ClusterHierarchically(a, tree, options, top ? topBuf.a : nullptr, st);
  clustered.Record(st);
  if (top) BuildTop(a, tree, options, passes, tempBytes, st);
  topped.Record(st);

  // The top-down sweeps, in arrays the clustering no longer needs.
  int *binQueue = a.cNode[0], *wideQueue = a.ids;
  TRACER_CUDA_CHECK(cudaMemsetAsync(binQueue, 0xff, numTris * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(wideQueue, 0xff, numTris * sizeof(int), st));
  InitRoot<<<1, 1, 0, st>>>(tree, a.totals, binQueue, wideQueue, a.counters);
  TRACER_CHECK_LAUNCH("InitRoot");
  const int sweepBlocks = SweepBlocks(inner);
  SweepTopDown<<<options.wide ? 2 * sweepBlocks : sweepBlocks, kSweepBlock, 0, st>>>(
      tree, binQueue, wideQueue, a.counters, a.totals, sweepBlocks, a.binOut, a.wideTriSrc, a.status);
  TRACER_CHECK_LAUNCH("SweepTopDown");
  if (options.wide) {
    EncodeWideNodes<<<GridFor(inner / 4 + 1, kBlock), kBlock, 0, st>>>(tree, wideQueue, a.totals, a.wideOut, a.status);
    TRACER_CHECK_LAUNCH("EncodeWideNodes");
  }
  WriteOrder<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(tree, a.sortedTri, a.order);
  TRACER_CHECK_LAUNCH("WriteOrder");
  built.Record(st);
  int status[4], counts[2];
  TRACER_CUDA_CHECK(cudaMemcpyAsync(status, a.status, sizeof status, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaMemcpyAsync(counts, a.totals, sizeof counts, cudaMemcpyDeviceToHost, st));
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

  // The nodes, the order and the wide leaves' sources come back (49 bytes a triangle with the wide BVH); both
  // triangle arrays (96 bytes a triangle) are gathered here from the positions, on every core.
  Download(binary.nodes, a.binOut, static_cast<size_t>(counts[0]), st);
  Download(binary.order, a.order, numTris, st);
  binary.depth = status[0];
  wide = WideBvh{};
  std::vector<int> wideSrc;
  if (options.wide) {
    Download(wide.nodes, a.wideOut, static_cast<size_t>(counts[1]), st);
    Download(wideSrc, a.wideTriSrc, numTris, st);
    wide.depth = status[1];
  }
  done.Record(st);
  done.Synchronize();
  ThreadPool pool(ThreadPool::ThreadsFor(0));
  GatherBvhTriangles(positions, binary.order, binary.tris, &pool);
  if (options.wide) GatherWideTriangles(binary.tris, wideSrc, wide.tris, pool);
  BvhBuildReport report;
  report.builder = "gpu";
  report.method = std::string(passes ? "PLOC passes" : "H-PLOC") + (top ? " + SAH top" : "");
  report.buildMs = built.MsSince(start);
  report.sortMs = sorted.MsSince(start);
  report.clusterMs = clustered.MsSince(sorted);
  report.topMs = topped.MsSince(clustered);
  report.sweepMs = built.MsSince(topped);
  report.transferMs = wall.Ms() - report.buildMs;
  report.iterations = passCount;
  return report;
}

}  // namespace

BvhBuildReport BuildBvhsOnGpu(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                              WideBvh& wide) {
  return Build(positions, options, binary, wide, Clustering::kHierarchical);
}

BvhBuildReport BuildBvhsOnGpuInPasses(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                                      WideBvh& wide) {
  return Build(positions, options, binary, wide, Clustering::kPasses);
}

BvhBuildReport BuildBvhsAuto(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                             WideBvh& wide) {
  BvhBuildReport gpu = BuildBvhsOnGpu(positions, options, binary, wide);
  if (!options.wide || positions.size() / 3 >= kAutoCompareBelow || gpu.builder != "gpu") return gpu;
  Bvh hostBinary;
  WideBvh hostWide;
  BvhBuildReport host;
  try {
    host = HostBuild(positions, options, hostBinary, hostWide, "");
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
