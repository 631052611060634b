// @file cli_test.cpp: the tracer executable as a user meets it: help, usage errors, outputs and exit codes.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "test_util.h"
#include "tracer/host/image_io.h"

using namespace tracer::test;

namespace {
std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }
bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// RunTracer from another working directory (for the default output folder).
CommandResult RunTracerIn(const std::string& cwd, const std::string& args) {
  std::string cmd = "cd '" + cwd + "' && timeout -s KILL 120 " + std::string(TRACER_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return CommandResult{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}
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
                           "--texture-path",
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
                           "--bvh",
                           "--no-spatial-splits",
                           "--profile",
                           "--benchmark",
                           "--report",
                           "--repeats",
                           "--checkpoint",
                           "--resume",
                           "--check-nan",
                           "--make-rays KIND FILE"})
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

TEST(Cli, DegenerateUpIsAUsageError) {
  std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.png ";
  CommandResult down = RunTracer(base + "--eye 0,300,0 --look-at 0,0,0");  // the default up 0,1,0 is the view axis
  EXPECT_EQ(down.exitCode, 2) << down.output;
  EXPECT_TRUE(Contains(down.output,
                       "tracer: usage error: --up 0,1,0 is parallel to the view direction (from --eye to "
                       "--look-at); pass another --up, such as 0,0,1\n"))
      << down.output;
  CommandResult zero = RunTracer(base + "--up 0,0,0");
  EXPECT_EQ(zero.exitCode, 2) << zero.output;
  EXPECT_TRUE(
      Contains(zero.output, "tracer: usage error: --up 0,0,0 is the zero vector; give a direction such as 0,1,0"))
      << zero.output;
  EXPECT_FALSE(FileExists(dir + "/x.png"));
  CommandResult fine = RunTracer(base + "--eye 0,300,0 --look-at 0,0,0 --up 0,0,1");
  EXPECT_EQ(fine.exitCode, 0) << fine.output;
}

TEST(Cli, MissingSceneIsReportedBeforeTheOutputFolder) {
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(dir + "/nope.obj -o " + dir + "/no/such/dir/x.png");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(r.output, "tracer: error: " + dir + "/nope.obj: cannot open: No such file or directory\n");
}

TEST(Cli, DefaultOutputFolderIsCreated) {
  std::string cwd = MakeTempDir();
  CommandResult r = RunTracerIn(cwd, Cornell() + " --backend cpu --width 8 --height 8 --spp 1");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(FileExists(cwd + "/output/render.png")) << r.output;
  // A folder the user names is not made.
  CommandResult named = RunTracerIn(cwd, Cornell() + " --backend cpu --spp 1 -o made/x.png");
  EXPECT_EQ(named.exitCode, 2) << named.output;
  EXPECT_FALSE(FileExists(cwd + "/made"));
}

TEST(Cli, TexturePathFindsATextureNotBesideTheScene) {
  std::string dir = MakeTempDir(), textures = MakeTempDir();
  const unsigned char pixel[] = {200, 100, 50};
  ASSERT_NE(stbi_write_png((textures + "/wall.png").c_str(), 1, 1, 3, pixel, 3), 0);
  WriteFile(dir + "/t.mtl", "newmtl t\nmap_Kd maps\\wall.png\nKe 1 1 1\n");
  WriteFile(dir + "/t.obj", "mtllib t.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl t\nf 1 2 3\n");
  const std::string base = dir + "/t.obj --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.png";
  CommandResult without = RunTracer(base);
  EXPECT_EQ(without.exitCode, 0) << without.output;
  EXPECT_TRUE(Contains(without.output, "map_Kd 'maps\\wall.png' not found")) << without.output;
  CommandResult with = RunTracer(base + " --texture-path " + textures);
  EXPECT_EQ(with.exitCode, 0) << with.output;
  EXPECT_FALSE(Contains(with.output, "warning")) << with.output;
  CommandResult missing = RunTracer(base + " --texture-path " + dir + "/nowhere");
  EXPECT_EQ(missing.exitCode, 2) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "tracer: usage error: --texture-path " + dir + "/nowhere: no such folder"))
      << missing.output;
}

TEST(Cli, PrintsBoundsAndTheCameraAsCameraFileLines) {
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(Cornell() + " --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.png");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "scene bounds: min 0,0,0 max 556,548.8,559.2\n")) << r.output;
  EXPECT_TRUE(Contains(r.output,
                       "camera (the scene's .camera file; these lines make a .camera file):\n"
                       "eye 278 273 -800\nlook_at 278 273 0\nup 0 1 0\nfov 39.3\n"))
      << r.output;
  CommandResult quiet =
      RunTracer(Cornell() + " --quiet --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/q.png");
  EXPECT_EQ(quiet.output, "");

  // A framed camera, printed and saved as SCENE.camera, renders the same image.
  WriteFile(dir + "/s.obj", "v 0 0 0\nv 1.3 0.1 0\nv 0 1.7 0.3\nf 1 2 3\n");
  const std::string args = " --backend cpu --env 1,1,1 --width 16 --height 12 --spp 1 --seed 5 -o ";
  CommandResult framed = RunTracer(dir + "/s.obj" + args + dir + "/framed.pfm");
  ASSERT_EQ(framed.exitCode, 0) << framed.output;
  const std::string header = "camera (framed on the scene's bounds; these lines make a .camera file):\n";
  size_t at = framed.output.find(header);
  ASSERT_NE(at, std::string::npos) << framed.output;
  std::istringstream lines(framed.output.substr(at + header.size()));
  std::string camera, line;
  for (int i = 0; i < 4 && std::getline(lines, line); ++i) camera += line + "\n";
  WriteFile(dir + "/s.camera", camera);
  CommandResult fromFile = RunTracer(dir + "/s.obj" + args + dir + "/file.pfm");
  ASSERT_EQ(fromFile.exitCode, 0) << fromFile.output;
  EXPECT_TRUE(Contains(fromFile.output, "camera (the scene's .camera file")) << fromFile.output;
  EXPECT_EQ(ReadFile(dir + "/framed.pfm"), ReadFile(dir + "/file.pfm")) << camera;
}
