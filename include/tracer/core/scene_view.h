// @file scene_view.h: the read-only scene as per-ray code sees it (raw pointers, valid on host or device),
// and the surface data fetched at a hit.
#pragma once
#include "tracer/core/bvh.h"
#include "tracer/core/camera.h"
#include "tracer/core/delta_lights.h"
#include "tracer/core/env_guide.h"
#include "tracer/core/environment.h"
#include "tracer/core/material.h"
#include "tracer/core/portals.h"
#include "tracer/core/wide_bvh.h"

namespace tracer {

// Per-triangle shading data in BVH order (64 bytes, four 16-byte loads):
//   n0 = (vertex normal 0, material index as int bits), n1 = (normal 1, u0), n2 = (normal 2, v0),
//   uv = (u1, v1, u2, v2). Meshes without normals get the face normal at all three vertices.
struct alignas(16) TriShading {
  Float4 n0, n1, n2, uv;
};
static_assert(sizeof(TriShading) == 64, "triangle shading record: four 16-byte loads");

// A texture as a material samples it (48 bytes, three 16-byte loads): an image and the options of its MTL statement
// (host/scene_loader.h's TextureOptions). Maps naming one image share its texels.
struct alignas(16) TextureInfo {
  int32_t offset, width, height;  // texels [offset, offset + width*height), linear RGB in Float4, row 0 at the top
  int32_t clamp;                  // -clamp on: 1 (uv clamped to [0, 1]); 0: the image repeats
  float scaleU, scaleV, offsetU, offsetV;  // -s, -o: the lookup is at (scale * uv + offset)
  float base, gain;                        // -mm: base + gain * texel
  float bumpMultiplier;                    // -bm: a bump map's height is bumpMultiplier times the texel
  float pad;
};
static_assert(sizeof(TextureInfo) == 48, "texture record: three 16-byte loads");

// Many-light sampling by screen tiles (see light_tiles.h); null when --light-sampling power.
struct TileGuideView {
  const float* cdf;                  // per tile: numClusters cumulative probabilities of p(c|t)
  const int32_t* clusterStart;       // per emitter cluster: its first emitter; emitter clusters + 1 entries
  const AliasEntry* clusterAlias;    // per cluster-local emitter, alias tables laid end to end
  const int32_t* emitterCluster;     // emitter -> cluster
  const float* emitterInClusterPmf;  // emitter -> pmf inside its cluster
  const float* clusterPowerPmf;      // cluster -> p_power(c); the guide's: the delta lights' and environment's too
  int32_t numClusters;               // emitter clusters, then the delta lights' and the environment's when present
  int32_t envCluster;                // 1: the last cluster is the environment (no emitters, no clusterStart entry)
  int32_t deltaCluster;              // 1: the delta lights are one cluster, just before the environment's
  int32_t tileSize;
  int32_t tilesX;
  int32_t numTiles;
};

struct SceneView {
  BvhView bvh;
  WideBvhView wide;           // null pointers when only the binary BVH was built (--bvh binary)
  const TriShading* shading;  // BVH order
  const Material* materials;
  const Float4* texels;
  const TextureInfo* textures;
  const AliasEntry* lightAlias;  // one entry per emitter, picks in proportion to power
  const int32_t* emitterTri;     // emitter -> triangle (BVH order)
  const int32_t* triEmitter;     // triangle (BVH order) -> emitter, or -1
  // emitter -> 1 where it emits on both sides (pbrt's "twosided" area lights), else 0; null when no emitter does
  const uint8_t* emitterTwoSided;
  const DeltaLight* deltaLights;  // point, spot and distant lights (core/delta_lights.h); null when there are none
  const AliasEntry* deltaAlias;   // one entry per delta light, picks in proportion to power
  int32_t numEmitters;
  int32_t numDeltaLights;
  // By power, the probability that next-event estimation picks a delta light given that it does not pick the
  // environment: their power / (theirs + the emitters'); 0 without delta lights (see light.h).
  float deltaShare;
  Camera camera;
  Vec3 environment;  // constant radiance of rays that leave the scene, when there is no map (env.p.width == 0)
  EnvMapView env;    // the environment map (--env-map) and the environment's share of light selection
  TileGuideView tiles;
  EnvGuideView envGuide;  // --env-sampling guided (core/env_guide.h); a null cdf otherwise
  PortalView portals;     // the environment's portals (core/portals.h); count 0 when the scene has none
  int32_t cutouts;        // 1: some material has kMaterialCutout, so traversal runs the cut-out test (CutoutFilter)
  float offsetFloor;      // OffsetRayOrigin's floor: RayOffsetFloor of the scene's bounds
  // Bit c set: no material has class c, so no hit is queued for its shade stage, which RunBounces then skips (0: run
  // every class's).
  int32_t absentClasses;
};

// One texel, with the integer coordinates folded into the image: repeated (wrap) or clamped to its edge.
TRACER_HD Vec3 FetchTexel(const Float4* texels, const TextureInfo& ti, int x, int y) {
  if (ti.clamp) {
    x = x < 0 ? 0 : (x >= ti.width ? ti.width - 1 : x);
    y = y < 0 ? 0 : (y >= ti.height ? ti.height - 1 : y);
  } else {
    x = x < 0 ? x + ti.width : (x >= ti.width ? x - ti.width : x);  // x is in [-1, width]: one step folds it
    y = y < 0 ? y + ti.height : (y >= ti.height ? y - ti.height : y);
  }
  Float4 t = texels[ti.offset + y * ti.width + x];
  return Vec3(t.x, t.y, t.z);
}

// Bilinear lookup at (u, v) after the texture's -s/-o/-clamp and -mm. OBJ's convention: (0, 0) is the image's
// bottom-left corner and (1, 1) its top-right, so v = 0 is the bottom row (row height - 1 as stored). Texel (x, y)
// has its centre at u = (x + 0.5) / width, v = 1 - (y + 0.5) / height; between centres the four nearest texels are
// weighted by distance, and past the outer centres the image repeats (or, under -clamp, its edge texels extend).
TRACER_HD Vec3 SampleTextureIn(const TextureInfo* textures, const Float4* texels, int tex, float u, float v) {
  const TextureInfo ti = textures[tex];
  u = ti.scaleU * u + ti.offsetU;
  v = ti.scaleV * v + ti.offsetV;
  if (ti.clamp) {
    u = Clamp(u, 0.0f, 1.0f);
    v = Clamp(v, 0.0f, 1.0f);
  } else {
    u -= floorf(u);
    v -= floorf(v);
  }
  if (!(u >= 0.0f && u <= 1.0f)) u = 0.0f;  // NaN or inf from a broken vt: any texel, not a wild read
  if (!(v >= 0.0f && v <= 1.0f)) v = 0.0f;
  const float x = u * static_cast<float>(ti.width) - 0.5f, y = (1.0f - v) * static_cast<float>(ti.height) - 0.5f;
  const float fx = floorf(x), fy = floorf(y);  // in [-1, width - 1] and [-1, height - 1]
  const float wx = x - fx, wy = y - fy;
  const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
  const Vec3 top = FetchTexel(texels, ti, x0, y0) * (1.0f - wx) + FetchTexel(texels, ti, x0 + 1, y0) * wx;
  const Vec3 bottom = FetchTexel(texels, ti, x0, y0 + 1) * (1.0f - wx) + FetchTexel(texels, ti, x0 + 1, y0 + 1) * wx;
  const Vec3 t = top * (1.0f - wy) + bottom * wy;
  return Vec3(ti.base) + t * ti.gain;
}

// ---- cut-outs (MTL d and map_d) -----------------------------------------------------------------------------
// A triangle whose material has kMaterialCutout stops a ray with probability alpha = d times map_d's texel at the
// hit (filtered like any texture); elsewhere a ray passes through as if the triangle were not there. The choice is
// a hash of the ray and the triangle, so one ray decides the same at every test of one triangle, and it is
// unbiased over rays for fractional alpha (for alpha 0 or 1, as cut-out textures mostly are, it is exact).
// Traversal asks at each candidate hit, for extension and shadow rays alike (so leaves cast holed shadows); a
// scene with no cut-out material (SceneView::cutouts 0) traverses without the filter and pays nothing.

// A 32-bit integer hash (the finaliser of Murmur3, Appleby 2008), and a uniform number in [0, 1) from it.
TRACER_HD uint32_t MixBits(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
// One number per ray, from its origin and direction.
TRACER_HD uint32_t CutoutRaySeed(const Ray& r) {
  uint32_t h = 0x9e3779b9u;
  const float f[6] = {r.o.x, r.o.y, r.o.z, r.d.x, r.d.y, r.d.z};
  for (float x : f) h = MixBits(h ^ BitsFromFloat(x));
  return h;
}

// What the cut-out test reads, by value (a kernel's SceneView stays in parameter space).
struct CutoutFilterBase {
  const TriShading* shading;
  const Material* materials;
  const TextureInfo* textures;
  const Float4* texels;
  uint32_t seed;  // CutoutRaySeed of the ray
};
template <bool kLdg>
struct CutoutFilter : CutoutFilterBase {
  // Whether the ray stops at triangle `tri` (BVH order) hit at barycentrics (b1, b2).
  TRACER_HD bool operator()(int32_t tri, float b1, float b2) const {
    const TriShading* sh = &shading[tri];
    const Float4 n0 = Load4<kLdg>(&sh->n0);
    const Material* m = &materials[static_cast<int32_t>(BitsFromFloat(n0.w))];
    const Int4 info = Load4<kLdg>(&m->info);
    if (!(info.w & kMaterialCutout)) return true;
    float alpha = FloatFromBits(static_cast<uint32_t>(info.z));
    const int32_t map = Load4<kLdg>(&m->maps).w;
    if (map >= 0) {
      const Float4 n1 = Load4<kLdg>(&sh->n1), n2 = Load4<kLdg>(&sh->n2), uv = Load4<kLdg>(&sh->uv);
      const float b0 = 1.0f - b1 - b2;
      alpha *=
          SampleTextureIn(textures, texels, map, n1.w * b0 + uv.x * b1 + uv.z * b2, n2.w * b0 + uv.y * b1 + uv.w * b2)
              .x;
    }
    if (alpha >= 1.0f) return true;
    if (!(alpha > 0.0f)) return false;
    return static_cast<float>(MixBits(seed ^ MixBits(static_cast<uint32_t>(tri))) >> 8) * (1.0f / 16777216.0f) < alpha;
  }
};

// Which BVH per-ray code traverses, chosen at compile time (a template argument of the intersect and shadow
// stages): the compressed 8-wide BVH (the default) or the binary one (--bvh binary, its naive twin). Both
// report triangles in the binary BVH's order, which every per-triangle array uses.
// Scenes with cut-outs traverse with the cut-out test (CutoutFilter), others without it.
template <bool kLdg>
TRACER_HD CutoutFilter<kLdg> MakeCutoutFilter(const SceneView& s, const Ray& r) {
  CutoutFilter<kLdg> f;
  f.shading = s.shading;
  f.materials = s.materials;
  f.textures = s.textures;
  f.texels = s.texels;
  f.seed = CutoutRaySeed(r);
  return f;
}
struct WideBvhTraversal {
  template <bool kAnyHit, bool kLdg>
  TRACER_HD static HitRecord Trace(const SceneView& s, const Ray& r) {
    if (s.cutouts) return TraverseWide<kAnyHit, kLdg>(s.wide, r, MakeCutoutFilter<kLdg>(s, r));
    return TraverseWide<kAnyHit, kLdg>(s.wide, r);
  }
};
struct BinaryBvhTraversal {
  template <bool kAnyHit, bool kLdg>
  TRACER_HD static HitRecord Trace(const SceneView& s, const Ray& r) {
    if (s.cutouts) return TraverseBvh<kAnyHit, kLdg>(s.bvh, r, MakeCutoutFilter<kLdg>(s, r));
    return TraverseBvh<kAnyHit, kLdg>(s.bvh, r);
  }
};
// Calls f(WideBvhTraversal{}) or, for the binary BVH, f(BinaryBvhTraversal{}).
template <class F>
void DispatchBvh(bool binary, F&& f) {
  if (binary)
    f(BinaryBvhTraversal{});
  else
    f(WideBvhTraversal{});
}

// Every array of the scene, listed once. Each entry is
//
//   X(ElementType, name, dataMember, viewMember, "description")
//
// name:       an identifier for the array (DeviceScene's buffer of it is called that);
// dataMember: where SceneData (host/scene_data.h) holds it, a std::vector<ElementType>;
// viewMember: where SceneView above points at it, a const ElementType*;
// description: what it is, for messages (e.g. running out of device memory uploading it).
//
// From this list come SceneData::View(), DeviceScene's buffers, upload and pointers, SceneContentHash, and
// the checks that each column names members of the right types (scene_data.cpp). So adding an array to the
// scene is: the vector in SceneData, the pointer in SceneView, one line here, and the code that fills it.
//
// Why here, in core/: SceneView is declared just above, and this header is the one that SceneData's header,
// DeviceScene's and the per-ray code all include. The list adds nothing host-only to core/: dataMember is
// only text until a host or CUDA-runtime file expands the list, and only those files do.
#define TRACER_SCENE_ARRAYS(X)                                                                             \
  X(BvhNode, nodes, bvh.nodes, bvh.nodes, "BVH nodes")                                                     \
  X(Float4, tris, bvh.tris, bvh.tris, "triangles")                                                         \
  X(WideNode, wideNodes, wide.nodes, wide.nodes, "wide BVH nodes")                                         \
  X(Float4, wideTris, wide.tris, wide.tris, "wide BVH triangles")                                          \
  X(TriShading, shading, shading, shading, "triangle shading")                                             \
  X(Material, materials, materials, materials, "materials")                                                \
  X(Float4, texels, texels, texels, "texels")                                                              \
  X(TextureInfo, textures, textures, textures, "textures")                                                 \
  X(AliasEntry, lightAlias, lightAlias, lightAlias, "light alias table")                                   \
  X(int32_t, emitterTri, emitterTri, emitterTri, "emitters")                                               \
  X(int32_t, triEmitter, triEmitter, triEmitter, "triangle emitters")                                      \
  X(uint8_t, emitterTwoSided, emitterTwoSided, emitterTwoSided, "two-sided emitters")                      \
  X(DeltaLight, deltaLights, deltaLights, deltaLights, "delta lights")                                     \
  X(AliasEntry, deltaAlias, deltaAlias, deltaAlias, "delta light alias table")                             \
  X(int32_t, clusterStart, clusters.clusterStart, tiles.clusterStart, "light clusters")                    \
  X(AliasEntry, clusterAlias, clusters.clusterAlias, tiles.clusterAlias, "light clusters")                 \
  X(int32_t, emitterCluster, clusters.emitterCluster, tiles.emitterCluster, "light clusters")              \
  X(float, emitterInClusterPmf, clusters.emitterInClusterPmf, tiles.emitterInClusterPmf, "light clusters") \
  X(float, clusterPowerPmf, clusters.clusterPowerPmf, tiles.clusterPowerPmf, "light clusters")             \
  X(Float4, envTexels, env.texels, env.texels, "environment map")                                          \
  X(float, envMarginalCdf, env.marginalCdf, env.marginalCdf, "environment map distribution")               \
  X(float, envConditionalCdf, env.conditionalCdf, env.conditionalCdf, "environment map distribution")      \
  X(PortalPiece, portals, portals, portals.pieces, "environment portals")                                  \
  X(float, portalCdf, portalCdf, portals.cdf, "environment portals' pick lattice")                         \
  X(Float4, portalSides, portalSides, portals.sides, "environment portals' half-spaces")

// Arrays computed from others of the list and left out of SceneContentHash: the wide BVH is built from the
// triangles (which `tris` holds) and is absent under --bvh binary, so a checkpoint resumes under either BVH; the
// portals' pick lattice is computed from the portals and the bounds with libm's atan2 and sqrt, whose last bits a
// checkpoint resumed on another machine must not depend on, and their half-spaces from the portals.
constexpr bool IsDerivedSceneArray(const char* name) {
  auto same = [](const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
  };
  return same(name, "wideNodes") || same(name, "wideTris") || same(name, "portalCdf") || same(name, "portalSides");
}

#define TRACER_SCENE_ARRAY_PLUS_ONE(T, name, dataMember, viewMember, what) +1
constexpr int kNumSceneArrays = 0 TRACER_SCENE_ARRAYS(TRACER_SCENE_ARRAY_PLUS_ONE);
#undef TRACER_SCENE_ARRAY_PLUS_ONE

struct Surface {
  Vec3 p;   // position
  Vec3 ng;  // unit geometric normal, from the winding (v1-v0) x (v2-v0)
  Vec3 ns;  // unit shading normal, flipped into ng's hemisphere
  float u, v;
  int32_t material;
  int32_t tri;   // BVH order
  float b1, b2;  // the hit's barycentrics (a mix's choice hashes them, ResolveMix)
};

template <bool kLdg>
TRACER_HD int32_t TriangleMaterial(const SceneView& s, int tri) {
  Float4 n0 = Load4<kLdg>(&s.shading[tri].n0);
  return static_cast<int32_t>(BitsFromFloat(n0.w));
}

template <bool kLdg>
TRACER_HD Surface GetSurface(const SceneView& s, const HitRecord& hit) {
  Vec3 v0, v1, v2;
  LoadTriangle<kLdg>(s.bvh.tris, hit.tri, v0, v1, v2);
  const TriShading* sh = &s.shading[hit.tri];
  Float4 n0 = Load4<kLdg>(&sh->n0), n1 = Load4<kLdg>(&sh->n1), n2 = Load4<kLdg>(&sh->n2), uv = Load4<kLdg>(&sh->uv);
  float b0 = 1.0f - hit.b1 - hit.b2;
  Surface sf;
  sf.p = v0 * b0 + v1 * hit.b1 + v2 * hit.b2;
  Vec3 c = Cross(v1 - v0, v2 - v0);
  float len = Length(c);
  sf.ng = len > 0.0f ? c / len : Vec3(0, 0, 1);
  Vec3 ns = Vec3(n0.x, n0.y, n0.z) * b0 + Vec3(n1.x, n1.y, n1.z) * hit.b1 + Vec3(n2.x, n2.y, n2.z) * hit.b2;
  float nl = Length(ns);
  ns = nl > 0.0f && isfinite(nl) ? ns / nl : sf.ng;
  sf.ns = Dot(ns, sf.ng) < 0.0f ? -ns : ns;
  sf.u = n1.w * b0 + uv.x * hit.b1 + uv.z * hit.b2;
  sf.v = n2.w * b0 + uv.y * hit.b1 + uv.w * hit.b2;
  sf.material = static_cast<int32_t>(BitsFromFloat(n0.w));
  sf.tri = hit.tri;
  sf.b1 = hit.b1;
  sf.b2 = hit.b2;
  return sf;
}

// A texture lookup on a SceneView (SampleTextureIn above).
TRACER_HD Vec3 SampleTexture(const SceneView& s, int tex, float u, float v) {
  return SampleTextureIn(s.textures, s.texels, tex, u, v);
}

// The uv of a point on triangle `tri` (BVH order) at barycentrics (b1, b2), as GetSurface interpolates it.
template <bool kLdg>
TRACER_HD void TriangleUv(const SceneView& s, int tri, float b1, float b2, float& u, float& v) {
  const TriShading* sh = &s.shading[tri];
  const Float4 n1 = Load4<kLdg>(&sh->n1), n2 = Load4<kLdg>(&sh->n2), uv = Load4<kLdg>(&sh->uv);
  const float b0 = 1.0f - b1 - b2;
  u = n1.w * b0 + uv.x * b1 + uv.z * b2;
  v = n2.w * b0 + uv.y * b1 + uv.w * b2;
}

// dp/du and dp/dv of a triangle, solved from two edges and their uv differences (Pharr, Jakob and Humphreys,
// "Physically Based Rendering", 3rd ed., section 3.6.2): bump and normal maps' frame, and an anisotropic BSDF's.
struct UvTangents {
  Vec3 dpdu, dpdv;
  bool ok;  // false where the uvs have no area
};
template <bool kLdg>
TRACER_HD UvTangents TriangleTangents(const SceneView& s, int tri) {
  Vec3 p0, p1, p2;
  LoadTriangle<kLdg>(s.bvh.tris, tri, p0, p1, p2);
  const TriShading* sh = &s.shading[tri];
  const Float4 n1 = Load4<kLdg>(&sh->n1), n2 = Load4<kLdg>(&sh->n2), uv = Load4<kLdg>(&sh->uv);
  const float du1 = uv.x - n1.w, dv1 = uv.y - n2.w, du2 = uv.z - n1.w, dv2 = uv.w - n2.w;
  const float det = du1 * dv2 - du2 * dv1;
  UvTangents g;
  g.ok = fabsf(det) > 1e-20f && isfinite(det);
  if (!g.ok) return g;
  const Vec3 e1 = p1 - p0, e2 = p2 - p0;
  g.dpdu = (e1 * dv2 - e2 * dv1) / det;
  g.dpdv = (e2 * du1 - e1 * du2) / det;
  return g;
}
// dp/du at a surface point (an anisotropic BSDF's first axis), or the zero vector without uvs.
template <bool kLdg>
TRACER_HD Vec3 SurfaceDpdu(const SceneView& s, const Surface& sf) {
  const UvTangents g = TriangleTangents<kLdg>(s, sf.tri);
  return g.ok ? g.dpdu : Vec3(0.0f);
}

// The shading frame at a surface point of normal n. An anisotropic lobe's first axis (its alpha's; alphaY's is the
// second) follows dp/du (pbrt-v4's shading frame); the principled lobe's, without uvs, runs about the vertical axis
// (y x n: for a sphere about its centre this is Blender's default tangent, radial about the object's up axis), and
// turns about n by the lobe's rotation (Cycles: anisor 1 is a full turn).
template <bool kLdg>
TRACER_HD Frame ShadingFrame(const SceneView& s, const Surface& sf, const SurfaceBsdf& b, Vec3 n) {
  if (!IsAnisotropic(b)) return Frame::FromNormal(n);
  Vec3 t = SurfaceDpdu<kLdg>(s, sf);
  if (b.lobe != kLobePrincipled) return Frame::FromNormalTangent(n, t);
  if (t.x == 0.0f && t.y == 0.0f && t.z == 0.0f) t = Vec3(n.z, 0.0f, -n.x);
  Frame f = Frame::FromNormalTangent(n, t);
  if (b.rotation != 0.0f) {
    const float c = cosf(2.0f * kPi * b.rotation), sn = sinf(2.0f * kPi * b.rotation);
    const Vec3 axis = f.s * c + f.t * sn;
    f.t = f.t * c - f.s * sn;
    f.s = axis;
  }
  return f;
}

// ---- shading normals from bump and normal maps (MTL bump/map_Bump and norm/map_Kn) ---------------------------
// The tangents come from the uvs: dp/du and dp/dv of the triangle, solved from two edges and their uv differences
// (Pharr, Jakob and Humphreys, "Physically Based Rendering", 3rd ed., section 3.6.2), projected onto the plane of the
// interpolated normal ns: T and B below.
//   Normal map: a texel (r, g, b) in [0, 1] is the normal (2r - 1, 2g - 1, 2b - 1) in the frame (T/|T|, B', ns),
//   B' = ns x T/|T| turned to dp/dv's side; with OBJ's v up that is the OpenGL convention (green points to +v).
//   Bump map: the surface is displaced along ns by the height h = bm * texel (its first channel, in scene units,
//   bm from -bm), and the normal is that of the displaced surface, (T + dh/du ns) x (B + dh/dv ns) (Blinn 1978,
//   "Simulation of wrinkled surfaces"), with dh/du and dh/dv from central differences half a texel either side.
// Uvs without area (no tangents) leave ns as it is. The result faces ns's side and stays above the geometric
// surface (the shade step bends it further where the view needs it: integrator.h, BendShadingNormal).
template <bool kLdg>
TRACER_HD Vec3 MappedNormal(const SceneView& s, const Surface& sf, Int4 bump) {
  const UvTangents g = TriangleTangents<kLdg>(s, sf.tri);
  if (!g.ok) return sf.ns;
  const Vec3 ns = sf.ns, dpdu = g.dpdu, dpdv = g.dpdv;
  const Vec3 t = dpdu - ns * Dot(ns, dpdu), b = dpdv - ns * Dot(ns, dpdv);
  Vec3 n;
  if (bump.y == kBumpNormal) {
    const float tl = Length(t);
    if (!(tl > 0.0f) || !isfinite(tl)) return sf.ns;
    const Vec3 tu = t / tl;
    Vec3 bu = Cross(ns, tu);
    if (Dot(bu, b) < 0.0f) bu = -bu;
    const Vec3 c = SampleTexture(s, bump.x, sf.u, sf.v) * 2.0f - Vec3(1.0f);
    n = tu * c.x + bu * c.y + ns * c.z;
  } else {
    const TextureInfo ti = s.textures[bump.x];
    const float du = 0.5f / (static_cast<float>(ti.width) * Fmaxf(fabsf(ti.scaleU), 1e-6f));
    const float dv = 0.5f / (static_cast<float>(ti.height) * Fmaxf(fabsf(ti.scaleV), 1e-6f));
    const float k = ti.bumpMultiplier;
    const float dhdu =
        k * (SampleTexture(s, bump.x, sf.u + du, sf.v).x - SampleTexture(s, bump.x, sf.u - du, sf.v).x) / (2.0f * du);
    const float dhdv =
        k * (SampleTexture(s, bump.x, sf.u, sf.v + dv).x - SampleTexture(s, bump.x, sf.u, sf.v - dv).x) / (2.0f * dv);
    n = Cross(t + ns * dhdu, b + ns * dhdv);
    if (Dot(n, ns) < 0.0f) n = -n;
  }
  const float len = Length(n);
  if (!(len > 0.0f) || !isfinite(len)) return sf.ns;
  n = n / len;
  // A normal at or under the geometric horizon (a broken texel, a steep bump on a slanted vn) is lifted to just
  // above it.
  const float cg = Dot(n, sf.ng);
  if (cg < 1e-3f) n = Normalize(n + sf.ng * (1e-3f - cg));
  return n;
}

// ---- mixes of two materials (pbrt-v4's "mix") --------------------------------------------------------------------
// A uniform number in [0, 1) from a hit point (triangle and barycentrics, MixBits above) and the mix's nesting level:
// the same point always makes the same choice (so the intersect step, which queues the hit by class, and the shade
// step agree), and a pixel's samples average the two materials over the surface.
TRACER_HD float MixUniform(int32_t tri, float b1, float b2, int level) {
  uint32_t h = MixBits(static_cast<uint32_t>(tri) ^ 0x9e3779b9u * static_cast<uint32_t>(level + 1));
  h = MixBits(h ^ BitsFromFloat(b1));
  h = MixBits(h ^ BitsFromFloat(b2));
  return static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
}
// The material a mix (info.x == kMixMaterial) is at a hit point: material b where the point's uniform falls below
// the amount, else a; nested mixes resolve level by level (the loader refuses chains deeper than kMaxMixDepth).
template <bool kLdg>
TRACER_HD int32_t ResolveMix(const SceneView& s, int32_t m, int32_t tri, float b1, float b2) {
  for (int level = 0; level < kMaxMixDepth; ++level) {
    const Int4 mix = Load4<kLdg>(&s.materials[m].maps);
    m = MixUniform(tri, b1, b2, level) < FloatFromBits(static_cast<uint32_t>(mix.z)) ? mix.y : mix.x;
    if (LoadRO<kLdg>(&s.materials[m].info.x) != kMixMaterial) break;
  }
  return m;
}

// A lobe's parameters beyond the class's fields (material.h's Material says where they are).
template <bool kLdg>
TRACER_HD void GetLobe(const SceneView& s, const Surface& sf, const Material* m, Int4 info, Float4 ks, SurfaceBsdf& b) {
  const Int4 extra = Load4<kLdg>(&m->maps);
  b.alphaY = FloatFromBits(static_cast<uint32_t>(extra.x));
  if (b.lobe == kLobeConductor) {
    b.k = b.ks;
    if (info.w & kMaterialReflectance) {
      // pbrt-v4's ConductorMaterial with a reflectance r: eta 1 and k = 2 sqrt(r) / sqrt(1 - r), whose Fresnel
      // at normal incidence is r.
      const Vec3 r = Min(Max(b.kd, Vec3(0.0f)), Vec3(0.9999f));
      b.k = Vec3(2.0f * sqrtf(r.x / (1.0f - r.x)), 2.0f * sqrtf(r.y / (1.0f - r.y)), 2.0f * sqrtf(r.z / (1.0f - r.z)));
      b.kd = Vec3(1.0f);
    }
  } else if (b.lobe == kLobeCoated) {
    b.coatTable = s.texels + s.textures[extra.z].offset;
    b.coat.tau = ks.x;
    b.coat.internal = ks.y;
    b.coat.escape = ks.z;
    b.coat.bounces = extra.y;
  } else if (b.lobe == kLobeDiffuseTransmission && extra.y >= 0) {
    b.ks = b.ks * SampleTexture(s, extra.y, sf.u, sf.v);
  }
}

// The principled lobe's layers (material.h's Material: layers, layerMaps, bump.z and bump.w): the metallic and sheen
// weights are map_Pm's and map_Ps's texels where there are maps; the anisotropy turns b.alpha (the layer's alpha,
// after map_Pr) into the two alphas.
template <bool kLdg>
TRACER_HD void GetPrincipled(const SceneView& s, const Surface& sf, const Material* m, SurfaceBsdf& b) {
  const Float4 layers = Load4<kLdg>(&m->layers);
  const Int4 maps = Load4<kLdg>(&m->layerMaps), bump = Load4<kLdg>(&m->bump);
  b.metallic = maps.x >= 0 ? Clamp(SampleTexture(s, maps.x, sf.u, sf.v).x, 0.0f, 1.0f) : layers.x;
  b.sheen = maps.y >= 0 ? Clamp(SampleTexture(s, maps.y, sf.u, sf.v).x, 0.0f, 1.0f) : layers.y;
  b.coatWeight = layers.z;
  b.coatAlpha = layers.w;
  const TextureInfo table = s.textures[maps.z];
  b.coatTable = s.texels + table.offset;
  b.baseRows = (table.height - 1) / kBaseTableAzimuths;
  b.rotation = FloatFromBits(static_cast<uint32_t>(bump.w));
  SetPrincipledAlphas(b, FloatFromBits(static_cast<uint32_t>(bump.z)));
}

// The BSDF at a surface point, with its emission; a bump or normal map replaces sf.ns by the mapped normal.
template <bool kLdg>
TRACER_HD SurfaceBsdf GetBsdf(const SceneView& s, Surface& sf, Vec3& emission) {
  const Material* m = &s.materials[sf.material];
  Float4 ke = Load4<kLdg>(&m->ke);
  Int4 info = Load4<kLdg>(&m->info);
  emission = Vec3(ke.x, ke.y, ke.z);
  if (info.y >= 0) emission = emission * SampleTexture(s, info.y, sf.u, sf.v);  // map_Ke
  if (info.x == kMixMaterial) {  // the emission is the mix's own; the BSDF one of its two materials'
    m = &s.materials[ResolveMix<kLdg>(s, sf.material, sf.tri, sf.b1, sf.b2)];
    ke = Load4<kLdg>(&m->ke);
    info = Load4<kLdg>(&m->info);
  }
  const Float4 kd = Load4<kLdg>(&m->kd), ks = Load4<kLdg>(&m->ks);
  SurfaceBsdf b;
  b.cls = info.x;
  b.kd = Vec3(kd.x, kd.y, kd.z);
  int tex = static_cast<int32_t>(BitsFromFloat(kd.w));
  if (tex >= 0) b.kd = b.kd * SampleTexture(s, tex, sf.u, sf.v);
  b.ks = Vec3(ks.x, ks.y, ks.z);
  b.alpha = ks.w;
  b.ior = ke.w;
  b.f90 = ke.w;
  if (info.w & kMaterialHasMaps) {
    // map_Ks: a dielectric layer's level (Blender's "Specular IOR Level", 0.5 = f0 of Ni) is the texel's mean;
    // a conductor's f0 is Ks times the texel. map_Ns: the texel is the roughness (Blender's reading).
    Int4 maps = Load4<kLdg>(&m->maps);
    if (maps.x >= 0) {
      Vec3 t = SampleTexture(s, maps.x, sf.u, sf.v);
      float scale = FloatFromBits(static_cast<uint32_t>(maps.z));
      if (scale > 0.0f) {
        float level = (t.x + t.y + t.z) * (1.0f / 3.0f);
        b.ks = Vec3(Fminf(scale * level, 1.0f));
        b.f90 = Fminf(2.0f * level, 1.0f);
      } else {
        b.ks = b.ks * t;
      }
    }
    if (maps.y >= 0) {
      float r = SampleTexture(s, maps.y, sf.u, sf.v).x;
      b.alpha = Fmaxf(r * r, kMinGlossyAlpha);
    }
  }
  b.lobe = (info.w >> kMaterialLobeShift) & kMaterialLobeMask;
  if (b.lobe == kLobePrincipled)
    GetPrincipled<kLdg>(s, sf, m, b);
  else if (b.lobe != kLobeClass)
    GetLobe<kLdg>(s, sf, m, info, ks, b);
  if (info.w & kMaterialHasBump) sf.ns = MappedNormal<kLdg>(s, sf, Load4<kLdg>(&m->bump));
  return b;
}

}  // namespace tracer
