// @file ray.h: the per-ray records that cross memory between stages, and the two layouts they can take.
//
// Optimised layout (the default): RayState is 32 bytes, aligned to 32, read and written as two 16-byte
// vectors; Hit is one 16-byte vector; path state is structure-of-arrays with 16-byte fields. A warp then
// moves a ray with two LDG.E.128 per lane.
// Naive layout (--naive-layout): the same data as a plain array of structs with float3 members and
// 4-byte alignment, the way a first attempt writes it. The compiler must then issue one 4-byte load per
// field (LDG.E), and the path record has a 28-byte stride that is not a multiple of 16.
#pragma once
#include "tracer/core/math.h"

namespace tracer {

// The register form every stage works with, whatever the memory layout.
struct Ray {
  Vec3 o, d;
  float tmax;
  int32_t index;  // path slot for extension rays, pixel for shadow rays
};

struct HitRecord {
  float t, b1, b2;  // distance and the barycentric weights of vertices 1 and 2
  int32_t tri;      // triangle in BVH order; -1 for a miss
};

struct PathState {
  Vec3 throughput;
  float bsdfPdf;  // solid-angle pdf of the last BSDF sample, for MIS on emitter hits
  uint32_t pixel;
  uint32_t sample;
  uint32_t depth;
  uint32_t flags;
};
// kPathSpecular: the last bounce was specular (no MIS with light sampling). Bits 1 to 3: the facing of the last vertex
// (core/portals.h's PortalFacing), which weighs a ray that leaves the scene through the portals.
enum PathFlags : uint32_t { kPathSpecular = 1u, kPathFacingShift = 1u, kPathFacingMask = 7u << kPathFacingShift };

// ---- optimised layout ----------------------------------------------------------------------------
// r0 = (origin.xyz, dir.x), r1 = (dir.y, dir.z, tmax, index as int bits).
struct alignas(32) RayState {
  Float4 r0, r1;
};
static_assert(sizeof(RayState) == 32 && alignof(RayState) == 32, "RayState is two 16-byte loads");

struct alignas(16) Hit {
  float t, b1, b2;
  int32_t tri;
};
static_assert(sizeof(Hit) == 16 && alignof(Hit) == 16, "Hit is one 16-byte load");

// ---- naive layout ---------------------------------------------------------------------------------
struct F3 {
  float x, y, z;
};
struct NaiveRay {  // 32 bytes, 4-byte aligned: eight scalar loads
  F3 o, d;
  float tmax;
  int32_t index;
};
struct NaiveHit {  // 16 bytes, 4-byte aligned: four scalar loads
  float t, b1, b2;
  int32_t tri;
};
struct NaivePath {  // 28 bytes: the stride is not a multiple of 16
  F3 throughput;
  float bsdfPdf;
  uint32_t pixel;
  uint32_t sample;
  uint16_t depth;
  uint16_t flags;
};
static_assert(sizeof(NaiveRay) == 32 && alignof(NaiveRay) == 4, "naive ray: 8 scalar fields");
static_assert(sizeof(NaivePath) == 28 && alignof(NaivePath) == 4, "naive path: 28-byte stride");

// A shadow ray carries the radiance it delivers if unoccluded; ray.index = pixel.
struct alignas(32) ShadowItem {
  RayState ray;
  Float4 contribution;  // (rgb, Shadow::depth, the FilmTag, as int bits)
};
static_assert(sizeof(ShadowItem) == 64, "shadow item: three 16-byte loads and one spare");
struct NaiveShadow {  // 48 bytes, 4-byte aligned
  NaiveRay ray;
  F3 contribution;
  uint32_t depth;
};
struct Shadow {
  Ray ray;
  Vec3 contribution;
  uint32_t depth;  // FilmTag (core/film.h): the depth of the vertex it was sampled from and its sample's parity
};

// ---- layout policies: the kernels are templates on one of these -----------------------------------
struct AlignedLayout {
  static constexpr const char* kName = "aligned";
  using RayT = RayState;
  using HitT = Hit;
  struct PathBuffers {
    Float4* throughputPdf;  // (throughput.rgb, bsdfPdf)
    Int4* info;             // (pixel, sample, depth, flags)
  };
  using ShadowT = ShadowItem;
  static constexpr size_t kPathBytes = 32;

  TRACER_HD static Ray LoadRay(const RayT* rays, int i) {
    Float4 a = LoadVec4(&rays[i].r0), b = LoadVec4(&rays[i].r1);
    return Ray{Vec3(a.x, a.y, a.z), Vec3(a.w, b.x, b.y), b.z, static_cast<int32_t>(BitsFromFloat(b.w))};
  }
  TRACER_HD static void StoreRay(RayT* rays, int i, const Ray& r) {
    Store4(&rays[i].r0, Float4{r.o.x, r.o.y, r.o.z, r.d.x});
    Store4(&rays[i].r1, Float4{r.d.y, r.d.z, r.tmax, FloatFromBits(static_cast<uint32_t>(r.index))});
  }
  TRACER_HD static HitRecord LoadHit(const HitT* hits, int i) {
    Float4 v = LoadVec4(reinterpret_cast<const Float4*>(&hits[i]));
    return HitRecord{v.x, v.y, v.z, static_cast<int32_t>(BitsFromFloat(v.w))};
  }
  TRACER_HD static void StoreHit(HitT* hits, int i, const HitRecord& h) {
    Store4(reinterpret_cast<Float4*>(&hits[i]), Float4{h.t, h.b1, h.b2, FloatFromBits(static_cast<uint32_t>(h.tri))});
  }
  TRACER_HD static PathState LoadPath(const PathBuffers& p, int i) {
    Float4 a = LoadVec4(&p.throughputPdf[i]);
    Int4 b = LoadVec4(&p.info[i]);
    return PathState{Vec3(a.x, a.y, a.z),        a.w,
                     static_cast<uint32_t>(b.x), static_cast<uint32_t>(b.y),
                     static_cast<uint32_t>(b.z), static_cast<uint32_t>(b.w)};
  }
  TRACER_HD static void StorePath(const PathBuffers& p, int i, const PathState& s) {
    Store4(&p.throughputPdf[i], Float4{s.throughput.x, s.throughput.y, s.throughput.z, s.bsdfPdf});
    Store4(&p.info[i], Int4{static_cast<int32_t>(s.pixel), static_cast<int32_t>(s.sample),
                            static_cast<int32_t>(s.depth), static_cast<int32_t>(s.flags)});
  }
  TRACER_HD static Shadow LoadShadow(const ShadowT* items, int i) {
    Float4 c = LoadVec4(&items[i].contribution);
    return Shadow{LoadRay(&items[i].ray, 0), Vec3(c.x, c.y, c.z), BitsFromFloat(c.w)};
  }
  TRACER_HD static void StoreShadow(ShadowT* items, int i, const Shadow& s) {
    StoreRay(&items[i].ray, 0, s.ray);
    Store4(&items[i].contribution,
           Float4{s.contribution.x, s.contribution.y, s.contribution.z, FloatFromBits(s.depth)});
  }
};

struct NaiveLayout {
  static constexpr const char* kName = "naive";
  using RayT = NaiveRay;
  using HitT = NaiveHit;
  struct PathBuffers {
    NaivePath* paths;
  };
  using ShadowT = NaiveShadow;
  static constexpr size_t kPathBytes = sizeof(NaivePath);

  TRACER_HD static Ray LoadRay(const RayT* rays, int i) {
    const NaiveRay& r = rays[i];
    return Ray{Vec3(r.o.x, r.o.y, r.o.z), Vec3(r.d.x, r.d.y, r.d.z), r.tmax, r.index};
  }
  TRACER_HD static void StoreRay(RayT* rays, int i, const Ray& r) {
    NaiveRay& o = rays[i];
    o.o = F3{r.o.x, r.o.y, r.o.z};
    o.d = F3{r.d.x, r.d.y, r.d.z};
    o.tmax = r.tmax;
    o.index = r.index;
  }
  TRACER_HD static HitRecord LoadHit(const HitT* hits, int i) {
    const NaiveHit& h = hits[i];
    return HitRecord{h.t, h.b1, h.b2, h.tri};
  }
  TRACER_HD static void StoreHit(HitT* hits, int i, const HitRecord& h) {
    NaiveHit& o = hits[i];
    o.t = h.t;
    o.b1 = h.b1;
    o.b2 = h.b2;
    o.tri = h.tri;
  }
  TRACER_HD static PathState LoadPath(const PathBuffers& p, int i) {
    const NaivePath& s = p.paths[i];
    return PathState{
        Vec3(s.throughput.x, s.throughput.y, s.throughput.z), s.bsdfPdf, s.pixel, s.sample, s.depth, s.flags};
  }
  TRACER_HD static void StorePath(const PathBuffers& p, int i, const PathState& s) {
    NaivePath& o = p.paths[i];
    o.throughput = F3{s.throughput.x, s.throughput.y, s.throughput.z};
    o.bsdfPdf = s.bsdfPdf;
    o.pixel = s.pixel;
    o.sample = s.sample;
    o.depth = static_cast<uint16_t>(s.depth);
    o.flags = static_cast<uint16_t>(s.flags);
  }
  TRACER_HD static Shadow LoadShadow(const ShadowT* items, int i) {
    const NaiveShadow& s = items[i];
    return Shadow{LoadRay(&s.ray, 0), Vec3(s.contribution.x, s.contribution.y, s.contribution.z), s.depth};
  }
  TRACER_HD static void StoreShadow(ShadowT* items, int i, const Shadow& s) {
    StoreRay(&items[i].ray, 0, s.ray);
    items[i].contribution = F3{s.contribution.x, s.contribution.y, s.contribution.z};
    items[i].depth = s.depth;
  }
};

}  // namespace tracer
