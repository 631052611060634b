// @file make_rays_test.cpp: the traversal benchmark's rays (host/make_rays.h) on the Cornell box: the camera
// and its primary rays, the diffuse rays checked against hits, normals and the cosine distribution recomputed
// here, the ao rays, determinism, and the --make-rays command with its usage errors.
#include "tracer/host/make_rays.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/core/bvh.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/trace_rays.h"

using namespace tracer;
using namespace tracer::test;

namespace {

std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }

SceneData LoadData(const std::string& path) {
  const Scene scene = LoadScene(path);
  return BuildSceneData(scene, BenchmarkCamera(scene.boundsMin, scene.boundsMax, 8, 8), Vec3(0.0f));
}
SceneData CornellData() { return LoadData(Cornell()); }

// The Cornell box with every face's winding reversed. The box's faces are all wound towards its inside, where
// the camera is, so only such a copy tells whether the normal is turned to the camera's side.
SceneData ReversedCornellData() {
  const std::string dir = MakeTempDir();
  std::istringstream in(ReadFile(Cornell()));
  std::string out, line;
  int faces = 0;
  while (std::getline(in, line)) {
    if (line.rfind("f ", 0) == 0) {
      ++faces;
      std::istringstream words(line.substr(2));
      std::vector<std::string> v;
      for (std::string w; words >> w;) v.push_back(w);
      line = "f";
      for (auto it = v.rbegin(); it != v.rend(); ++it) line += " " + *it;
    }
    out += line + "\n";
  }
  EXPECT_GT(faces, 10);
  WriteFile(dir + "/cornell.obj", out);
  WriteFile(dir + "/cornell.mtl", ReadFile(ProjectScenesDir() + "/cornell.mtl"));
  return LoadData(dir + "/cornell.obj");
}

// Vectors in double, so that the expectations below do not share the generator's float arithmetic.
struct D3 {
  double x, y, z;
};
D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
D3 operator+(D3 a, D3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
D3 operator*(D3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
double Dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
D3 Cross(D3 a, D3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double Len(D3 a) { return std::sqrt(Dot(a, a)); }
D3 Unit(D3 a) { return a * (1.0 / Len(a)); }
D3 FromVec(Vec3 v) { return {v.x, v.y, v.z}; }
D3 Origin(const RayRecord& r) { return {r.o[0], r.o[1], r.o[2]}; }
D3 Dir(const RayRecord& r) { return {r.d[0], r.d[1], r.d[2]}; }
double Degrees(double radians) { return radians * 180.0 / M_PI; }
double AngleDeg(D3 a, D3 b) { return Degrees(std::acos(std::fmin(1.0, Dot(Unit(a), Unit(b))))); }

// The camera, from the bounds, computed here.
struct Expected {
  D3 eye, target, w, u, v;  // forward, right, up
  double diagonal;
};
Expected ExpectedCamera(const SceneData& data) {
  const D3 lo = FromVec(data.boundsMin), hi = FromVec(data.boundsMax), e = hi - lo;
  Expected c;
  c.eye = {lo.x + 0.85 * e.x, lo.y + 0.55 * e.y, lo.z + 0.5 * e.z};
  c.target = {lo.x + 0.15 * e.x, lo.y + 0.3 * e.y, lo.z + 0.5 * e.z};
  c.w = Unit(c.target - c.eye);
  c.u = Unit(Cross(c.w, D3{0.0, 1.0, 0.0}));
  c.v = Cross(c.u, c.w);
  c.diagonal = Len(e);
  return c;
}

bool SameBytes(const std::vector<RayRecord>& a, const std::vector<RayRecord>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(RayRecord)) == 0;
}

}  // namespace

// Odd sizes, so that pixel (W/2, H/2) is centred on the view direction; W != H, so a swapped aspect fails.
TEST(MakeRays, PrimaryRaysFollowTheBoundsCamera) {
  const SceneData data = CornellData();
  const int W = 65, H = 49;
  const std::vector<RayRecord> rays = MakeBenchmarkRays(data, RayKind::kPrimary, W, H, 1, 2);
  ASSERT_EQ(rays.size(), static_cast<size_t>(W * H));
  const Expected cam = ExpectedCamera(data);
  const double tanHalf = std::tan(30.0 * M_PI / 180.0), aspect = static_cast<double>(W) / H;
  for (int p = 0; p < W * H; ++p) {
    const RayRecord& r = rays[static_cast<size_t>(p)];
    ASSERT_EQ(r.id, static_cast<uint32_t>(p));
    ASSERT_TRUE(std::isinf(r.tmax) && r.tmax > 0.0f) << p;
    ASSERT_LT(Len(Origin(r) - cam.eye), 1e-4 * cam.diagonal) << p;
    const D3 d = Dir(r);
    ASSERT_NEAR(Len(d), 1.0, 1e-6) << p;
    // The pinhole's image plane at distance 1: pixel centres (x + 0.5, y + 0.5), row 0 at the top.
    const int x = p % W, y = p / W;
    const double sx = (2.0 * (x + 0.5) / W - 1.0) * tanHalf * aspect, sy = (1.0 - 2.0 * (y + 0.5) / H) * tanHalf;
    ASSERT_NEAR(Dot(d, cam.u) / Dot(d, cam.w), sx, 2e-6) << "pixel " << x << "," << y;
    ASSERT_NEAR(Dot(d, cam.v) / Dot(d, cam.w), sy, 2e-6) << "pixel " << x << "," << y;
  }
  auto dir = [&](int x, int y) { return Dir(rays[static_cast<size_t>(y * W + x)]); };
  // The centre pixel looks at the target.
  EXPECT_LT(AngleDeg(dir(W / 2, H / 2), cam.target - cam.eye), 1e-3);
  // Edge centres: their pixel centres lie half a pixel inside the edge, where the half-angles are 30 degrees
  // vertically and atan(aspect tan 30) horizontally.
  const double vertical = Degrees(std::atan((1.0 - 1.0 / H) * tanHalf));
  const double horizontal = Degrees(std::atan((1.0 - 1.0 / W) * tanHalf * aspect));
  EXPECT_NEAR(AngleDeg(dir(W / 2, 0), cam.w), vertical, 1e-3);
  EXPECT_NEAR(AngleDeg(dir(W / 2, H - 1), cam.w), vertical, 1e-3);
  EXPECT_NEAR(AngleDeg(dir(0, H / 2), cam.w), horizontal, 1e-3);
  EXPECT_NEAR(AngleDeg(dir(W - 1, H / 2), cam.w), horizontal, 1e-3);
  EXPECT_NEAR(Degrees(std::atan(std::tan(AngleDeg(dir(W / 2, 0), cam.w) * M_PI / 180.0) / (1.0 - 1.0 / H))), 30.0,
              1e-3);
  const double corner = Degrees(std::atan(std::hypot((1.0 - 1.0 / W) * tanHalf * aspect, (1.0 - 1.0 / H) * tanHalf)));
  for (auto [x, y] : {std::pair{0, 0}, {W - 1, 0}, {0, H - 1}, {W - 1, H - 1}})
    EXPECT_NEAR(AngleDeg(dir(x, y), cam.w), corner, 1e-3) << x << "," << y;
  // Up is +y and row 0 the top; x grows to the right.
  EXPECT_GT(dir(W / 2, 0).y, dir(W / 2, H - 1).y);
  EXPECT_LT(Dot(dir(0, H / 2), cam.u), 0.0);
  EXPECT_GT(Dot(dir(W - 1, H / 2), cam.u), 0.0);
}

namespace {

// Each diffuse ray against the primary hit recomputed here: the origin 1e-4 diagonal off the hit along the
// camera-facing geometric normal, the direction in that normal's hemisphere, cosines distributed as cos/pi.
void CheckDiffuseRays(const SceneData& data, size_t* wrongSideNormals) {
  const int W = 64, H = 48;
  const std::vector<RayRecord> primary = MakeBenchmarkRays(data, RayKind::kPrimary, W, H, 7, 0);
  const std::vector<RayRecord> diffuse = MakeBenchmarkRays(data, RayKind::kDiffuse, W, H, 7, 0);
  const Expected cam = ExpectedCamera(data);
  const double offset = 1e-4 * cam.diagonal;
  size_t j = 0, hits = 0;
  double sumCos = 0.0, sumCos2 = 0.0;
  for (const RayRecord& pr : primary) {
    const Ray ray{Vec3(pr.o[0], pr.o[1], pr.o[2]), Vec3(pr.d[0], pr.d[1], pr.d[2]), pr.tmax, 0};
    const HitRecord h = TraverseBvh<false, false>(data.bvh.View(), ray);
    if (h.tri < 0) continue;
    ++hits;
    const Float4* v = &data.bvh.tris[3 * static_cast<size_t>(h.tri)];
    const D3 v0{v[0].x, v[0].y, v[0].z}, v1{v[1].x, v[1].y, v[1].z}, v2{v[2].x, v[2].y, v[2].z};
    D3 n = Unit(Cross(v1 - v0, v2 - v0));
    if (Dot(n, Dir(pr)) > 0.0) {
      n = n * -1.0;
      ++*wrongSideNormals;
    }
    const D3 hit = Origin(pr) + Dir(pr) * h.t;
    for (uint32_t k = 0; k < 2; ++k, ++j) {
      ASSERT_LT(j, diffuse.size()) << "too few diffuse rays";
      const RayRecord& r = diffuse[j];
      ASSERT_EQ(r.id, 2 * pr.id + k) << j;
      ASSERT_TRUE(std::isinf(r.tmax) && r.tmax > 0.0f) << j;
      const D3 off = Origin(r) - hit;
      ASSERT_LT(Len(off), offset * 1.01) << "ray " << j << " starts too far from its hit";
      ASSERT_NEAR(Dot(off, n), offset, 0.01 * offset) << "ray " << j << " is not offset to the camera's side";
      const D3 d = Dir(r);
      ASSERT_NEAR(Len(d), 1.0, 1e-6) << j;
      const double c = Dot(d, n);
      ASSERT_GT(c, 0.0) << "ray " << j << " points into the surface";
      sumCos += c;
      sumCos2 += c * c;
    }
  }
  EXPECT_EQ(j, diffuse.size()) << "more diffuse rays than 2 per primary hit";
  ASSERT_GT(hits, primary.size() * 9 / 10) << "the camera should see the box";
  // Under pdf cos/pi: E[cos] = 2/3 (sd sqrt(1/18) = 0.236), E[cos^2] = 1/2 (sd sqrt(1/12) = 0.289); a uniform
  // hemisphere gives 1/2 and 1/3. With ~6000 rays one standard error is about 0.003 and 0.004; the tolerances
  // are 5 of them (the two rays of a pixel share a normal but have independent directions).
  const double n = static_cast<double>(diffuse.size());
  EXPECT_NEAR(sumCos / n, 2.0 / 3.0, 5.0 * std::sqrt(1.0 / 18.0 / n));
  EXPECT_NEAR(sumCos2 / n, 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));
}

}  // namespace

TEST(MakeRays, DiffuseRaysLeaveThePrimaryHitsCosineDistributed) {
  // Both ways round: the normal as wound, then turned (a generator that never or always turns it fails one).
  size_t turned = 0;
  {
    SCOPED_TRACE("cornell.obj");
    CheckDiffuseRays(CornellData(), &turned);
  }
  EXPECT_EQ(turned, 0u) << "the box's faces are wound towards its inside";
  turned = 0;
  {
    SCOPED_TRACE("cornell.obj with every face reversed");
    CheckDiffuseRays(ReversedCornellData(), &turned);
  }
  EXPECT_GT(turned, 64u * 48u * 9 / 10) << "every hit face should face away from the camera";
}

// RayCoherence, which picks the GPU's traversal mode for a ray file: parallel rays 1, opposite pairs 0, a camera's rays
// (in pixel order) above kCoherentRays, and the diffuse bounce's well below it.
TEST(MakeRays, CoherenceTellsCameraRaysFromDiffuseOnes) {
  std::vector<RayRecord> rays(64);
  for (size_t i = 0; i < rays.size(); ++i) rays[i] = RayRecord{{0, 0, 0}, {0.0f, 2.0f, 0.0f}, 1.0f, 0};
  EXPECT_DOUBLE_EQ(RayCoherence(rays), 1.0);
  for (size_t i = 0; i < rays.size(); i += 2) rays[i].d[1] = -1.0f;
  EXPECT_NEAR(RayCoherence(rays), 0.0, 1e-12);
  EXPECT_EQ(RayCoherence(std::vector<RayRecord>(31)), 0.0);  // (no whole warp)
  const SceneData data = CornellData();
  const double camera = RayCoherence(MakeBenchmarkRays(data, RayKind::kPrimary, 320, 240, 1, 0));
  const double diffuse = RayCoherence(MakeBenchmarkRays(data, RayKind::kDiffuse, 320, 240, 1, 0));
  EXPECT_GT(camera, kCoherentRays);
  EXPECT_GT(camera, 0.99);
  // Cosine-distributed rays about one normal average to 2/3 of it (the mean of cos theta), so a box's diffuse rays,
  // 32 in a row from a few neighbouring pixels on the same wall, come near 0.67: below kCoherentRays with room.
  EXPECT_LT(diffuse, 0.75);
  EXPECT_GT(diffuse, 0.5);
}

TEST(MakeRays, AoRaysAreTheDiffuseRaysWithAShortTmax) {
  const SceneData data = CornellData();
  const std::vector<RayRecord> diffuse = MakeBenchmarkRays(data, RayKind::kDiffuse, 40, 30, 3, 0);
  const std::vector<RayRecord> ao = MakeBenchmarkRays(data, RayKind::kAo, 40, 30, 3, 0);
  ASSERT_EQ(ao.size(), diffuse.size());
  ASSERT_FALSE(ao.empty());
  const double tmax = 0.1 * ExpectedCamera(data).diagonal;
  for (size_t i = 0; i < ao.size(); ++i) {
    ASSERT_NEAR(ao[i].tmax, tmax, 1e-6 * tmax) << i;
    RayRecord a = ao[i];
    a.tmax = diffuse[i].tmax;
    ASSERT_EQ(std::memcmp(&a, &diffuse[i], sizeof a), 0) << "ao ray " << i << " differs from the diffuse ray";
  }
}

TEST(MakeRays, TheSeedAloneDecidesTheDirections) {
  const SceneData data = CornellData();
  const std::vector<RayRecord> a = MakeBenchmarkRays(data, RayKind::kDiffuse, 32, 24, 11, 1);
  EXPECT_TRUE(SameBytes(a, MakeBenchmarkRays(data, RayKind::kDiffuse, 32, 24, 11, 4))) << "depends on threads";
  EXPECT_TRUE(SameBytes(a, MakeBenchmarkRays(data, RayKind::kDiffuse, 32, 24, 11, 0)));
  const std::vector<RayRecord> b = MakeBenchmarkRays(data, RayKind::kDiffuse, 32, 24, 12, 0);
  ASSERT_EQ(a.size(), b.size());  // the same hits
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += std::memcmp(a[i].d, b[i].d, sizeof a[i].d) == 0;
  EXPECT_EQ(same, 0u) << "another seed should change every direction";
  // The primary rays have no randomness.
  EXPECT_TRUE(SameBytes(MakeBenchmarkRays(data, RayKind::kPrimary, 32, 24, 11, 0),
                        MakeBenchmarkRays(data, RayKind::kPrimary, 32, 24, 12, 0)));
}

TEST(MakeRays, CommandWritesTheRaysAndTheyReplay) {
  const SceneData data = CornellData();
  const std::string dir = MakeTempDir();
  const std::string common = Cornell() + " --width 64 --height 48 --seed 7 --threads 2";
  for (RayKind kind : {RayKind::kPrimary, RayKind::kDiffuse, RayKind::kAo}) {
    const std::string name = RayKindName(kind), file = dir + "/" + name + ".bin";
    CommandResult c = RunTracer(common + " --make-rays " + name + " " + file + " -o " + dir + "/no-image.png");
    ASSERT_EQ(c.exitCode, 0) << c.output;
    const std::vector<RayRecord> rays = ReadRayFile(file);
    EXPECT_TRUE(SameBytes(rays, MakeBenchmarkRays(data, kind, 64, 48, 7, 0))) << name;
    EXPECT_NE(c.output.find("wrote " + std::to_string(rays.size()) + " " + name + " rays"), std::string::npos)
        << c.output;
    EXPECT_NE(c.output.find("camera 64x48"), std::string::npos) << c.output;
    EXPECT_FALSE(FileExists(dir + "/no-image.png")) << "--make-rays renders nothing";
  }
  EXPECT_EQ(ReadRayFile(dir + "/primary.bin").size(), 64u * 48u);
  // The replays docs/PERFORMANCE.md shows.
  CommandResult c = RunTracer(Cornell() + " --backend cpu --repeats 1 --trace-rays " + dir + "/primary.bin");
  EXPECT_EQ(c.exitCode, 0) << c.output;
  c = RunTracer(Cornell() + " --backend cpu --repeats 1 --trace-rays " + dir + "/ao.bin --any-hit");
  EXPECT_EQ(c.exitCode, 0) << c.output;
  // The benchmark's default size, 1920x1080.
  c = RunTracer(Cornell() + " --make-rays=primary " + dir + "/big.bin -q");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(ReadFile(dir + "/big.bin").size(), 1920u * 1080u * 32u);
  EXPECT_NE(c.output.find("camera 1920x1080"), std::string::npos) << c.output;
}

// --eye/--look-at (with --up and --fov) place the camera instead of the bounds: rays from inside a room (here the
// Cornell box, whose benchmark camera looks in through its open side). The file holds MakeBenchmarkRays' rays for that
// view: origins at the eye, the centre pixel along the view direction; --fov alone changes the benchmark camera's angle
// only.
TEST(MakeRays, CameraFlagsPlaceTheCamera) {
  const SceneData data = CornellData();
  const std::string dir = MakeTempDir();
  const BenchmarkView inside{Vec3(278.0f, 273.0f, 100.0f), Vec3(278.0f, 273.0f, 500.0f), Vec3(0.0f, 1.0f, 0.0f), 50.0f};
  const std::string common = Cornell() + " --width 33 --height 25 --seed 5 --threads 2";
  CommandResult c =
      RunTracer(common + " --eye 278,273,100 --look-at 278,273,500 --fov 50 --make-rays diffuse " + dir + "/d.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_NE(c.output.find("eye (278, 273, 100), target (278, 273, 500)"), std::string::npos) << c.output;
  const std::vector<RayRecord> diffuse = ReadRayFile(dir + "/d.bin");
  EXPECT_TRUE(SameBytes(diffuse, MakeBenchmarkRays(data, RayKind::kDiffuse, 33, 25, 5, 0, &inside)));
  EXPECT_FALSE(SameBytes(diffuse, MakeBenchmarkRays(data, RayKind::kDiffuse, 33, 25, 5, 0)));
  c = RunTracer(common + " --eye 278,273,100 --look-at 278,273,500 --fov 50 --make-rays primary " + dir + "/p.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  const std::vector<RayRecord> primary = ReadRayFile(dir + "/p.bin");
  ASSERT_EQ(primary.size(), 33u * 25u);
  const RayRecord& centre = primary[12 * 33 + 16];
  EXPECT_LT(Len(Origin(centre) - D3{278.0, 273.0, 100.0}), 1e-3);
  EXPECT_NEAR(Dir(centre).z, 1.0, 1e-6);
  c = RunTracer(common + " --fov 30 --make-rays primary " + dir + "/f.bin");
  ASSERT_EQ(c.exitCode, 0) << c.output;
  BenchmarkView narrow = BenchmarkViewOf(data.boundsMin, data.boundsMax);
  narrow.fovY = 30.0f;
  EXPECT_TRUE(
      SameBytes(ReadRayFile(dir + "/f.bin"), MakeBenchmarkRays(data, RayKind::kPrimary, 33, 25, 5, 0, &narrow)));
  EXPECT_NE(c.output.find("vertical fov 30"), std::string::npos) << c.output;
}

TEST(MakeRays, UsageErrorsNameTheFlagAndWriteNothing) {
  const std::string dir = MakeTempDir(), out = dir + "/r.bin";
  CommandResult c = RunTracer(Cornell() + " --make-rays bogus " + out);
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("tracer: usage error: --make-rays: unknown KIND 'bogus'"), std::string::npos) << c.output;
  c = RunTracer(Cornell() + " --make-rays bogus");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--make-rays"), std::string::npos) << c.output;
  c = RunTracer(Cornell() + " --make-rays primary --width 8");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--make-rays primary: FILE is missing"), std::string::npos) << c.output;
  c = RunTracer(Cornell() + " --make-rays");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--make-rays expects KIND FILE"), std::string::npos) << c.output;
  const std::string existing = Cornell();  // --resume and --trace-rays want a file that exists
  for (const std::string& other : {"--trace-rays " + existing, std::string("--profile"), std::string("--benchmark"),
                                   "--checkpoint " + dir + "/c.ckpt", "--resume " + existing,
                                   "--dump-rays " + dir + "/dump", "--make-rays ao " + out}) {
    c = RunTracer(Cornell() + " --make-rays primary " + out + " " + other);
    EXPECT_EQ(c.exitCode, 2) << other << "\n" << c.output;
    EXPECT_NE(c.output.find("--make-rays"), std::string::npos) << other << "\n" << c.output;
  }
  for (const char* bad : {"--width 0", "--height -4", "--width 100000", "--aperture 0.1", "--focus-distance 2",
                          "--eye 1,2,3", "--any-hit", "--hits h.bin"})
    EXPECT_EQ(RunTracer(Cornell() + " --make-rays primary " + out + " " + bad).exitCode, 2) << bad;
  c = RunTracer(Cornell() + " --make-rays primary " + dir + "/no/such/folder/r.bin");
  EXPECT_EQ(c.exitCode, 2) << c.output;
  EXPECT_NE(c.output.find("--make-rays " + dir + "/no/such/folder/r.bin"), std::string::npos) << c.output;
  EXPECT_FALSE(FileExists(out));
}
