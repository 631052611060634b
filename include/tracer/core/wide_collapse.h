// @file wide_collapse.h: the arithmetic of collapsing a binary BVH into the compressed wide BVH of wide_bvh.h,
// shared by the host collapse (src/host/bvh/wide_bvh_build.cpp) and the GPU builder (kernels/bvh_build/), so that both
// make the same choices and write the same bytes from the same binary tree (Ylitie, Karras and Laine 2017,
// section 4):
//   - SolveWideChoice: one step of the bottom-up dynamic programming over the binary tree;
//   - AssignWideSlots and QuantiseWideAxis: the slots of a node's children and their 8-bit boxes.
// Bit-identical results on both sides need the same operations in the same order: the GPU builder is compiled
// without FMA contraction (--fmad=false), and nothing here calls a function whose rounding may differ between
// the host's and the device's math libraries (no log2: exponents come from frexp, which is exact).
#pragma once
#include <cmath>

#include "tracer/core/wide_bvh.h"

namespace tracer {

// SAH weights of a wide node visit and a triangle test (the paper's c_node = 1, c_prim = 0.3).
constexpr double kWideNodeCost = 1.0;
constexpr double kWideTriCost = 0.3;
constexpr double kWideInfCost = 1e300;  // "not possible"; larger than any real cost, and finite on both sides

// Half the surface area of a box, in double (as Aabb::HalfArea): 0 for an empty box.
TRACER_HD double BoxHalfArea(Vec3 lo, Vec3 hi) {
  if (lo.x > hi.x) return 0.0;
  const double x = static_cast<double>(hi.x) - lo.x, y = static_cast<double>(hi.y) - lo.y,
               z = static_cast<double>(hi.z) - lo.z;
  return x * y + y * z + z * x;
}

// What the dynamic programming records for one binary node: cost[s - 1] is the SAH cost of its subtree spread
// over at most s slots of a wide node; split[s - 1] the left child's share of those s slots when the node is
// dissolved into its children's slots (0: it takes one slot, as a leaf if leaf1, else as a wide node of its own);
// nodeSplit the left child's share of the 8 slots when the node becomes a wide node.
struct WideChoice {
  double cost[kWideSlots];
  int8_t split[kWideSlots];
  uint8_t leaf1;
  int8_t nodeSplit;
};

// cost(leaf, s), s = 1..8, of a binary leaf of `count` triangles with box half-area `area`: it needs
// ceil(count / 3) slots; given fewer, it becomes a wide node of its own whose slots are those leaves.
TRACER_HD void WideLeafCosts(int count, double area, double* cost) {
  const double leaf = kWideTriCost * count * area;
  const int need = (count + kWideLeafMax - 1) / kWideLeafMax;
  for (int s = 1; s <= kWideSlots; ++s) cost[s - 1] = s >= need ? leaf : kWideNodeCost * area + leaf;
}

// One step of the bottom-up pass: the choices of a binary node whose subtree holds `count` triangles and whose box
// has half-area `area`, from its children's cost tables (WideChoice::cost or WideLeafCosts).
TRACER_HD void SolveWideChoice(const double* left, const double* right, int count, double area, WideChoice& out) {
  // spread[s]: the cheapest way to give both children s slots together, the left one share[s] of them.
  double spread[kWideSlots + 1];
  int share[kWideSlots + 1];
  for (int s = 0; s <= kWideSlots; ++s) spread[s] = kWideInfCost, share[s] = 0;
  for (int s = 2; s <= kWideSlots; ++s)
    for (int k = 1; k < s; ++k) {
      const double c = left[k - 1] + right[s - k - 1];
      if (c < spread[s]) spread[s] = c, share[s] = k;
    }
  out.nodeSplit = static_cast<int8_t>(share[kWideSlots]);
  const double asNode = kWideNodeCost * area + spread[kWideSlots];
  const double asLeaf = count <= kWideLeafMax ? kWideTriCost * count * area : kWideInfCost;
  out.leaf1 = asLeaf <= asNode ? 1 : 0;
  const double one = asLeaf < asNode ? asLeaf : asNode;
  out.cost[0] = one;
  out.split[0] = 0;
  for (int s = 2; s <= kWideSlots; ++s) {
    const bool dissolve = spread[s] < one;
    out.cost[s - 1] = dissolve ? spread[s] : one;
    out.split[s - 1] = static_cast<int8_t>(dissolve ? share[s] : 0);
  }
}

// A child's score for slot s: how far its centre v (relative to the node's) lies toward the slot's corner.
TRACER_HD float WideSlotScore(const Vec3& v, int s) {
  return (s & 1 ? v.x : -v.x) + (s & 2 ? v.y : -v.y) + (s & 4 ? v.z : -v.z);
}

// Slot for each of a node's n <= 8 children (boxes lo[j], hi[j]): greedily the (child, slot) pair whose child
// lies furthest toward the slot's corner (see wide_bvh.h), ties to the lower child, then the lower slot. Returns
// the child of each slot packed in 4 bits a slot: child + 1, 0 where the slot is empty.
// Each child's best free slot (the lower of equal scores) is kept until another child takes that slot; each round
// places the child whose best scores highest (the lower of equal ones). That is the pair a search of all free pairs
// in order of child, then slot, keeping the first highest, would pick, in fewer steps. Every array is indexed by an
// unrolled loop's counter only, so that on the device they stay in registers: the GPU builder's top-down sweep runs
// this where other warps' acquire fences keep emptying the SM's L1, and with arrays in local memory every access
// went to L2, which took most of the sweep's time.
TRACER_HD uint32_t AssignWideSlotsPacked(const Vec3* lo, const Vec3* hi, int n, Vec3 nodeLo, Vec3 nodeHi) {
  const Vec3 c = nodeLo * 0.5f + nodeHi * 0.5f;
  Vec3 v[kWideSlots];
  int best[kWideSlots];
  float bestScore[kWideSlots];
  uint32_t freeSlots = (1u << kWideSlots) - 1u, unplaced = (1u << n) - 1u;
  auto bestFree = [&](const Vec3& centre, int& b, float& score) {
    b = -1;
    TRACER_UNROLL
    for (int s = 0; s < kWideSlots; ++s) {
      const float x = WideSlotScore(centre, s);
      if (((freeSlots >> s) & 1u) && (b < 0 || x > score)) b = s, score = x;
    }
  };
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    v[j] = j < n ? (lo[j] * 0.5f + hi[j] * 0.5f) - c : Vec3(0.0f, 0.0f, 0.0f);
    best[j] = -1, bestScore[j] = 0.0f;
    if (j < n) bestFree(v[j], best[j], bestScore[j]);
  }
  uint32_t slotChild = 0;  // 4 bits a slot: child + 1, 0 empty
  for (int round = 0; round < n; ++round) {
    int bj = -1, bs = -1;
    float top = 0.0f;
    TRACER_UNROLL
    for (int j = 0; j < kWideSlots; ++j)
      if (((unplaced >> j) & 1u) && (bj < 0 || bestScore[j] > top)) bj = j, bs = best[j], top = bestScore[j];
    slotChild |= static_cast<uint32_t>(bj + 1) << (4 * bs);
    unplaced &= ~(1u << bj);
    freeSlots &= ~(1u << bs);
    TRACER_UNROLL
    for (int j = 0; j < kWideSlots; ++j)
      if (((unplaced >> j) & 1u) && best[j] == bs) bestFree(v[j], best[j], bestScore[j]);
  }
  return slotChild;
}

// The same choice as childOfSlot[s]: the child in slot s, or -1.
TRACER_HD void AssignWideSlots(const Vec3* lo, const Vec3* hi, int n, Vec3 nodeLo, Vec3 nodeHi, int* childOfSlot) {
  const uint32_t slotChild = AssignWideSlotsPacked(lo, hi, n, nodeLo, nodeHi);
  TRACER_UNROLL
  for (int s = 0; s < kWideSlots; ++s) childOfSlot[s] = static_cast<int>((slotChild >> (4 * s)) & 15u) - 1;
}

// ceil(log2(x)) for x > 0, exactly (frexp: x = m 2^k with m in [0.5, 1)).
TRACER_HD int CeilLog2(double x) {
  int k = 0;
  const double m = frexp(x, &k);
  return m == 0.5 ? k - 1 : k;
}

// The node's grid on one axis: the smallest power-of-two step with which every child's planes round outward to
// bytes, starting from the step that spans the node's extent (p to top) in 255; then the bytes, checked by
// decoding them as p + q * step (exact in double: the traversal never rounds the plane itself). Empty slots get
// an inverted box. Returns false when no step fits (an extent beyond float's range).
TRACER_HD bool QuantiseWideAxis(const Vec3* lo, const Vec3* hi, const int* childOfSlot, int axis, float p, float top,
                                uint8_t& exponent, uint8_t* qlo, uint8_t* qhi) {
  const double extent = static_cast<double>(top) - p;
  int e = extent > 0.0 ? CeilLog2(extent / 255.0) : -126;
  for (e = e < -126 ? -126 : e; e <= 127; ++e) {
    const float step = ldexpf(1.0f, e);
    const double dstep = static_cast<double>(step), perStep = 1.0 / dstep;  // exact: step is a power of two, so
    bool fits = true;                                                       // * perStep rounds as / dstep does
    for (int s = 0; s < kWideSlots && fits; ++s) {
      const int j = childOfSlot[s];
      if (j < 0) {
        qlo[s] = 255, qhi[s] = 0;
        continue;
      }
      const float bl = Axis(lo[j], axis), bh = Axis(hi[j], axis);
      double q = floor((static_cast<double>(bl) - p) * perStep);
      int ql = static_cast<int>(q < 0.0 ? 0.0 : (q > 255.0 ? 255.0 : q));
      while (ql > 0 && static_cast<double>(p) + ql * dstep > bl) --ql;
      q = ceil((static_cast<double>(bh) - p) * perStep);
      int qh = static_cast<int>(q < 0.0 ? 0.0 : (q > 255.0 ? 255.0 : q));
      while (qh < 255 && static_cast<double>(p) + qh * dstep < bh) ++qh;
      fits = static_cast<double>(p) + qh * dstep >= bh && static_cast<double>(p) + ql * dstep <= bl;
      qlo[s] = static_cast<uint8_t>(ql), qhi[s] = static_cast<uint8_t>(qh);
    }
    if (fits) {
      exponent = static_cast<uint8_t>(e + 127);
      return true;
    }
  }
  return false;
}

// A node from its n children (boxes lo[j], hi[j]; inner[j]; leaf j holding tris[j] triangles): slots, grid,
// imask and meta, with the node's inner children stored from childBase in slot order and its leaves' triangles
// from triBase in slot order. Writes childOfSlot (as AssignWideSlots). Returns false when quantisation fails.
TRACER_HD bool EncodeWideNode(const Vec3* lo, const Vec3* hi, const bool* inner, const int* tris, int n,
                              uint32_t childBase, uint32_t triBase, WideNode& node, int* childOfSlot) {
  Vec3 blo = lo[0], bhi = hi[0];
  for (int j = 1; j < n; ++j) blo = Min(blo, lo[j]), bhi = Max(bhi, hi[j]);
  AssignWideSlots(lo, hi, n, blo, bhi, childOfSlot);
  node = WideNode{};
  node.px = blo.x, node.py = blo.y, node.pz = blo.z;
  if (!QuantiseWideAxis(lo, hi, childOfSlot, 0, blo.x, bhi.x, node.ex, node.qlox, node.qhix) ||
      !QuantiseWideAxis(lo, hi, childOfSlot, 1, blo.y, bhi.y, node.ey, node.qloy, node.qhiy) ||
      !QuantiseWideAxis(lo, hi, childOfSlot, 2, blo.z, bhi.z, node.ez, node.qloz, node.qhiz))
    return false;
  node.childBase = childBase;
  node.triBase = triBase;
  uint32_t offset = 0;
  for (int s = 0; s < kWideSlots; ++s) {
    const int j = childOfSlot[s];
    if (j < 0) continue;
    if (inner[j]) {
      node.imask = static_cast<uint8_t>(node.imask | (1u << s));
      node.meta[s] = static_cast<uint8_t>(kWideInnerMeta + static_cast<uint32_t>(s));
      continue;
    }
    node.meta[s] = static_cast<uint8_t>((((1u << tris[j]) - 1u) << 5) | offset);
    offset += static_cast<uint32_t>(tris[j]);
  }
  return true;
}

}  // namespace tracer
