// @file cli_test.cpp: the tracer executable as a user meets it: help, usage errors, outputs and exit codes.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tracer/host/image_io.h"

using namespace tracer::test;

namespace {
std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }
}  // namespace

TEST(Cli, HelpDocumentsEveryFlag) {
  CommandResult r = RunTracer("--help");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* flag : {"--output",
                           "--eye",
                           "--look-at",
                           "--up",
                           "--fov",
                           "--width",
                           "--height",
                           "--spp",
                           "--seed",
                           "--max-depth",
                           "--exposure",
                           "--env",
                           "--clamp",
                           "--time",
                           "--backend",
                           "--threads",
                           "--paths-in-flight",
                           "--quiet",
                           "--allow-outside-paths",
                           "--naive-layout",
                           "--naive-compaction",
                           "--no-compaction",
                           "--single-shade-kernel",
                           "--plain-loads",
                           "--pageable-readback",
                           "--light-sampling",
                           "--light-clusters",
                           "--tile-size",
                           "--tile-guide-mix",
                           "--naive-minplus",
                           "--minplus",
                           "--naive-reduction",
                           "--profile",
                           "--benchmark",
                           "--report",
                           "--repeats",
                           "--checkpoint",
                           "--resume",
                           "--check-nan"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << " missing from --help";
}

TEST(Cli, RendersPngHdrAndPfm) {
  std::string dir = MakeTempDir();
  for (const char* ext : {".png", ".hdr", ".pfm"}) {
    std::string out = dir + "/img" + ext;
    CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 16 --height 12 --spp 2 --backend cpu");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_TRUE(FileExists(out)) << out;
    EXPECT_NE(r.output.find("rendered on cpu"), std::string::npos) << r.output;
  }
  int w, h;
  std::vector<float> px = tracer::ReadPfm(dir + "/img.pfm", w, h);
  EXPECT_EQ(w, 16);
  EXPECT_EQ(h, 12);
  double sum = 0;
  for (float v : px) sum += v;
  EXPECT_GT(sum, 0.0) << "the image is black";
}

TEST(Cli, UsageErrorsExitTwoAndWriteNothing) {
  std::string dir = MakeTempDir();
  std::string out = dir + "/x.png";
  for (std::string args : {"--spp 0", "--spp -3", "--width -5", "--height 0", "--width 100000", "--fov 0", "--fov 180",
                           "--max-depth -1", "--backend vulkan", "--light-sampling foo", "--eye 1,2", "--eye 0,0,0",
                           "--tile-guide-mix 1", "--unknown-flag", "--clamp -1", "--minplus fast"}) {
    CommandResult r = RunTracer(Cornell() + " -o " + out + " " + args);
    EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("usage error"), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(FileExists(out)) << args;
  }
  CommandResult ext = RunTracer(Cornell() + " -o " + dir + "/x.jpg");
  EXPECT_EQ(ext.exitCode, 2) << ext.output;
  EXPECT_NE(ext.output.find("extension"), std::string::npos);
  CommandResult missingDir = RunTracer(Cornell() + " -o " + dir + "/no/such/dir/x.png");
  EXPECT_EQ(missingDir.exitCode, 2) << missingDir.output;
  CommandResult noScene = RunTracer("");
  EXPECT_EQ(noScene.exitCode, 2) << noScene.output;
}

TEST(Cli, MissingSceneNamesTheFileAndLeavesNoOutput) {
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(dir + "/nope.obj -o " + dir + "/x.png");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("nope.obj"), std::string::npos) << r.output;
  EXPECT_FALSE(FileExists(dir + "/x.png"));
}

TEST(Cli, CpuBackendSaysSoOnStderr) {
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(Cornell() + " -o " + dir + "/x.png --width 8 --height 8 --spp 1 --backend cpu");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("rendered on cpu"), std::string::npos) << r.output;
}
