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

TEST(CliMessages, AValueThatDoesNotParseNamesItsOptionAndRange) {
  const CommandResult width = RunTracer(Cornell() + " --width 99999999999");
  EXPECT_EQ(width.exitCode, 2);
  EXPECT_TRUE(
      Contains(width.output, "--width 99999999999: not a valid value (expected a whole number from 1 to 32768)"))
      << width.output;
  const CommandResult spp = RunTracer(Cornell() + " --spp=many");
  EXPECT_TRUE(Contains(spp.output, "--spp many: not a valid value (expected a whole number from 1 to 2147483647)"))
      << spp.output;
}

TEST(CliMessages, AnOutputFolderThatAcceptsNoFileSaysSo) {
  const CommandResult r = RunTracer(Cornell() + " --backend cpu -o /proc/x.png");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_TRUE(Contains(r.output, "--output /proc/x.png: cannot create a file in the folder '/proc' (")) << r.output;
  EXPECT_TRUE(Contains(r.output, "): it is not writable")) << r.output;
  EXPECT_FALSE(Contains(r.output, "does not exist")) << r.output;
}

TEST(CliMessages, EnvironmentMapsOfTheWrongKindOrShape) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/sky.png", "not read");
  const CommandResult png = RunTracer(Cornell() + " --backend cpu --env-map " + dir + "/sky.png -o " + dir + "/x.png");
  EXPECT_EQ(png.exitCode, 1);
  EXPECT_TRUE(Contains(png.output, "sky.png: unknown environment map format '.png' (use a lat-long .hdr or .exr)"))
      << png.output;
  WriteGreyHdr(dir + "/square.hdr", 8, 8);
  const std::string square = " --backend cpu --spp 1 --width 8 --height 8 -o " + dir + "/y.png --env-map ";
  const CommandResult r = RunTracer(Cornell() + square + dir + "/square.hdr");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "square.hdr is 8x8 texels, but a lat-long environment map is 2:1")) << r.output;
  WriteGreyHdr(dir + "/wide.hdr", 16, 8);
  EXPECT_FALSE(Contains(RunTracer(Cornell() + square + dir + "/wide.hdr").output, "2:1"));
}

TEST(CliMessages, AFilmTooLargeForTheMemoryLimitNamesItsSizeAndTheFlags) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow address space at start-up, which no `ulimit -v` leaves room for.
  GTEST_SKIP() << "an address-space limit cannot be combined with AddressSanitizer (the sanitizer build)";
#endif
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

TEST(CliMessages, AdaptiveReportsTheMeanAndTheMostSamples) {
  const std::string dir = MakeTempDir();
  const CommandResult r = RunTracer(Cornell() +
                                    " --backend cpu --width 16 --height 16 --spp 256 --adaptive 0.2 "
                                    "--adaptive-min-spp 16 -o " +
                                    dir + "/x.png");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("\\): a mean of ([0-9.]+) and at most ([0-9]+) spp in ")))
      << r.output;
  EXPECT_LT(std::stod(m[1]), std::stod(m[2])) << "the pixels stopped at different counts";
}

TEST(CliMessages, InterruptedWithoutCheckpointSaysHowToResumeNextTime) {
  const std::string dir = MakeTempDir();
  Spawned p =
      Spawn(Cornell() + " --backend cpu --width 32 --height 32 --spp 100000000 -o " + dir + "/i.png", dir + "/log");
  ASSERT_TRUE(p.WaitForLog("rendering " + Cornell(), 30)) << p.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(p.pid, SIGINT), 0);
  EXPECT_EQ(p.Wait(30), 128 + SIGINT);
  const std::string log = p.Log();
  EXPECT_TRUE(Contains(log, "; wrote the image so far to " + dir +
                                "/i.png; this render cannot be resumed: to resume "
                                "a render later, run it with --checkpoint FILE"))
      << log;
  EXPECT_TRUE(FileExists(dir + "/i.png"));
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
