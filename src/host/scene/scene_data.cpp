// @file scene_data.cpp: turns a loaded Scene into the flat, BVH-ordered arrays that rendering reads.
#include "tracer/host/scene_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "tracer/core/light.h"
#include "tracer/host/bvh_build.h"
#include "tracer/host/checkpoint.h"  // Hasher
#include "tracer/host/env_map.h"
#include "tracer/host/huge_pages.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"
#include "tracer/host/wide_bvh_build.h"

namespace tracer {

std::vector<AliasEntry> BuildAliasTable(const std::vector<double>& weights) {
  const size_t n = weights.size();
  std::vector<AliasEntry> table(n);
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (n == 0 || !(total > 0.0)) throw std::invalid_argument("alias table needs a positive total weight");
  // Vose's method: split bins into those below and above the average, and pair them up.
  std::vector<double> scaled(n);
  std::vector<size_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] / total * static_cast<double>(n);
    table[i].pmf = static_cast<float>(weights[i] / total);
    table[i].alias = static_cast<int32_t>(i);
    table[i].pad = 0.0f;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    size_t s = small.back(), l = large.back();
    small.pop_back();
    table[s].prob = static_cast<float>(scaled[s]);
    table[s].alias = static_cast<int32_t>(l);
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (size_t i : large) table[i].prob = 1.0f;
  for (size_t i : small) table[i].prob = 1.0f;  // only left over through rounding
  return table;
}

static Float4 F4(Vec3 v, float w) { return Float4{v.x, v.y, v.z, w}; }

static int32_t IntBits(float f) { return static_cast<int32_t>(BitsFromFloat(f)); }

// A HostMaterial in the device layout (core/material.h's Material).
static Material PackMaterial(const HostMaterial& m) {
  Material g;
  g.kd = F4(m.kd, FloatFromBits(static_cast<uint32_t>(m.texture)));
  g.ks = F4(m.ks, m.alpha);
  g.ke = F4(m.ke, m.cls == kGlossy && m.lobe != kLobeCoated ? m.f90 : m.ior);
  const bool maps = m.cls == kGlossy && (m.specularTexture >= 0 || m.roughnessTexture >= 0);
  const bool cutout = m.opacity < 1.0f || m.opacityTexture >= 0;
  const bool bump = m.bumpTexture >= 0;
  g.info = Int4{static_cast<int32_t>(m.cls), m.emissionTexture, IntBits(m.opacity),
                (maps ? kMaterialHasMaps : 0) | (cutout ? kMaterialCutout : 0) | (bump ? kMaterialHasBump : 0)};
  g.maps = Int4{m.specularTexture, m.roughnessTexture, IntBits(m.specularScale), m.opacityTexture};
  g.bump = Int4{m.bumpTexture, m.bumpIsNormalMap ? kBumpNormal : kBumpHeight, 0, 0};
  g.layers = Float4{m.metallic, m.sheen, m.coatWeight, m.coatAlpha};
  g.layerMaps = Int4{m.metallicTexture, m.sheenTexture, m.layerTable, 0};
  if (m.mix) {
    g.info.x = kMixMaterial;
    g.maps = Int4{m.mixA, m.mixB, IntBits(m.mixAmount), m.opacityTexture};
  } else if (m.lobe == kLobePrincipled) {
    g.info.w |= m.lobe << kMaterialLobeShift;
    g.bump.z = IntBits(AnisotropyAspect(m.anisotropy));
    g.bump.w = IntBits(m.anisotropyRotation);
  } else if (m.lobe != kLobeClass) {
    g.info.w |= (m.lobe << kMaterialLobeShift) | (m.conductorReflectance ? kMaterialReflectance : 0);
    if (m.lobe == kLobeCoated) g.ks = Float4{m.coat.tau, m.coat.internal, m.coat.escape, m.alpha};
    const int32_t param = m.lobe == kLobeCoated ? m.coat.bounces : m.transmittanceTexture;
    g.maps = Int4{IntBits(m.alphaY), param, m.coatTable, m.opacityTexture};
  }
  return g;
}

void BuildSceneArrays(const Scene& scene, SceneData& d, ThreadPool& pool) {
  const size_t n = scene.NumTriangles();
  ResizeOnHugePages(d.shading, n);
  ResizeOnHugePages(d.triEmitter, n);  // every entry is written below
  // Each piece of BVH positions writes its shading and lists its emitters; joined in piece order, the lists number
  // the emitters in BVH order, as one thread does.
  struct Emitter {
    int32_t k;
    double power;
    bool twoSided;
  };
  const size_t pieces = pool.PiecesFor(n, size_t(1) << 14);
  std::vector<std::vector<Emitter>> emitters(pieces);
  // An emitter's luminance: Ke's, times its map_Ke texture's mean (after -mm) where it has one, so that light
  // selection by power sees what the texture lets out on average.
  std::vector<double> emittedLuminance(scene.materials.size(), 0.0);
  for (size_t i = 0; i < scene.materials.size(); ++i) {
    const HostMaterial& m = scene.materials[i];
    emittedLuminance[i] = Luminance(m.ke);
    if (m.emissionTexture < 0) continue;
    const TextureMap& map = scene.textureMaps[static_cast<size_t>(m.emissionTexture)];
    const std::array<double, 3> m3 = MeanTexel(scene.textures[static_cast<size_t>(map.texture)]);
    const Vec3 mean(static_cast<float>(m3[0]), static_cast<float>(m3[1]), static_cast<float>(m3[2]));
    emittedLuminance[i] = Luminance(m.ke * (Vec3(map.options.base) + mean * map.options.gain));
  }
  pool.ParallelForEach(pieces, [&](size_t piece) {
    for (size_t k = n * piece / pieces; k < n * (piece + 1) / pieces; ++k) {
      const size_t t = static_cast<size_t>(d.bvh.order[k]);
      const Vec3* nn = &scene.normals[3 * t];
      const float* uv = &scene.uvs[6 * t];
      const int32_t mat = scene.triMaterial[t];
      d.shading[k] = TriShading{F4(nn[0], FloatFromBits(static_cast<uint32_t>(mat))), F4(nn[1], uv[0]),
                                F4(nn[2], uv[1]), Float4{uv[2], uv[3], uv[4], uv[5]}};
      d.triEmitter[k] = -1;
      const HostMaterial& m = scene.materials[static_cast<size_t>(mat)];
      if (m.IsEmissive()) {
        const Vec3* p = &scene.positions[3 * t];
        double area = TriangleArea(p[0], p[1], p[2]);
        // pi L A leaves each emitting side (pbrt-v4's DiffuseAreaLight::Phi).
        double pw = emittedLuminance[static_cast<size_t>(mat)] * area * kPi * (m.twoSided ? 2.0 : 1.0);
        if (area > 0.0 && pw > 0.0)  // zero-area or black emitters are never sampled
          emitters[piece].push_back(Emitter{static_cast<int32_t>(k), pw, m.twoSided});
      }
    }
  });
  std::vector<double> power;
  std::vector<uint8_t> twoSided;
  for (const std::vector<Emitter>& list : emitters)
    for (const Emitter& e : list) {
      d.triEmitter[static_cast<size_t>(e.k)] = static_cast<int32_t>(d.emitterTri.size());
      d.emitterTri.push_back(e.k);
      power.push_back(e.power);
      twoSided.push_back(e.twoSided ? 1 : 0);
    }
  d.emitterPower = power;
  // Left empty (a null pointer to the per-ray code, which then reads nothing) when every emitter is one-sided.
  if (std::find(twoSided.begin(), twoSided.end(), uint8_t(1)) != twoSided.end()) d.emitterTwoSided = twoSided;
  if (!power.empty()) d.lightAlias = BuildAliasTable(power);

  for (const HostMaterial& m : scene.materials) d.materials.push_back(PackMaterial(m));
  // Each image's texels once; a TextureInfo per map (image and options) points at them.
  std::vector<int32_t> imageOffset;
  for (const Texture& t : scene.textures) {
    imageOffset.push_back(static_cast<int32_t>(d.texels.size()));
    d.texels.insert(d.texels.end(), t.texels.begin(), t.texels.end());
  }
  for (const TextureMap& map : scene.textureMaps) {
    const Texture& t = scene.textures[static_cast<size_t>(map.texture)];
    const TextureOptions& o = map.options;
    d.textures.push_back(TextureInfo{imageOffset[static_cast<size_t>(map.texture)], t.width, t.height, o.clamp ? 1 : 0,
                                     o.scale[0], o.scale[1], o.offset[0], o.offset[1], o.base, o.gain, o.bumpMultiplier,
                                     0.0f});
  }
}

SceneData BuildSceneData(const Scene& scene, const Camera& camera, Vec3 environment,
                         const BvhBuildOptions& bvhOptions) {
  SceneData d;
  if (bvhOptions.builder) {
    d.bvhReport = bvhOptions.builder(scene.positions, bvhOptions, d.bvh, d.wide);
  } else {
    const Stopwatch clock;
    d.bvh = BuildBvh(scene.positions, bvhOptions);
    if (bvhOptions.wide) d.wide = BuildWideBvh(scene.positions, d.bvh, bvhOptions);
    d.bvhReport.buildMs = clock.Ms();
  }
  d.boundsMin = scene.boundsMin;
  d.boundsMax = scene.boundsMax;
  d.camera = camera;
  d.environment = environment;
  const Stopwatch arraysClock;

  ThreadPool pool(ThreadPool::ThreadsFor(0));
  BuildSceneArrays(scene, d, pool);
  BuildDeltaLights(scene, d);
  d.portals = BuildPortals(scene.portals);
  d.portalCdf = BuildPortalLattice(d.portals, d.boundsMin, d.boundsMax, pool);
  d.portalSides = BuildPortalSides(d.portals);
  UpdateEnvironmentShare(d);
  d.arraysSeconds = arraysClock.Seconds();
  return d;
}

void PermuteEmitters(SceneData& d, const std::vector<int32_t>& newOrder) {
  std::vector<int32_t> tri(newOrder.size());
  std::vector<double> power(newOrder.size());
  std::vector<uint8_t> twoSided(d.emitterTwoSided.empty() ? 0 : newOrder.size());
  for (size_t i = 0; i < newOrder.size(); ++i) {
    tri[i] = d.emitterTri[static_cast<size_t>(newOrder[i])];
    power[i] = d.emitterPower[static_cast<size_t>(newOrder[i])];
    if (!twoSided.empty()) twoSided[i] = d.emitterTwoSided[static_cast<size_t>(newOrder[i])];
    d.triEmitter[static_cast<size_t>(tri[i])] = static_cast<int32_t>(i);
  }
  d.emitterTri = tri;
  d.emitterPower = power;
  d.emitterTwoSided = twoSided;
  d.lightAlias = BuildAliasTable(power);
}

double SceneRadius(const SceneData& d) { return 0.5 * static_cast<double>(Length(d.boundsMax - d.boundsMin)); }

double DeltaLightPower(const DeltaLight& light, double sceneRadius) {
  const double e = Luminance(Vec3(light.e.x, light.e.y, light.e.z));
  switch (static_cast<int32_t>(BitsFromFloat(light.p.w))) {
    case kPointLight:
      return 4.0 * kPi * e;
    case kSpotLight:
      return 2.0 * kPi * e * (1.0 - 0.5 * (double(light.frame[1].w) + double(light.frame[0].w)));
    case kDistantLight:
      return kPi * sceneRadius * sceneRadius * e;
    default:
      return 0.0;
  }
}

void BuildDeltaLights(const Scene& scene, SceneData& d) {
  d.deltaLights.clear();
  d.deltaAlias.clear();
  std::vector<double> power;
  const double radius = SceneRadius(d);
  for (const DeltaLight& light : scene.deltaLights) {
    const double p = DeltaLightPower(light, radius);
    if (!(p > 0.0) || !std::isfinite(p)) continue;  // lights nothing (or a broken record): never picked
    d.deltaLights.push_back(light);
    power.push_back(p);
  }
  if (!power.empty()) d.deltaAlias = BuildAliasTable(power);
}

// Each column of TRACER_SCENE_ARRAYS names members of the types it says, so a wrong entry fails here
// rather than as a mismatched pointer at run time.
#define TRACER_CHECK_SCENE_ARRAY(T, name, dataMember, viewMember, what)                                     \
  static_assert(std::is_same<decltype(std::declval<const SceneData&>().dataMember), std::vector<T>>::value, \
                "SceneData::" #dataMember " is not a std::vector<" #T ">");                                 \
  static_assert(std::is_same<decltype(std::declval<const SceneView&>().viewMember), const T*>::value,       \
                "SceneView::" #viewMember " is not a const " #T "*");
TRACER_SCENE_ARRAYS(TRACER_CHECK_SCENE_ARRAY)
#undef TRACER_CHECK_SCENE_ARRAY

// Null for an empty array, as a DeviceBuffer of none is, so host and device views agree.
template <typename T>
static const T* DataOrNull(const std::vector<T>& v) {
  return v.empty() ? nullptr : v.data();
}

SceneView SceneData::View() const {
  SceneView v{};
  v.bvh = bvh.View();  // the counts; the pointers come from the list below
  v.numEmitters = static_cast<int32_t>(emitterTri.size());
  v.numDeltaLights = static_cast<int32_t>(deltaLights.size());
  v.deltaShare = deltaShare;
  v.camera = camera;
  v.environment = environment;
  v.env.p = env.params;
  v.portals.count = static_cast<int32_t>(portals.size());
  v.portals.area = static_cast<float>(PortalArea(portals));
  v.portals.sideCount = static_cast<int32_t>(portalSides.size());
  v.portals.lattice = PortalLatticeFor(boundsMin, boundsMax, portals.size());
  v.tiles = TileGuideView{};
  v.offsetFloor = RayOffsetFloor(boundsMin, boundsMax);
  v.cutouts = std::any_of(materials.begin(), materials.end(),
                          [](const Material& m) { return (m.info.w & kMaterialCutout) != 0; })
                  ? 1
                  : 0;
  // A mix's class is one of its two materials', which the list holds too.
  int32_t present = 0;
  for (const Material& m : materials)
    if (m.info.x >= 0 && m.info.x < kNumMaterialClasses) present |= 1 << m.info.x;
  v.absentClasses = ~present & ((1 << kNumMaterialClasses) - 1);
#define TRACER_POINT_VIEW(T, name, dataMember, viewMember, what) v.viewMember = DataOrNull(dataMember);
  TRACER_SCENE_ARRAYS(TRACER_POINT_VIEW)
#undef TRACER_POINT_VIEW
  return v;
}

void RequireBvh(const SceneData& d, bool binaryBvh) { RequireBvh(!d.wide.nodes.empty(), binaryBvh); }

void RequireBvh(bool wideBuilt, bool binaryBvh) {
  if (!binaryBvh && !wideBuilt)
    throw std::invalid_argument("the wide BVH was not built (BvhBuildOptions::wide is off): use the binary BVH");
}

double BvhBytesPerTriangle(const SceneData& d, bool wide) {
  const size_t bytes = wide ? d.wide.nodes.size() * sizeof(WideNode) + d.wide.tris.size() * sizeof(Float4)
                            : d.bvh.nodes.size() * sizeof(BvhNode) + d.bvh.tris.size() * sizeof(Float4);
  return static_cast<double>(bytes) / static_cast<double>(std::max<size_t>(d.bvh.order.size(), 1));
}

double WideReferencesPerTriangle(const SceneData& d) {
  return static_cast<double>(d.wide.tris.size() / 3) / static_cast<double>(std::max<size_t>(d.bvh.order.size(), 1));
}

std::string DescribeBvhs(const SceneData& d) {
  char text[256];
  int n = std::snprintf(text, sizeof text, "binary BVH: %zu nodes, depth %d, %.0f bytes/triangle", d.bvh.nodes.size(),
                        d.bvh.depth, BvhBytesPerTriangle(d, false));
  // References: the wide BVH's leaf entries, more than the triangles where spatial splits put one in several leaves.
  if (!d.wide.nodes.empty())
    std::snprintf(text + n, sizeof text - static_cast<size_t>(n),
                  "; wide BVH: %zu nodes, depth %d, %.0f bytes/triangle, %.2f references/triangle, SAH cost %.2f",
                  d.wide.nodes.size(), d.wide.depth, BvhBytesPerTriangle(d, true), WideReferencesPerTriangle(d),
                  WideSahCost(d.wide));
  return text;
}

uint64_t SceneContentHash(const SceneData& d) {
  SceneHashStream stream(d);
  stream.HashUpTo(stream.Bytes());
  return stream.Digest();
}

uint64_t SceneLayoutHash() {
  Hasher h;
  auto add = [&h](const char* name, size_t elementBytes) {
    h.Update(name, std::strlen(name) + 1);
    const uint64_t bytes = elementBytes;
    h.Update(&bytes, sizeof bytes);
  };
#define TRACER_LAYOUT_ARRAY(T, name, dataMember, viewMember, what) add(#name, sizeof(T));
  TRACER_SCENE_ARRAYS(TRACER_LAYOUT_ARRAY)
#undef TRACER_LAYOUT_ARRAY
  return h.Digest();
}

SceneHashStream::SceneHashStream(const SceneData& data) {
  ForEachSceneArray(data, [this](const auto& v, bool hashed) {
    parts_.push_back(Part{reinterpret_cast<const unsigned char*>(v.data()), v.size() * sizeof(v[0]), hashed});
    bytes_ += parts_.back().bytes;
  });
}

void SceneHashStream::HashUpTo(size_t streamBytes) {
  for (; part_ < parts_.size(); start_ += parts_[part_].bytes, ++part_, offset_ = 0) {
    const Part& p = parts_[part_];
    const size_t at = start_ + offset_, n = std::min(p.bytes - offset_, streamBytes > at ? streamBytes - at : 0);
    // The byte count before each hashed array's bytes, so moving bytes from one array to the next changes the
    // hash: once, with the first of them (or at once for an empty array).
    if (p.hashed && offset_ == 0 && (n > 0 || p.bytes == 0)) {
      const uint64_t bytes = p.bytes;
      hasher_.Update(&bytes, sizeof bytes);
    }
    if (p.hashed && n > 0) hasher_.Update(p.data + offset_, n);
    offset_ += n;
    if (offset_ < p.bytes) return;
  }
}

uint64_t SceneHashStream::Digest() const {
  if (part_ < parts_.size()) throw std::logic_error("SceneHashStream: the scene's bytes were not all hashed");
  return hasher_.Digest();
}

}  // namespace tracer
