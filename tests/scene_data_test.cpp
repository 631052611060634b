// @file scene_data_test.cpp: the scene's one array list (TRACER_SCENE_ARRAYS): View() points at every array
// of it, and SceneContentHash sees every byte of every array.
#include "tracer/host/scene_data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/tile_guide.h"

namespace tracer {
namespace {

// The many-light scene with a 2x2 texture added and light clusters built: no array of the list is empty.
SceneData FullScene() {
  Scene scene = LoadScene(test::ProjectScenesDir() + "/manylights.obj");
  Texture tex;
  tex.path = "generated";
  tex.width = tex.height = 2;
  tex.texels = {Float4{1, 0, 0, 1}, Float4{0, 1, 0, 1}, Float4{0, 0, 1, 1}, Float4{1, 1, 1, 1}};
  scene.textures.push_back(tex);
  scene.materials[0].texture = 0;
  Camera cam = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, scene.camera.fovY, 32, 32);
  SceneData d = BuildSceneData(scene, cam, Vec3(0.0f));
  BuildLightClusters(d, 8);
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
          v.tiles.cdf,
          v.tiles.clusterStart,
          v.tiles.clusterAlias,
          v.tiles.emitterCluster,
          v.tiles.emitterInClusterPmf,
          v.tiles.clusterPowerPmf};
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

}  // namespace
}  // namespace tracer
