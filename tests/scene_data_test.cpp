// @file scene_data_test.cpp: the scene's one array list (TRACER_SCENE_ARRAYS): View() points at every array
// of it, and SceneContentHash sees every byte of every array.
#include "tracer/host/scene_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/env_map.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/tile_guide.h"

namespace tracer {
namespace {

// The many-light scene with a 2x2 texture, a 4x2 environment map, two-sided emitters, two delta lights and a portal
// quad added and light clusters built: no array of the list is empty.
SceneData FullScene() {
  Scene scene = LoadScene(test::ProjectScenesDir() + "/manylights.obj");
  Texture tex;
  tex.path = "generated";
  tex.width = tex.height = 2;
  tex.texels = {Float4{1, 0, 0, 1}, Float4{0, 1, 0, 1}, Float4{0, 0, 1, 1}, Float4{1, 1, 1, 1}};
  scene.textures.push_back(tex);
  scene.textureMaps.push_back(TextureMap{0, TextureOptions{}});
  scene.materials[0].texture = 0;
  for (HostMaterial& m : scene.materials) m.twoSided = m.IsEmissive();
  DeltaLight point{}, sun{};
  point.p = Float4{0, 1, 0, FloatFromBits(uint32_t(kPointLight))};
  point.e = Float4{1, 2, 3, 0};
  sun.p = Float4{0, 1, 0, FloatFromBits(uint32_t(kDistantLight))};
  sun.e = Float4{0.5f, 0.5f, 0.5f, 0};
  scene.deltaLights = {point, sun};
  scene.portals = {Vec3(0, 5, 0), Vec3(1, 5, 0), Vec3(1, 5, 1), Vec3(0, 5, 0), Vec3(1, 5, 1), Vec3(0, 5, 1)};
  Camera cam = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, scene.camera.fovY, 32, 32);
  SceneData d = BuildSceneData(scene, cam, Vec3(0.0f));
  BuildLightClusters(d, 8);
  EnvImage map;
  map.width = 4;
  map.height = 2;
  map.rgb = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8};
  SetEnvironmentMap(d, map, 1.0f, 0.0f);
  return d;
}

// Every pointer member of SceneView, written out here by hand on purpose (not from the list): an array given
// a pointer in SceneView but no line in the list stays null in View(), and the count below comes out short.
std::vector<const void*> AllViewPointers(const SceneView& v) {
  return {v.bvh.nodes,
          v.bvh.tris,
          v.wide.nodes,
          v.wide.tris,
          v.shading,
          v.materials,
          v.texels,
          v.textures,
          v.lightAlias,
          v.emitterTri,
          v.triEmitter,
          v.emitterTwoSided,
          v.deltaLights,
          v.deltaAlias,
          v.tiles.cdf,
          v.tiles.clusterStart,
          v.tiles.clusterAlias,
          v.tiles.emitterCluster,
          v.tiles.emitterInClusterPmf,
          v.tiles.clusterPowerPmf,
          v.env.texels,
          v.env.marginalCdf,
          v.env.conditionalCdf,
          v.portals.pieces,
          v.portals.cdf,
          v.portals.sides};
}

TEST(SceneData, ViewPointsAtEveryArrayOfTheList) {
  const SceneData d = FullScene();
  ASSERT_GT(d.clusters.Count(), 1);
  ASSERT_FALSE(d.texels.empty());
  const SceneView v = d.View();
  int listed = 0;
#define TRACER_EXPECT_POINTS(T, name, dataMember, viewMember, what) \
  ++listed;                                                         \
  EXPECT_FALSE(d.dataMember.empty()) << #dataMember;                \
  EXPECT_EQ(v.viewMember, d.dataMember.data()) << #viewMember;
  TRACER_SCENE_ARRAYS(TRACER_EXPECT_POINTS)
#undef TRACER_EXPECT_POINTS
  EXPECT_EQ(listed, kNumSceneArrays);
  // Every pointer but the tile guide's per-tile cdf (the guide fills that in, not the scene) is set, and the
  // list has exactly one entry per pointer set.
  const std::vector<const void*> all = AllViewPointers(v);
  int nonNull = 0;
  for (const void* p : all) nonNull += p != nullptr;
  EXPECT_EQ(v.tiles.cdf, nullptr);
  EXPECT_EQ(nonNull, static_cast<int>(all.size()) - 1) << "a SceneView pointer that View() leaves null";
  EXPECT_EQ(nonNull, kNumSceneArrays);
  EXPECT_EQ(v.numEmitters, static_cast<int32_t>(d.emitterTri.size()));
  EXPECT_EQ(v.portals.count, 1) << "the portal quad is one piece";
  EXPECT_FLOAT_EQ(v.portals.area, 1.0f);
  EXPECT_EQ(v.portals.sideCount, 1) << "one piece: the record that holds every origin";
  EXPECT_EQ(v.bvh.numNodes, static_cast<int32_t>(d.bvh.nodes.size()));
}

TEST(SceneData, ViewOfEmptyArraysIsNull) {
  SceneData d = FullScene();
  d.clusters = LightClusters{};  // as before BuildLightClusters
  const SceneView v = d.View();
  EXPECT_EQ(v.tiles.clusterStart, nullptr);
  EXPECT_EQ(v.tiles.clusterAlias, nullptr);
  EXPECT_EQ(v.tiles.emitterCluster, nullptr);
  EXPECT_EQ(v.tiles.emitterInClusterPmf, nullptr);
  EXPECT_EQ(v.tiles.clusterPowerPmf, nullptr);
}

// Flips one bit of byte `i` of a vector's storage.
template <typename T>
void FlipByte(std::vector<T>& v, size_t i) {
  reinterpret_cast<unsigned char*>(v.data())[i] ^= 0x10;
}

TEST(SceneData, ContentHashSeesEveryByteOfEveryArray) {
  const SceneData base = FullScene();
  const uint64_t h0 = SceneContentHash(base);
  EXPECT_EQ(SceneContentHash(base), h0);
  SceneData copy = base;
  EXPECT_EQ(SceneContentHash(copy), h0) << "a copy hashes the same";
  // What is not an array of the list does not count.
  copy.camera.eye = copy.camera.eye + Vec3(1.0f);
  copy.environment = Vec3(0.5f);
  copy.emitterPower[0] *= 2.0;
  EXPECT_EQ(SceneContentHash(copy), h0);

  int arrays = 0;
#define TRACER_EXPECT_HASHED(T, name, dataMember, viewMember, what)                             \
  {                                                                                             \
    ++arrays;                                                                                   \
    const size_t bytes = base.dataMember.size() * sizeof(T);                                    \
    ASSERT_GT(bytes, 0u) << #dataMember;                                                        \
    const bool derived = IsDerivedSceneArray(#name); /* hashed through what it derives from */  \
    for (size_t i : {size_t(0), bytes / 2, bytes - 1}) {                                        \
      SceneData changed = base;                                                                 \
      FlipByte(changed.dataMember, i);                                                          \
      EXPECT_EQ(SceneContentHash(changed) == h0, derived) << #dataMember << " byte " << i;      \
      FlipByte(changed.dataMember, i);                                                          \
      EXPECT_EQ(SceneContentHash(changed), h0) << #dataMember << " byte " << i << " restored";  \
    }                                                                                           \
    SceneData longer = base;                                                                    \
    longer.dataMember.push_back(longer.dataMember.back());                                      \
    EXPECT_EQ(SceneContentHash(longer) == h0, derived) << #dataMember << " one element longer"; \
  }
  TRACER_SCENE_ARRAYS(TRACER_EXPECT_HASHED)
#undef TRACER_EXPECT_HASHED
  EXPECT_EQ(arrays, kNumSceneArrays);
}

TEST(SceneData, ContentHashTellsWhereOneArrayEndsAndTheNextBegins) {
  // emitterTri and triEmitter are neighbours in the list and both int32: moving the last entry of one to the
  // front of the other leaves all the arrays' bytes, laid end to end, as they were; only the sizes tell.
  const SceneData base = FullScene();
  SceneData moved = base;
  moved.triEmitter.insert(moved.triEmitter.begin(), moved.emitterTri.back());
  moved.emitterTri.pop_back();
  EXPECT_NE(SceneContentHash(moved), SceneContentHash(base));
}

// A strip of n triangles over three materials (diffuse, emissive, emissive in red only), every 11th triangle of
// zero area: emitters are scattered over every piece of BuildSceneArrays, some of them never sampled.
Scene StripScene(size_t n) {
  Scene scene;
  scene.materials.resize(3);
  scene.materials[1].ke = Vec3(2.0f, 1.0f, 0.5f);
  scene.materials[2].ke = Vec3(3.0f, 0.0f, 0.0f);
  for (size_t t = 0; t < n; ++t) {
    const float x = static_cast<float>(t % 1000), z = static_cast<float>(t / 1000);
    const float h = t % 11 == 0 ? 0.0f : 1.0f + 0.001f * static_cast<float>(t % 7);
    scene.positions.insert(scene.positions.end(), {Vec3(x, 0.0f, z), Vec3(x + h, 0.0f, z), Vec3(x, 0.1f * h, z + h)});
    for (int k = 0; k < 3; ++k) scene.normals.push_back(Normalize(Vec3(0.1f * static_cast<float>(k), 1.0f, 0.0f)));
    for (int k = 0; k < 6; ++k) scene.uvs.push_back(0.25f * static_cast<float>(k) + 1e-6f * static_cast<float>(t));
    scene.triMaterial.push_back(static_cast<int32_t>(t % 5 == 0 ? 1 : t % 3 == 0 ? 2 : 0));
  }
  scene.boundsMin = Vec3(0.0f);
  scene.boundsMax = Vec3(1000.0f, 1.0f, static_cast<float>(n / 1000 + 2));
  return scene;
}

TEST(SceneData, ArraysAreTheSameBytesOnAnyNumberOfThreads) {
  const Scene scene = StripScene(150000);
  BvhBuildOptions binary;
  binary.wide = false;
  const SceneData built = BuildSceneData(scene, Camera{}, Vec3(0.0f), binary);  // every core
  auto arrays = [&](int threads) {
    SceneData d;
    d.bvh = built.bvh;
    ThreadPool pool(threads);
    BuildSceneArrays(scene, d, pool);
    return d;
  };
  const SceneData one = arrays(1), many = arrays(5);
  EXPECT_EQ(SceneContentHash(many), SceneContentHash(one));
  EXPECT_EQ(SceneContentHash(built), SceneContentHash(one));
  EXPECT_EQ(many.emitterPower, one.emitterPower);  // not part of the hash

  // Independently of the code under test: the emitters are the emissive triangles of non-zero area, in BVH order.
  std::vector<int32_t> expected;
  for (size_t k = 0; k < scene.NumTriangles(); ++k) {
    const size_t t = static_cast<size_t>(one.bvh.order[k]);
    if (scene.triMaterial[t] != 0 && t % 11 != 0) expected.push_back(static_cast<int32_t>(k));
  }
  EXPECT_EQ(many.emitterTri, expected);
  for (size_t e = 0; e < expected.size(); ++e)
    EXPECT_EQ(many.triEmitter[static_cast<size_t>(expected[e])], static_cast<int32_t>(e));
  EXPECT_EQ(std::count(many.triEmitter.begin(), many.triEmitter.end(), -1),
            static_cast<long>(scene.NumTriangles() - expected.size()));
}

// An MPI rank hashes the scene as its pieces arrive (scene_broadcast.cpp): any cut of the stream into pieces, at array
// boundaries or inside them, gives SceneContentHash; an empty array keeps its place (its size is hashed).
TEST(SceneData, HashStreamInPiecesIsTheContentHash) {
  SceneData d = FullScene();
  d.texels.clear();  // empty arrays among full ones (the hash does not care what refers to them)
  d.textures.clear();
  const uint64_t whole = SceneContentHash(d);
  size_t arrays = 0, bytes = 0;
  ForEachSceneArray(d, [&](const auto& v, bool) { ++arrays, bytes += v.size() * sizeof(v[0]); });
  EXPECT_EQ(arrays, static_cast<size_t>(kNumSceneArrays) + 2);
  for (size_t piece : {size_t(1), size_t(7), size_t(4096), size_t(100003), bytes}) {
    SceneHashStream stream(d);
    ASSERT_EQ(stream.Bytes(), bytes);
    for (size_t at = 0; at < bytes;) {
      at = std::min(bytes, at + piece);
      stream.HashUpTo(at);
      stream.HashUpTo(at);  // the same point twice hashes nothing more
      if (at < bytes) {
        EXPECT_THROW(stream.Digest(), std::logic_error);
      }
    }
    EXPECT_EQ(stream.Digest(), whole) << "pieces of " << piece << " bytes";
  }
  // What the stream reads is the scene's: a byte changed after the stream was made is seen.
  SceneHashStream changed(d);
  FlipByte(d.shading, 5);
  changed.HashUpTo(changed.Bytes());
  EXPECT_NE(changed.Digest(), whole);
}

}  // namespace
}  // namespace tracer
