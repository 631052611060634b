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

// A w x h Radiance .hdr of one grey value, written as flat RGBE.
void WriteGreyHdr(const std::string& path, int w, int h) {
  std::string data =
      "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y " + std::to_string(h) + " +X " + std::to_string(w) + "\n";
  for (int i = 0; i < w * h; ++i) data += std::string("\x80\x80\x80\x81", 4);
  WriteFile(path, data);
}

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

TEST(CliMessages, AFilmTooLargeForTheMemoryLimitNamesItsSizeAndTheFlags) {
  const std::string dir = MakeTempDir();
  // 2^28 pixels: 6 GiB of film under a 2 GB address space limit.
  const CommandResult r = RunCommand("ulimit -v 2000000 && " + std::string(TRACER_EXE) + " " + Cornell() +
                                     " --backend cpu --width 16384 --height 16384 --spp 1 -o " + dir + "/big.png 2>&1");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_TRUE(Contains(r.output,
                       "tracer: error: out of host memory for the render: the film of 16384x16384 pixels "
                       "takes 6442450944 bytes"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "lower --width/--height, or --paths-in-flight")) << r.output;
  EXPECT_FALSE(Contains(r.output, "bad_alloc")) << r.output;
  EXPECT_FALSE(FileExists(dir + "/big.png"));
}

TEST(CliMessages, NoGpuIsOnePlainLineAndNothingUnderQuiet) {
  EXPECT_EQ(PlainNoGpuReason("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime "
                             "version"),
            "no NVIDIA driver, or one older than this build's CUDA needs");
  EXPECT_EQ(PlainNoGpuReason("cudaErrorNoDevice: no CUDA-capable device is detected"), "no NVIDIA GPU found");
  EXPECT_EQ(PlainNoGpuReason("cudaErrorUnknown: unknown error"), "unknown error");
  // --backend auto on a machine (or a build) without a GPU: the render's first line says why, -q says nothing.
  const std::string dir = MakeTempDir();
  const std::string args = Cornell() + " --spp 1 --width 8 --height 8 -o " + dir + "/x.png";
  const CommandResult quiet = RunTracer(args + " -q");
  EXPECT_EQ(quiet.exitCode, 0);
  EXPECT_EQ(quiet.output, "");
  const CommandResult plain = RunTracer(args);
  EXPECT_FALSE(Contains(plain.output, "cudaError")) << plain.output;
  EXPECT_TRUE(Contains(plain.output, ", on the CPU (")) << plain.output;
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

TEST(CliMessages, AResumeUnderAnotherEnvScaleNamesIt) {
  const std::string dir = MakeTempDir();
  WriteGreyHdr(dir + "/sky.hdr", 16, 8);
  const std::string base =
      Cornell() + " --backend cpu --width 8 --height 8 --env-map " + dir + "/sky.hdr -o " + dir + "/x.pfm";
  ASSERT_EQ(RunTracer(base + " --spp 2 --checkpoint " + dir + "/c.ckpt").exitCode, 0);
  const CommandResult r = RunTracer(base + " --spp 4 --env-scale 2 --resume " + dir + "/c.ckpt");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_TRUE(Contains(r.output,
                       "settings: scene-content: the environment scale (--env-scale) differs: 1 in the "
                       "checkpoint, 2 now"))
      << r.output;
  EXPECT_EQ(RunTracer(base + " --spp 4 --resume " + dir + "/c.ckpt").exitCode, 0) << "the same settings resume";
}

}  // namespace
}  // namespace tracer::test
