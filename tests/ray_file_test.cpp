// @file ray_file_test.cpp: ray and hit files (host/ray_file.h): round trips, bad files, rays that cannot be
// traced, and the --trace-rays and --dump-rays commands through the tracer executable on the Cornell box.
#include "tracer/host/ray_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/core/bvh.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/trace_rays.h"

using namespace tracer;
using namespace tracer::test;

namespace {

std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }

const Scene& CornellScene() {
  static const Scene scene = LoadScene(Cornell());
  return scene;
}

// The BVH exactly as the tracer builds it (the camera plays no part in it).
SceneData CornellData(const BvhBuildOptions& bvhOptions = {}) {
  return BuildWithSceneCamera(CornellScene(), 8, 8, bvhOptions);
}

// Rays from inside the box in random directions (all hit: it is closed but for the front, and they mostly
// point elsewhere), from in front of it towards it, and some pointing away (misses); unnormalised directions.
std::vector<RayRecord> CornellRays(int n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<RayRecord> rays;
  for (int i = 0; i < n; ++i) {
    RayRecord r{};
    const int kind = i % 3;
    const float scale = 0.5f + 3.0f * u(rng);
    if (kind == 0) {
      r.o[0] = 50.0f + 450.0f * u(rng), r.o[1] = 50.0f + 450.0f * u(rng), r.o[2] = 50.0f + 450.0f * u(rng);
      for (float& d : r.d) d = scale * (2.0f * u(rng) - 1.0f);
    } else {
      r.o[0] = 278.0f, r.o[1] = 273.0f, r.o[2] = -800.0f;
      r.d[0] = scale * (u(rng) - 0.5f), r.d[1] = scale * (u(rng) - 0.5f), r.d[2] = scale * (kind == 1 ? 1.0f : -1.0f);
    }
    r.tmax = i % 7 == 0 ? 1e4f : std::numeric_limits<float>::infinity();
    r.id = static_cast<uint32_t>(i);
    rays.push_back(r);
  }
  return rays;
}

// What --trace-rays must give: the rays traced by calling the traversal directly (TraverseWide, or TraverseBvh with
// `binary`), triangles mapped back to the OBJ's numbers (hit_numbers_test.cpp tests those), misses normalised.
std::vector<HitFileRecord> DirectHits(const SceneData& data, const std::vector<RayRecord>& rays, bool anyHit,
                                      bool binary = false) {
  std::vector<HitFileRecord> out;
  const WideBvhView wide = data.wide.View();
  for (const RayRecord& rr : rays) {
    const Ray r{Vec3(rr.o[0], rr.o[1], rr.o[2]), Vec3(rr.d[0], rr.d[1], rr.d[2]), rr.tmax, static_cast<int32_t>(rr.id)};
    HitRecord h;
    if (binary)
      h = anyHit ? TraverseBvh<true, false>(data.bvh.View(), r) : TraverseBvh<false, false>(data.bvh.View(), r);
    else
      h = anyHit ? TraverseWide<true, false>(wide, r) : TraverseWide<false, false>(wide, r);
    const int64_t number = h.tri < 0 ? -1 : CornellScene().triangleNumbers.FileNumber(data.bvh.order[h.tri]);
    out.push_back(h.tri < 0 ? MissHitRecord() : HitFileRecord{h.t, h.b1, h.b2, static_cast<int32_t>(number)});
  }
  return out;
}

bool SameBytes(const HitFileRecord& a, const HitFileRecord& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string ExpectThrows(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace

TEST(RayFile, RaysAndHitsRoundTrip) {
  const std::string dir = MakeTempDir();
  const std::vector<RayRecord> rays = CornellRays(100);
  WriteRayFile(dir + "/r.bin", rays);
  EXPECT_EQ(ReadFile(dir + "/r.bin").size(), 100u * 32u);
  const std::vector<RayRecord> back = ReadRayFile(dir + "/r.bin");
  ASSERT_EQ(back.size(), rays.size());
  EXPECT_EQ(std::memcmp(back.data(), rays.data(), rays.size() * sizeof(RayRecord)), 0);
  // The layout is the documented one: seven floats then the id, little-endian.
  const std::string bytes = ReadFile(dir + "/r.bin");
  float tmax;
  uint32_t id;
  std::memcpy(&tmax, bytes.data() + 32 + 24, 4);
  std::memcpy(&id, bytes.data() + 32 + 28, 4);
  EXPECT_EQ(tmax, rays[1].tmax);
  EXPECT_EQ(id, 1u);

  std::vector<HitFileRecord> hits = {{1.5f, 0.25f, 0.5f, 3}, MissHitRecord(), {2.0f, 0.0f, 1.0f, 0}};
  WriteHitFile(dir + "/h.bin", hits);
  EXPECT_EQ(ReadFile(dir + "/h.bin").size(), 48u);
  const std::vector<HitFileRecord> hitsBack = ReadHitFile(dir + "/h.bin");
  ASSERT_EQ(hitsBack.size(), hits.size());
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_TRUE(SameBytes(hits[i], hitsBack[i])) << i;
  EXPECT_TRUE(std::isinf(hitsBack[1].t));
  EXPECT_EQ(hitsBack[1].tri, -1);
}

TEST(RayFile, BadFilesNameTheFile) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/odd.bin", std::string(33, '\0'));
  std::string e = ExpectThrows([&] { ReadRayFile(dir + "/odd.bin"); });
  EXPECT_NE(e.find(dir + "/odd.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("33 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("32-byte"), std::string::npos) << e;
  WriteFile(dir + "/empty.bin", "");
  e = ExpectThrows([&] { ReadRayFile(dir + "/empty.bin"); });
  EXPECT_NE(e.find(dir + "/empty.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
  e = ExpectThrows([&] { ReadRayFile(dir + "/missing.bin"); });
  EXPECT_NE(e.find(dir + "/missing.bin"), std::string::npos) << e;
  e = ExpectThrows([&] { ReadHitFile(dir + "/odd.bin"); });
  EXPECT_NE(e.find("16-byte"), std::string::npos) << e;
}

TEST(RayFile, UntraceableRaysAreCountedMisses) {
  const SceneData data = CornellData();
  std::vector<RayRecord> rays = CornellRays(6);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  rays[0].o[1] = nan;                                 // NaN origin
  rays[1].d[0] = rays[1].d[1] = rays[1].d[2] = 0.0f;  // zero direction
  rays[2].d[2] = inf;                                 // infinite direction
  rays[3].tmax = nan;                                 // NaN tmax
  for (int k = 0; k < 4; ++k) EXPECT_FALSE(RayRecordValid(rays[k])) << k;
  EXPECT_TRUE(RayRecordValid(rays[4]));
  const TraceRaysResult r = TraceRaysCpu(data, CornellScene().triangleNumbers, rays, TraceRaysOptions{});
  EXPECT_EQ(r.invalidCount, 4);
  ASSERT_EQ(r.hits.size(), rays.size());
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(SameBytes(r.hits[k], MissHitRecord())) << k;
  EXPECT_EQ(r.hitCount + r.missCount, 6);

  // Through the command: a warning with the count, the misses in the hit file, exit 0.
  const std::string dir = MakeTempDir();
  WriteRayFile(dir + "/r.bin", rays);
  CommandResult c = RunTracer(Cornell() + " --backend cpu --trace-rays " + dir + "/r.bin --hits " + dir + "/h.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_NE(c.output.find("warning"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("4 rays"), std::string::npos) << c.output;
  const std::vector<HitFileRecord> hits = ReadHitFile(dir + "/h.bin");
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(SameBytes(hits[k], MissHitRecord())) << k;
}

TEST(RayFile, TraceRaysCommandMatchesTraverseBvh) {
  const SceneData data = CornellData();
  const std::vector<RayRecord> rays = CornellRays(3000);
  const std::string dir = MakeTempDir();
  WriteRayFile(dir + "/r.bin", rays);
  CommandResult c = RunTracer(Cornell() + " --backend cpu --repeats 2 --trace-rays " + dir + "/r.bin --hits " + dir +
                              "/closest.bin -o " + dir + "/no-image.png");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_NE(c.output.find("rays/s"), std::string::npos) << c.output;
  EXPECT_FALSE(FileExists(dir + "/no-image.png")) << "--trace-rays writes no image";
  const std::vector<HitFileRecord> closest = ReadHitFile(dir + "/closest.bin");
  const std::vector<HitFileRecord> expected = DirectHits(data, rays, false);
  ASSERT_EQ(closest.size(), rays.size());
  int hits = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    EXPECT_TRUE(SameBytes(closest[i], expected[i])) << "ray " << i;
    hits += closest[i].tri >= 0;
  }
  EXPECT_GT(hits, 1000);
  EXPECT_LT(hits, 3000);  // the rays pointing away from the box miss
  EXPECT_NE(c.output.find("hits " + std::to_string(hits)), std::string::npos) << c.output;

  c = RunTracer(Cornell() + " --backend cpu --repeats 1 --any-hit --trace-rays " + dir + "/r.bin --hits " + dir +
                "/any.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::vector<HitFileRecord> any = ReadHitFile(dir + "/any.bin");
  const std::vector<HitFileRecord> expectedAny = DirectHits(data, rays, true);
  ASSERT_EQ(any.size(), rays.size());
  for (size_t i = 0; i < rays.size(); ++i) {
    EXPECT_EQ(any[i].tri >= 0, closest[i].tri >= 0) << "ray " << i;
    EXPECT_TRUE(SameBytes(any[i], expectedAny[i])) << "ray " << i;
    if (any[i].tri >= 0) {
      EXPECT_GE(any[i].t, closest[i].t) << "ray " << i;
    }
  }

  // --bvh binary traces the binary BVH: its any hits are TraverseBvh's (another first hit than the wide BVH's
  // for some rays), its closest hits the same.
  c = RunTracer(Cornell() + " --backend cpu --repeats 1 --bvh binary --any-hit --trace-rays " + dir + "/r.bin --hits " +
                dir + "/any-binary.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::vector<HitFileRecord> anyBinary = ReadHitFile(dir + "/any-binary.bin");
  const std::vector<HitFileRecord> expectedAnyBinary = DirectHits(data, rays, true, true);
  ASSERT_EQ(anyBinary.size(), rays.size());
  int otherFirstHit = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    EXPECT_TRUE(SameBytes(anyBinary[i], expectedAnyBinary[i])) << "ray " << i;
    otherFirstHit += !SameBytes(anyBinary[i], any[i]);
  }
  EXPECT_GT(otherFirstHit, 0) << "--bvh binary traced the wide BVH";
  const std::vector<HitFileRecord> closestBinary = DirectHits(data, rays, false, true);
  for (size_t i = 0; i < rays.size(); ++i) EXPECT_TRUE(SameBytes(closest[i], closestBinary[i])) << "ray " << i;
}

// --no-spatial-splits traces the wide BVH of object splits only: one reference per triangle, as the build line says
// (under --verbose),
// and the closest hits TraverseWide finds in that BVH. By default some of the Cornell box's triangles are split,
// and the closest hits are the same.
TEST(RayFile, NoSpatialSplitsTracesTheObjectSplitWideBvh) {
  BvhBuildOptions off;
  off.spatialSplits = false;
  const SceneData plain = CornellData(off), split = CornellData();
  ASSERT_EQ(plain.wide.tris.size(), plain.bvh.tris.size());
  ASSERT_GT(split.wide.tris.size(), plain.wide.tris.size()) << "no spatial split in the Cornell box any more";
  const std::vector<RayRecord> rays = CornellRays(2000);
  const std::string dir = MakeTempDir();
  WriteRayFile(dir + "/r.bin", rays);
  CommandResult c = RunTracer(Cornell() + " --verbose --backend cpu --repeats 1 --no-spatial-splits --trace-rays " +
                              dir + "/r.bin --hits " + dir + "/plain.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_NE(c.output.find("1.00 references/triangle"), std::string::npos) << c.output;
  const std::vector<HitFileRecord> got = ReadHitFile(dir + "/plain.bin"), expected = DirectHits(plain, rays, false);
  ASSERT_EQ(got.size(), rays.size());
  for (size_t i = 0; i < rays.size(); ++i) EXPECT_TRUE(SameBytes(got[i], expected[i])) << "ray " << i;

  c = RunTracer(Cornell() + " --backend cpu --repeats 1 --trace-rays " + dir + "/r.bin --hits " + dir + "/split.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(c.output.find("1.00 references/triangle"), std::string::npos) << c.output;
  const std::vector<HitFileRecord> splitHits = ReadHitFile(dir + "/split.bin");
  ASSERT_EQ(splitHits.size(), rays.size());
  for (size_t i = 0; i < rays.size(); ++i) EXPECT_TRUE(SameBytes(splitHits[i], got[i])) << "ray " << i;
}

TEST(RayFile, CommandErrors) {
  CommandResult help = RunTracer("--help");
  for (const char* flag : {"--trace-rays", "--hits", "--any-hit", "--dump-rays", "32-byte", "16-byte"})
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag << " missing from --help";
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/odd.bin", std::string(40, '\0'));
  CommandResult c = RunTracer(Cornell() + " --backend cpu --trace-rays " + dir + "/odd.bin");
  EXPECT_EQ(c.exitCode, 1) << c.output;
  EXPECT_NE(c.output.find(dir + "/odd.bin"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("40 bytes"), std::string::npos) << c.output;
  c = RunTracer(Cornell() + " --backend cpu --trace-rays " + dir + "/missing.bin");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  c = RunTracer(Cornell() + " --trace-rays " + dir + "/odd.bin --profile");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--trace-rays excludes"), std::string::npos) << c.output;
  c = RunTracer(Cornell() + " --hits " + dir + "/h.bin");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  c = RunTracer(Cornell() + " --backend auto --dump-rays " + dir + "/dump -o " + dir + "/x.pfm");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--dump-rays needs --backend cpu for now"), std::string::npos) << c.output;
}

// A dump leaves the image as it was, and its bounce-0 extension rays (camera rays into the box, which is closed
// but for the front the camera looks through) all hit.
TEST(RayFile, DumpRaysKeepsTheImageAndReplays) {
  const std::string dir = MakeTempDir();
  // --fov 30: the canonical 39.3 degrees sees a little past the box's open front, where camera rays miss.
  const std::string common = Cornell() + " --backend cpu --width 20 --height 16 --spp 2 --seed 5 --fov 25 -q";
  CommandResult plain = RunTracer(common + " -o " + dir + "/plain.pfm");
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  CommandResult dumped = RunTracer(common + " -o " + dir + "/dumped.pfm --dump-rays " + dir + "/rays");
  ASSERT_EQ(dumped.exitCode, 0) << dumped.output;
  EXPECT_EQ(ReadFile(dir + "/plain.pfm"), ReadFile(dir + "/dumped.pfm")) << "--dump-rays changed the image";

  ASSERT_TRUE(FileExists(dir + "/rays/bounce-0-extension.bin"));
  ASSERT_TRUE(FileExists(dir + "/rays/bounce-0-shadow.bin"));
  ASSERT_TRUE(FileExists(dir + "/rays/bounce-1-extension.bin"));
  const std::vector<RayRecord> camera = ReadRayFile(dir + "/rays/bounce-0-extension.bin");
  EXPECT_GE(camera.size(), 20u * 16u);  // the first pass has at least one sample per pixel
  for (const RayRecord& r : camera) ASSERT_LT(r.id, 20u * 16u);
  CommandResult c = RunTracer(Cornell() + " --backend cpu --repeats 1 --trace-rays " + dir +
                              "/rays/bounce-0-extension.bin --hits " + dir + "/h0.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::vector<HitFileRecord> hits = ReadHitFile(dir + "/h0.bin");
  ASSERT_EQ(hits.size(), camera.size());
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_GE(hits[i].tri, 0) << "camera ray " << i << " missed the box";
  const std::vector<HitFileRecord> expected = DirectHits(CornellData(), camera, false);
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_TRUE(SameBytes(hits[i], expected[i])) << i;

  // Shadow rays: ids are pixels, and they replay too.
  const std::vector<RayRecord> shadow = ReadRayFile(dir + "/rays/bounce-0-shadow.bin");
  for (const RayRecord& r : shadow) ASSERT_LT(r.id, 20u * 16u);
  c = RunTracer(Cornell() + " --backend cpu --repeats 1 --any-hit --trace-rays " + dir + "/rays/bounce-0-shadow.bin");
  EXPECT_EQ(c.exitCode, 0) << c.output;
}
