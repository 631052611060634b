// @file ploc_tree.cuh: the GPU BVH builder's tree in device memory (PlocTree) and what its stages share on the device:
// floats in integer order, boxes, PLOC's order of pairs (NearerPair), the making of a node with both layouts' bottom-up
// choices (MakeNode), and PLOC's radius (WithPlocRadius). Included by the builder's sources only (kernels/bvh_build/,
// src/cuda/bvh_build_gpu.cu), all compiled with --fmad=false.
#pragma once
#include <cstdint>
#include <type_traits>

#include "tracer/core/wide_collapse.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/knobs.h"

namespace tracer::gpu_build {

constexpr int kBlock = 256;                  // the plain kernels' blocks (a thread an item)
constexpr unsigned kFullMask = 0xffffffffu;  // every lane of a warp

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
TRACER_DEVICE uint32_t OrderedFromFloat(float f) {
  const uint32_t u = __float_as_uint(f);
  return (u >> 31) ? ~u : (u | 0x80000000u);
}
TRACER_HD float FloatFromOrdered(uint32_t u) { return FloatFromBits((u >> 31) ? (u & 0x7fffffffu) : ~u); }
// Grows a box kept as ordered floats (lo3: min x, y, z; hi3: max x, y, z; shared or global memory) by [lo, hi], if
// that is not empty.
TRACER_DEVICE void GrowOrderedBox(uint32_t* lo3, uint32_t* hi3, Vec3 lo, Vec3 hi) {
  if (!(lo.x <= hi.x)) return;
  const float l3[3] = {lo.x, lo.y, lo.z}, h3[3] = {hi.x, hi.y, hi.z};
  for (int e = 0; e < 3; ++e) atomicMin(&lo3[e], OrderedFromFloat(l3[e])), atomicMax(&hi3[e], OrderedFromFloat(h3[e]));
}

TRACER_DEVICE uint32_t WarpMin(uint32_t v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
TRACER_DEVICE uint32_t WarpMax(uint32_t v) {
  for (int o = 16; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The box around two boxes (w unused).
TRACER_DEVICE Float4 BoxMin(Float4 a, Float4 b) {
  return Float4{Fminf(a.x, b.x), Fminf(a.y, b.y), Fminf(a.z, b.z), 0.0f};
}
TRACER_DEVICE Float4 BoxMax(Float4 a, Float4 b) {
  return Float4{Fmaxf(a.x, b.x), Fmaxf(a.y, b.y), Fmaxf(a.z, b.z), 0.0f};
}

// Half the area of the box around both, in float; infinite where that overflows (an extent beyond float's range on
// one axis and 0 on another would give inf * 0 = NaN, and NearerPair would then be no order: clusters with no mutual
// nearest neighbour, and H-PLOC's warp would never finish).
TRACER_DEVICE float UnionHalfArea(Float4 alo, Float4 ahi, Float4 blo, Float4 bhi) {
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
TRACER_DEVICE uint32_t PositionHash(uint32_t x) {
  x = (x ^ 61u) ^ (x >> 16);
  x *= 9u;
  x ^= x >> 4;
  x *= 0x27d4eb2du;
  return x ^ (x >> 15);
}
TRACER_DEVICE bool NearerPair(float a, int i, int j, float b, int k) {
  if (a != b) return a < b;
  const int dj = abs(i - j), dk = abs(i - k);
  if (dj != dk) return dj < dk;
  const int mj = min(i, j), mk = min(i, k);
  const uint32_t hj = PositionHash(static_cast<uint32_t>(mj)), hk = PositionHash(static_cast<uint32_t>(mk));
  return hj != hk ? hj < hk : mj < mk;
}

// Node k over nodes a and b (box lo, hi): its children, its count, and both layouts' bottom-up choices, the binary
// BVH's SAH leaf-or-split and the wide BVH's dynamic programming, from the children's.
TRACER_DEVICE void MakeNode(const PlocTree& t, int k, int a, int b, Float4 lo, Float4 hi, int maxLeaf, double ci,
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
  // memory, which other warps' acquire fences keep evicting from L1, so that every access went to L2
  // (docs/PERFORMANCE.md).
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

}  // namespace tracer::gpu_build
