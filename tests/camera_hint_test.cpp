// @file camera_hint_test.cpp: the camera the tracer suggests when the user's sees back faces is probed first: it sees
// front faces from outside every object, and rendering with it gives a lit image and no second warning. Also what it
// says when an environment cannot reach a closed room.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "test_util.h"

namespace tracer::test {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An axis-aligned box's 12 triangles, facing out (a solid) or in (a room), its 8 corners numbered from `first`.
std::string Box(Vec3 lo, Vec3 hi, bool facingIn, int first) {
  std::ostringstream out;
  for (int i = 0; i < 8; ++i)
    out << "v " << (i & 1 ? hi.x : lo.x) << " " << (i & 2 ? hi.y : lo.y) << " " << (i & 4 ? hi.z : lo.z) << "\n";
  // Each face's corners counter-clockwise seen from outside.
  const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}};
  for (const auto& f : faces) {
    int a = f[0] + first, b = f[1] + first, c = f[2] + first, d = f[3] + first;
    if (facingIn) std::swap(b, d);
    out << "f " << a << " " << b << " " << c << "\nf " << a << " " << c << " " << d << "\n";
  }
  return out.str();
}

// A closed room (8 x 6 x 8, centred on the origin, facing in) with a lamp under its ceiling and, when `object`, a
// closed box (2 x 2 x 2, facing out) at its centre: a Blender room with a Suzanne at the origin.
std::string WriteRoom(const std::string& dir, bool object) {
  WriteFile(dir + "/room.mtl", "newmtl wall\nKd 0.7 0.7 0.7\nnewmtl thing\nKd 0.8 0.3 0.2\nnewmtl lamp\nKe 8 8 8\n");
  std::string obj = "mtllib room.mtl\nusemtl wall\n" + Box(Vec3(-4, -3, -4), Vec3(4, 3, 4), true, 1);
  if (object) obj += "usemtl thing\n" + Box(Vec3(-1, -1, -1), Vec3(1, 1, 1), false, 9);
  const int lamp = object ? 17 : 9;
  obj += "usemtl lamp\nv -1 2.9 -1\nv 1 2.9 -1\nv 1 2.9 1\nv -1 2.9 1\n";
  obj += "f " + std::to_string(lamp) + " " + std::to_string(lamp + 1) + " " + std::to_string(lamp + 2) + "\nf " +
         std::to_string(lamp) + " " + std::to_string(lamp + 2) + " " + std::to_string(lamp + 3) + "\n";
  WriteFile(dir + "/room.obj", obj);
  return dir + "/room.obj";
}

struct Suggestion {
  Vec3 eye, lookAt;
  std::string flags;
};

// The camera the back-face warning suggests, if it suggests one.
bool SuggestedCamera(const std::string& output, Suggestion* s) {
  const std::regex re(
      "see the back of a triangle.*A camera that sees front faces from outside every object: "
      "(--eye ([-0-9.e]+),([-0-9.e]+),([-0-9.e]+) --look-at ([-0-9.e]+),([-0-9.e]+),([-0-9.e]+))");
  std::smatch m;
  if (!std::regex_search(output, m, re)) return false;
  s->flags = m[1];
  s->eye = Vec3(std::stof(m[2]), std::stof(m[3]), std::stof(m[4]));
  s->lookAt = Vec3(std::stof(m[5]), std::stof(m[6]), std::stof(m[7]));
  return true;
}

bool Inside(Vec3 p, Vec3 lo, Vec3 hi) {
  return p.x > lo.x && p.x < hi.x && p.y > lo.y && p.y < hi.y && p.z > lo.z && p.z < hi.z;
}

// Renders with the suggested camera: no back-face warning again, and light in the image.
void ExpectTheSuggestionWorks(const std::string& scene, const std::string& dir, const Suggestion& s,
                              const std::string& more = "") {
  const CommandResult r =
      RunTracer(scene + " " + s.flags + more + " --backend cpu --spp 4 --width 24 --height 24 -o " + dir + "/s.png");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_FALSE(Contains(r.output, "see the back of a triangle")) << "the suggestion warned again:\n" << r.output;
  EXPECT_FALSE(Contains(r.output, "black")) << r.output;
}

TEST(CameraHint, ARoomWithAnObjectAtItsCentre) {
  const std::string dir = MakeTempDir();
  const std::string scene = WriteRoom(dir, true);
  // From inside the object (where the centre of the bounds is) and from outside the room.
  for (const char* camera : {"--eye 0,0,0 --look-at 0,0,-7.7", "--eye 0,0,15 --look-at 0,0,0"}) {
    SCOPED_TRACE(camera);
    const CommandResult r =
        RunTracer(scene + " " + camera + " --backend cpu --spp 1 --width 24 --height 24 -o " + dir + "/x.png");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    Suggestion s;
    ASSERT_TRUE(SuggestedCamera(r.output, &s)) << r.output;
    EXPECT_FALSE(Inside(s.eye, Vec3(-1.01f), Vec3(1.01f))) << "inside the object: " << s.flags;
    EXPECT_TRUE(Inside(s.eye, Vec3(-4, -3, -4), Vec3(4, 3, 4))) << "outside the room: " << s.flags;
    ExpectTheSuggestionWorks(scene, dir, s);
  }
}

TEST(CameraHint, AClosedRoomSeenFromOutside) {
  const std::string dir = MakeTempDir();
  const std::string scene = WriteRoom(dir, false);
  const CommandResult r = RunTracer(
      scene + " --eye 0,1,20 --look-at 0,0,0 --backend cpu --spp 1 --width 24 --height 24 -o " + dir + "/x.png");
  Suggestion s;
  ASSERT_TRUE(SuggestedCamera(r.output, &s)) << r.output;
  EXPECT_TRUE(Inside(s.eye, Vec3(-4, -3, -4), Vec3(4, 3, 4))) << s.flags;
  ExpectTheSuggestionWorks(scene, dir, s);
}

TEST(CameraHint, ACameraInsideAClosedSolidIsSentOutside) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/solid.obj", Box(Vec3(-1, -1, -1), Vec3(1, 1, 1), false, 1));
  const std::string scene = dir + "/solid.obj", env = " --env 1,1,1";
  const CommandResult r = RunTracer(scene + " --eye 0,0,0.5 --look-at 0,0,-1" + env +
                                    " --backend cpu --spp 1 --width 24 --height 24 -o " + dir + "/x.png");
  Suggestion s;
  ASSERT_TRUE(SuggestedCamera(r.output, &s)) << r.output;
  EXPECT_FALSE(Inside(s.eye, Vec3(-1, -1, -1), Vec3(1, 1, 1))) << s.flags;
  ExpectTheSuggestionWorks(scene, dir, s, env);
}

TEST(CameraHint, AnEnvironmentCannotLightAClosedRoomAndSaysSo) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/dark.obj", Box(Vec3(-4, -3, -4), Vec3(4, 3, 4), true, 1));
  const std::string args = dir + "/dark.obj --eye 0,0,2 --look-at 0,0,0 --backend cpu --spp 1 --width 16 --height 16";
  const CommandResult r = RunTracer(args + " --env 2,2,2 -o " + dir + "/x.png");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  for (const char* said : {"tracer: warning: the scene has no emitters and the camera is enclosed",
                           "the environment (--env) cannot reach it, so it cannot light a closed room; add an emitter "
                           "(Ke in the MTL) or open the room"})
    EXPECT_TRUE(Contains(r.output, said)) << said << " in\n" << r.output;
  EXPECT_FALSE(Contains(r.output, "pass --env")) << "--env was given:\n" << r.output;
  // Without --env, the advice to pass one is the right one; and an open scene under --env is not warned about.
  EXPECT_TRUE(Contains(RunTracer(args + " -o " + dir + "/y.png").output, "pass --env R,G,B"));
  WriteFile(dir + "/open.obj", "v -1 -1 0\nv 1 -1 0\nv 0 1 0\nf 1 2 3\n");
  const CommandResult open =
      RunTracer(dir +
                "/open.obj --eye 0,0,3 --look-at 0,0,0 --env 1,1,1 --backend cpu --spp 1 --width 16 "
                "--height 16 -o " +
                dir + "/z.png");
  EXPECT_EQ(open.exitCode, 0);
  EXPECT_FALSE(Contains(open.output, "warning")) << open.output;
}

}  // namespace
}  // namespace tracer::test
