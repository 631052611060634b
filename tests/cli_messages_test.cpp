// @file cli_messages_test.cpp: what the tracer tells a user whose input is not what it expects: extra arguments,
// values out of range, unwritable outputs, environment maps, memory, a missing GPU, and dark images.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>

#include "test_util.h"
#include "tracer/host/device_error.h"

namespace tracer::test {
namespace {

std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }
bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliMessages, ExtraScenePathsAreAUsageError) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/b.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const CommandResult r = RunTracer(Cornell() + " " + dir + "/b.obj extra.obj --backend cpu -o " + dir + "/x.png");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_TRUE(Contains(r.output, "tracer: usage error: one scene per run: " + Cornell() + " is the scene, and '" + dir +
                                     "/b.obj', 'extra.obj' are left over"))
      << r.output;
  EXPECT_FALSE(FileExists(dir + "/x.png"));
}

// A scene lit by one faint emitter: the image is almost black.
TEST(CliMessages, ANearlyBlackImageGetsAHint) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/faint.mtl", "newmtl faint\nKe 0.00001 0.00001 0.00001\n");
  WriteFile(dir + "/faint.obj", "mtllib faint.mtl\nv -1 -1 0\nv 1 -1 0\nv 0 1 0\nusemtl faint\nf 1 2 3\n");
  const std::string view = " --eye 0,0,3 --look-at 0,0,0 --backend cpu --spp 2 --width 16 --height 16 -o " + dir;
  const CommandResult r = RunTracer(dir + "/faint.obj" + view + "/x.png");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "tracer: warning: the image is nearly black (mean value ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "The light that reaches the camera is very weak: check the emitters' Ke")) << r.output;
  // A real render is far above the threshold, also a dark one.
  for (const char* exposure : {"0", "-6"}) {
    const CommandResult lit = RunTracer(Cornell() + " --backend cpu --spp 2 --width 16 --height 16 --exposure " +
                                        exposure + " -o " + dir + "/c.png");
    EXPECT_FALSE(Contains(lit.output, "black")) << lit.output;
  }
}

}  // namespace
}  // namespace tracer::test
