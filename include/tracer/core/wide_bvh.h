// @file wide_bvh.h: the compressed 8-wide BVH and its traversal, shared by CPU and GPU (Ylitie, Karras and
// Laine 2017, "Efficient Incoherent Ray Traversal on GPUs Through Compressed Wide BVHs", HPG).
//
// Node layout (80 bytes, five 16-byte loads). A node stores the boxes of up to eight children, quantised to
// 8 bits per plane on a grid local to the node: child plane = p + q * 2^(e - 127) per axis.
//   word 0 = (p.x, p.y, p.z as float bits, e.x | e.y << 8 | e.z << 16 | imask << 24)
//   word 1 = (childBase, triBase, meta[0..3], meta[4..7])
//   word 2 = (qlo.x[0..3], qlo.x[4..7], qlo.y[0..3], qlo.y[4..7])
//   word 3 = (qlo.z[0..3], qlo.z[4..7], qhi.x[0..3], qhi.x[4..7])
//   word 4 = (qhi.y[0..3], qhi.y[4..7], qhi.z[0..3], qhi.z[4..7])
// Bit s of imask says slot s holds an inner node; the inner children of a node are stored consecutively from
// childBase in slot order, so slot s's node is childBase + popcount(imask below s). meta[s] says what slot s
// holds: 0 nothing; an inner node 0b001'11000 + s (one bit, at position 24 + s); a leaf of n = 1..3
// triangles (2^n - 1) << 5 | offset, its triangles being triBase + offset ... + offset + n - 1. Triangles
// are stored in leaf order as three Float4 (v0, v1, v2); v0.w holds the triangle's index in the binary BVH's
// order (as int bits), the index every other per-triangle array and HitRecord::tri use.
//
// Slot s is meant for the child nearest the corner of the node whose axis a is on the high side when bit a of
// s is set (the builder assigns slots by that). A ray whose direction is negative on the axes of mask `oct`
// meets first the children near the corner `oct`, so visiting hit children by increasing s ^ oct is a cheap
// front-to-back order: the traversal places inner child s at bit 24 + (s ^ oct) and takes the lowest bit.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tracer/core/bvh.h"

namespace tracer {

struct alignas(16) WideNode {
  float px, py, pz;
  uint8_t ex, ey, ez;  // biased exponents of the grid steps, 1..254
  uint8_t imask;
  uint32_t childBase;
  uint32_t triBase;
  uint8_t meta[8];
  uint8_t qlox[8], qloy[8], qloz[8];
  uint8_t qhix[8], qhiy[8], qhiz[8];
};
static_assert(sizeof(WideNode) == 80 && alignof(WideNode) == 16, "wide node: five 16-byte loads");
static_assert(offsetof(WideNode, ex) == 12 && offsetof(WideNode, imask) == 15, "word 0: p, exponents, imask");
static_assert(offsetof(WideNode, childBase) == 16 && offsetof(WideNode, meta) == 24, "word 1: bases and meta");
static_assert(offsetof(WideNode, qlox) == 32 && offsetof(WideNode, qloz) == 48 && offsetof(WideNode, qhiy) == 64,
              "words 2-4: the quantised planes, eight bytes per axis and side");

constexpr int kWideSlots = 8;
constexpr int kWideLeafMax = 3;  // triangles per leaf: the unary count has three bits
// The traversal stack holds node groups, at most one per level of the current path, and postponed triangle
// groups, pushed only while fewer than kWidePostponeBelow entries are on the stack. The builder keeps the
// depth at most kWideMaxDepth, so the stack never holds more than kWideMaxDepth + kWidePostponeBelow entries.
constexpr int kWideStackSize = 64;
constexpr int kWideMaxDepth = 50;  // the binary builder's depth cap (48) + 1 for the root + 1 for split leaves
constexpr int kWidePostponeBelow = kWideStackSize - kWideMaxDepth;
static_assert(kWidePostponeBelow > 0, "room for postponed triangle groups");
// Postponed triangle tests (Ylitie et al. 2017, section 3.3): on the GPU, a lane about to test triangles while
// fewer than this many lanes of its warp do the same pushes its triangles and goes on down the tree, so that
// triangle tests run with more lanes together. 0 turns it off. Closest hit only: it speeds up incoherent closest-hit
// rays and slows down any-hit rays (docs/PERFORMANCE.md, traversal levers).
#ifndef TRACER_WIDE_POSTPONE_LANES
#define TRACER_WIDE_POSTPONE_LANES 7
#endif
constexpr int kWidePostponeLanes = TRACER_WIDE_POSTPONE_LANES;
constexpr uint32_t kWideInnerMeta = 0x38u;  // 0b001'11000: one bit, placed at 24 + slot

struct WideBvhView {
  const WideNode* nodes;
  const Float4* tris;  // 3 per triangle, leaf order; v0.w = binary BVH index as int bits
};

TRACER_HD uint32_t Popc(uint32_t x) {
#if TRACER_ON_DEVICE
  return static_cast<uint32_t>(__popc(x));
#else
  return static_cast<uint32_t>(__builtin_popcount(x));
#endif
}
// Index of the lowest set bit; x != 0.
TRACER_HD uint32_t LowestBit(uint32_t x) {
#if TRACER_ON_DEVICE
  return static_cast<uint32_t>(__ffs(static_cast<int>(x)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctz(x));
#endif
}

// A set of pending work: inner children of one node (bits 24-31 by visiting rank, imask in bits 0-7) or the
// triangles of one node (bits 0-23, offsets from base).
struct WideGroup {
  uint32_t base, bits;
};

// Byte k of the eight bytes in (lo4, hi4); one byte permute on the GPU.
TRACER_HD uint32_t ByteOf(uint32_t lo4, uint32_t hi4, int k) {
#if TRACER_ON_DEVICE
  return __byte_perm(k < 4 ? lo4 : hi4, 0u, 0x4440u | static_cast<uint32_t>(k & 3));
#else
  return ((k < 4 ? lo4 : hi4) >> (8 * (k & 3))) & 0xffu;
#endif
}
// x << (n mod 32): one funnel shift on the GPU (SHF.L.W masks the count itself), where a plain shift needs the mask
// as an instruction of its own.
TRACER_HD uint32_t ShiftLeftMod32(uint32_t x, uint32_t n) {
#if TRACER_ON_DEVICE
  return __funnelshift_l(0u, x, n);
#else
  return x << (n & 31u);
#endif
}
// The float bits 0x47000000 (2^15) that ByteAsFloat (below) fills in, as a value the GPU compiler cannot see: PRMT
// takes one of its selector and its second source as an immediate, and with both constant ptxas put the selector in a
// register, one IMAD a plane (48 a node) to set it up again under the register cap. Read from constant memory, the
// 2^15 takes the register and the selectors are immediates: fewer instructions a node (docs/PERFORMANCE.md, traversal
// levers).
#ifdef __CUDACC__
static __constant__ uint32_t kByteFloatBits = 0x47000000u;
#endif
static TRACER_HD uint32_t ByteFloatBits() {  // static, as the word it reads
#if TRACER_ON_DEVICE
  return kByteFloatBits;
#else
  return 0x47000000u;
#endif
}
// The byte plus 2^15, as a float: kByteBias + byte, exactly. On the GPU one byte permute and nothing else: it builds
// the float bits 0x4700qq00, exponent 2^15 and the byte as mantissa bits 8-15, whose unit there is 1. No
// int-to-float conversion (I2F runs at a quarter of the FMA rate or less, and a node test needs 48), and no
// subtraction either: the node test folds the bias into its per-node offsets (IntersectWideNode), so that a plane
// costs one permute and one FMA. bits: ByteFloatBits().
constexpr float kByteBias = 32768.0f;
TRACER_HD float ByteAsFloat(uint32_t lo4, uint32_t hi4, int k, uint32_t bits) {
#if TRACER_ON_DEVICE
  return __uint_as_float(__byte_perm(k < 4 ? lo4 : hi4, bits, 0x7404u | static_cast<uint32_t>(k & 3) << 4));
#else
  (void)bits;
  return kByteBias + static_cast<float>(ByteOf(lo4, hi4, k));
#endif
}

// Whether max(tnx, tny, tnz, 0) <= min(tfx, tfy, tfz, tmax): the slabs of one child box overlap along the ray.
// The distances are compared as the signed integers of their bits, which order finite floats as the floats do
// wherever the outcome depends on it: non-negative floats by value, and every negative one (-0 included) below
// every non-negative one. A negative near distance becomes 0 either way; a negative far one is a miss either
// way, since the near one is at least 0. (Wherever the node test uses the outcome, the planes are finite:
// IntersectWideNode says why.) On Hopper the integer form is two three-way DPX min/max instructions (VIMNMX3) and
// one two-way, where the float form is six FMNMX on the ALU pipe, the pipe that bounds traversal of coherent rays:
// sports car primary rays +7% (docs/PERFORMANCE.md).
TRACER_HD bool SlabsMeet(float tnx, float tny, float tnz, float tfx, float tfy, float tfz, float tmax) {
  const int32_t nx = static_cast<int32_t>(BitsFromFloat(tnx)), ny = static_cast<int32_t>(BitsFromFloat(tny)),
                nz = static_cast<int32_t>(BitsFromFloat(tnz)), fx = static_cast<int32_t>(BitsFromFloat(tfx)),
                fy = static_cast<int32_t>(BitsFromFloat(tfy)), fz = static_cast<int32_t>(BitsFromFloat(tfz)),
                ft = static_cast<int32_t>(BitsFromFloat(tmax));
#if TRACER_ON_DEVICE && __CUDA_ARCH__ >= 900
  return __vimax3_s32_relu(nx, ny, nz) <= __vimin3_s32(fx, fy, min(fz, ft));
#else
  const int32_t nxy = nx > ny ? nx : ny, nz0 = nz > 0 ? nz : 0, fxy = fx < fy ? fx : fy, fzt = fz < ft ? fz : ft;
  return (nxy > nz0 ? nxy : nz0) <= (fxy < fzt ? fxy : fzt);
#endif
}

// Tests the ray against the eight child boxes of one node; returns the hit bits: inner children at 24 + (s ^
// oct), leaf triangles at their offsets. Also returns the node's bases and imask.
template <bool kLdg>
TRACER_HD uint32_t IntersectWideNode(const WideNode* node, Vec3 o, Vec3 inv, uint32_t oct, float tmax,
                                     uint32_t& childBase, uint32_t& triBase, uint32_t& imask) {
  const Int4* w = reinterpret_cast<const Int4*>(node);
  const Int4 w0 = Load4<kLdg>(w), w1 = Load4<kLdg>(w + 1), w2 = Load4<kLdg>(w + 2), w3 = Load4<kLdg>(w + 3),
             w4 = Load4<kLdg>(w + 4);
  const uint32_t e = static_cast<uint32_t>(w0.w);
  imask = e >> 24;
  childBase = static_cast<uint32_t>(w1.x);
  triBase = static_cast<uint32_t>(w1.y);
  // Plane t = q * (2^e * inv) + (p - o) * inv = (kByteBias + q) * s + b, with b = (p - o) * inv - kByteBias * s:
  // one FMA per plane, ByteAsFloat giving kByteBias + q. Unlike (plane - o) * inv, whose rounding is relative to the
  // result (and covered by kSlabExitScale in SlabEntry), this sum rounds relative to its terms, which can be far
  // larger than the result: when the ray starts inside or near the node (a ray from inside a cube aimed at a vertex of
  // it escaped 480 times in 322,560 without the widening below), and always the bias's product, kByteBias |s|. So
  // each axis's slab is widened on both sides by a bound on that error, folded into the offsets (no cost per child).
  // The roundings of p - o, of its product with inv, of the reciprocal in inv, of b, of b's widening and of the plane
  // are each at most 2^-24 of their terms: 6 * 2^-24 |(p - o) inv| in all, under kErr |(p - o) inv|. Three of them
  // are at the bias's scale, (kByteBias + 255) |s| (b, b's widening, and on the CPU the plane's product; the bias
  // cancels exactly in the sum, both using the same s): 3 * 2^-24 * 33023 |s| = 0.0059 |s|, under kErr kBiasSpan |s|
  // = 0.008 |s|, a widening of 0.008 grid steps against the half step by which the 8-bit grid rounds each plane out.
  // (On the GPU the FMA leaves two of those three: 0.0039.) Kept that small because rays leaving a wall start a
  // ray offset from a plane of its box: a wider slab takes them back into their own wall's boxes (0.013 grid steps
  // cost the many-light scene's bounce rays 7% more nodes: docs/PERFORMANCE.md, traversal levers). Per axis, so that
  // an axis the ray runs parallel to (inv = 1e20) widens only its own slab.
  const float sx = FloatFromBits((e & 0xffu) << 23) * inv.x, sy = FloatFromBits(((e >> 8) & 0xffu) << 23) * inv.y,
              sz = FloatFromBits(((e >> 16) & 0xffu) << 23) * inv.z;
  const float ox = (FloatFromBits(static_cast<uint32_t>(w0.x)) - o.x) * inv.x,
              oy = (FloatFromBits(static_cast<uint32_t>(w0.y)) - o.y) * inv.y,
              oz = (FloatFromBits(static_cast<uint32_t>(w0.z)) - o.z) * inv.z;
  constexpr float kErr = 4e-7f, kBiasSpan = 20000.0f;
  const float ex = kErr * (kBiasSpan * fabsf(sx) + fabsf(ox)), ey = kErr * (kBiasSpan * fabsf(sy) + fabsf(oy)),
              ez = kErr * (kBiasSpan * fabsf(sz) + fabsf(oz));
  const float bx = ox - kByteBias * sx, by = oy - kByteBias * sy, bz = oz - kByteBias * sz;
  const float nox = bx - ex, noy = by - ey, noz = bz - ez, fox = bx + ex, foy = by + ey, foz = bz + ez;
  // A node so large against the ray's step that the terms of its planes could overflow (kByteBias |s| or |(p - o)
  // inv| near 3.4e38) would see inf - inf, a miss: instead all its children count as met, conservatively. The test
  // is on the widenings' sum: under 1e30, it holds |s| under 1.25e32 and |(p - o) inv| under 2.5e36, so that b, its
  // widening and every plane stay finite (under 7e36). It takes nodes over 1e34 across for a ray at 45 degrees to
  // an axis, over 3e14 for a ray parallel to one (inv = 1e20), or nodes 1.8e36 from the ray's origin at 45 degrees
  // (2.5e16 along an axis the ray runs parallel to). A NaN ray origin makes the sum NaN, and the node's children met
  // likewise. Two adds and one compare a node, and the slots' tests take it in their last compare (ISETP's predicate
  // operand) at no cost.
  const bool overflow = !(ex + ey + ez < 1e30f);
  // The near plane is the low one on axes the ray travels up, the high one on the others.
  const bool nx = oct & 1u, ny = oct & 2u, nz = oct & 4u;
  const uint32_t nearX0 = static_cast<uint32_t>(nx ? w3.z : w2.x), nearX1 = static_cast<uint32_t>(nx ? w3.w : w2.y);
  const uint32_t farX0 = static_cast<uint32_t>(nx ? w2.x : w3.z), farX1 = static_cast<uint32_t>(nx ? w2.y : w3.w);
  const uint32_t nearY0 = static_cast<uint32_t>(ny ? w4.x : w2.z), nearY1 = static_cast<uint32_t>(ny ? w4.y : w2.w);
  const uint32_t farY0 = static_cast<uint32_t>(ny ? w2.z : w4.x), farY1 = static_cast<uint32_t>(ny ? w2.w : w4.y);
  const uint32_t nearZ0 = static_cast<uint32_t>(nz ? w4.z : w3.x), nearZ1 = static_cast<uint32_t>(nz ? w4.w : w3.y);
  const uint32_t farZ0 = static_cast<uint32_t>(nz ? w3.x : w4.z), farZ1 = static_cast<uint32_t>(nz ? w3.y : w4.w);
  // Where each slot's hit goes: the meta bytes with the inner children's bit index (24 + s) turned into their
  // visiting rank (24 + (s ^ oct)), four slots per word at once. Then a hit slot sets its bits meta >> 5 at
  // meta & 31.
  uint32_t meta[2];
  for (int h = 0; h < 2; ++h) {
    const uint32_t m = static_cast<uint32_t>(h == 0 ? w1.z : w1.w);
    const uint32_t inner = m & (m << 1) & 0x10101010u;  // bit 4 of a byte: its bits 3 and 4 are set (0b11000)
    meta[h] = m ^ ((inner >> 4) * 0xffu & oct * 0x01010101u);
  }
  uint32_t hits = 0;
  const uint32_t bits = ByteFloatBits();
#if TRACER_ON_DEVICE
#pragma unroll
#endif
  for (int s = 0; s < kWideSlots; ++s) {
    const float tnx = ByteAsFloat(nearX0, nearX1, s, bits) * sx + nox;
    const float tny = ByteAsFloat(nearY0, nearY1, s, bits) * sy + noy;
    const float tnz = ByteAsFloat(nearZ0, nearZ1, s, bits) * sz + noz;
    const float tfx = ByteAsFloat(farX0, farX1, s, bits) * sx + fox;
    const float tfy = ByteAsFloat(farY0, farY1, s, bits) * sy + foy;
    const float tfz = ByteAsFloat(farZ0, farZ1, s, bits) * sz + foz;
    if (SlabsMeet(tnx, tny, tnz, tfx, tfy, tfz, tmax) || overflow) {
      const uint32_t m = ByteOf(meta[0], meta[1], s);
      hits |= ShiftLeftMod32(m >> 5, m);
    }
  }
  return hits;
}

// What a ray's traversal keeps between iterations, besides its stack: the ray's constants, the pending node
// and triangle groups, the stack depth and the hit so far. Plain values, so that they live in registers.
struct WideTraversalState {
  RayTriPre pre;
  Vec3 inv;
  uint32_t oct;
  int sp;
  WideGroup nodes, tris;
  HitRecord hit;
};

TRACER_HD WideTraversalState WideBegin(const Ray& ray) {
  WideTraversalState st;
  st.hit = HitRecord{ray.tmax, 0.0f, 0.0f, -1};
  st.pre = PrepareRay(ray.d);
  st.inv = SafeInverse(ray.d);
  st.oct = (st.inv.x < 0.0f ? 1u : 0u) | (st.inv.y < 0.0f ? 2u : 0u) | (st.inv.z < 0.0f ? 4u : 0u);
  st.sp = 0;
  st.nodes = WideGroup{0u, (1u << (24u + st.oct)) | 1u};  // the root, as inner slot 0 of a node based at 0
  st.tris = WideGroup{0u, 0u};
  return st;
}

// One iteration: visit the next node (or take a popped triangle group), test its triangles, and pop when the
// node group is spent. Returns false when the ray is done (the stack ran empty, or an any hit was found).
// TraverseWide loops over it; a persistent-threads kernel can run a ray a few iterations at a time.
template <bool kAnyHit, bool kLdg, class Filter = AcceptAllHits>
TRACER_HD bool WideStep(const WideBvhView& bvh, const Ray& ray, WideTraversalState& st, WideGroup* stack,
                        const Filter& accept = Filter{}) {
  WideGroup nodes = st.nodes, tris;
  if (nodes.bits > 0x00ffffffu) {
    const uint32_t rank = LowestBit(nodes.bits >> 24);
    nodes.bits &= ~(1u << (24u + rank));
    const uint32_t slot = rank ^ st.oct;
    const uint32_t index = nodes.base + Popc(nodes.bits & ((1u << slot) - 1u) & 0xffu);
    if (nodes.bits > 0x00ffffffu) stack[st.sp++] = nodes;  // siblings left (see kWideStackSize)
    uint32_t childBase, triBase, imask;
    const uint32_t hits = IntersectWideNode<kLdg>(&bvh.nodes[index], ray.o, st.inv, st.oct, st.hit.t * kCullMargin,
                                                  childBase, triBase, imask);
    nodes = WideGroup{childBase, (hits & 0xff000000u) | imask};
    tris = WideGroup{triBase, hits & 0x00ffffffu};
  } else {
    tris = nodes;  // a popped triangle group
    nodes = WideGroup{0u, 0u};
  }
  while (tris.bits != 0u) {
#if TRACER_ON_DEVICE
    if (!kAnyHit && kWidePostponeLanes > 0 && nodes.bits > 0x00ffffffu && st.sp < kWidePostponeBelow &&
        __popc(__activemask()) < kWidePostponeLanes) {
      stack[st.sp++] = tris;
      break;
    }
#endif
    const int k = static_cast<int>(tris.base + LowestBit(tris.bits));
    tris.bits &= tris.bits - 1u;
    const Float4 a = Load4<kLdg>(&bvh.tris[3 * k]), b = Load4<kLdg>(&bvh.tris[3 * k + 1]),
                 c = Load4<kLdg>(&bvh.tris[3 * k + 2]);
    float t, b1, b2;
    const int32_t tri = static_cast<int32_t>(BitsFromFloat(a.w));
    const Vec3 v0(a.x, a.y, a.z), v1(b.x, b.y, b.z), v2(c.x, c.y, c.z);
    if (IntersectTriangleBoxed<kAnyHit>(st.pre, ray.o, st.inv, v0, v1, v2, st.hit.t, t, b1, b2) &&
        NearerHit(t, tri, st.hit) && accept(tri, b1, b2)) {
      st.hit = HitRecord{t, b1, b2, tri};
      if (kAnyHit) return false;
    }
  }
  if (nodes.bits <= 0x00ffffffu) {
    if (st.sp == 0) return false;
    nodes = stack[--st.sp];
  }
  st.nodes = nodes;
  return true;
}

// Closest-hit (or, with kAnyHit, any-hit) traversal of the wide BVH. Returns the hit with `tri` in the binary
// BVH's order, as TraverseBvh does, so shading is the same for both.
template <bool kAnyHit, bool kLdg, class Filter = AcceptAllHits>
TRACER_HD HitRecord TraverseWide(const WideBvhView& bvh, const Ray& ray, const Filter& accept = Filter{}) {
  WideGroup stack[kWideStackSize];
  WideTraversalState st = WideBegin(ray);
  while (WideStep<kAnyHit, kLdg>(bvh, ray, st, stack, accept)) {
  }
  return st.hit;
}

}  // namespace tracer
