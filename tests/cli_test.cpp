// @file cli_test.cpp: the tracer executable as a user meets it: help, usage errors, outputs and exit codes.
#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "tracer/host/image_io.h"
#include "tracer/host/version.h"

using namespace tracer::test;

namespace {
std::string Cornell() { return ProjectScenesDir() + "/cornell.obj"; }
bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The tracer run by the shell in `cwd` with `args`; `redirect` says which of its streams the output holds: both
// ("2>&1"), stderr alone ("2>&1 >/dev/null") or stdout alone ("2>/dev/null").
CommandResult RunTracerCapturing(const std::string& cwd, const std::string& args, const std::string& redirect) {
  std::string cmd = "cd '" + cwd + "' && timeout -s KILL 120 " + std::string(TRACER_EXE) + " " + args + " " + redirect;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return CommandResult{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// RunTracer from another working directory (for the default output folder).
CommandResult RunTracerIn(const std::string& cwd, const std::string& args) {
  return RunTracerCapturing(cwd, args, "2>&1");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether `line` of --help lists the option `name` ("--spp"): "  -o, --output FILE  ..." or "      --spp N  ...".
bool ListsOption(const std::string& line, const std::string& name) {
  const size_t at = line.find_first_not_of(' ');
  if (at == std::string::npos || at < 2) return false;
  size_t flag = at;
  if (line.compare(at, 1, "-") == 0 && line.compare(at, 2, "--") != 0) flag = line.find("--", at);  // "-o, --output"
  return flag != std::string::npos && line.compare(flag, name.size(), name) == 0 &&
         (flag + name.size() == line.size() || line[flag + name.size()] == ' ');
}
}  // namespace

// Every option is listed as one (at the start of a help line), not only named in another's text.
TEST(Cli, HelpListsEveryOption) {
  CommandResult r = RunTracer("--help");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::vector<std::string> lines = Lines(r.output);
  for (const char* flag : {"--scene",
                           "--output",
                           "--width",
                           "--height",
                           "--spp",
                           "--eye",
                           "--look-at",
                           "--up",
                           "--fov",
                           "--env",
                           "--env-map",
                           "--env-rotate",
                           "--env-scale",
                           "--backend",
                           "--time",
                           "--quiet",
                           "--verbose",
                           "--version",
                           "--help",
                           "--aperture",
                           "--focus-distance",
                           "--exposure",
                           "--exr-half",
                           "--aov",
                           "--aov-samples",
                           "--seed",
                           "--max-depth",
                           "--clamp",
                           "--adaptive",
                           "--adaptive-min-spp",
                           "--env-sampling",
                           "--env-portal-mix",
                           "--threads",
                           "--paths-in-flight",
                           "--check-nan",
                           "--light-sampling",
                           "--light-clusters",
                           "--tile-size",
                           "--tile-guide-mix",
                           "--minplus",
                           "--texture-path",
                           "--allow-outside-paths",
                           "--checkpoint",
                           "--checkpoint-interval",
                           "--resume",
                           "--naive-layout",
                           "--naive-compaction",
                           "--no-compaction",
                           "--single-shade-kernel",
                           "--plain-loads",
                           "--pageable-readback",
                           "--serial-shadows",
                           "--serial-shading",
                           "--one-thread-per-ray",
                           "--naive-obj-parse",
                           "--naive-minplus",
                           "--naive-reduction",
                           "--naive-portal-pick",
                           "--naive-portal-pdf",
                           "--naive-portal-point",
                           "--bvh",
                           "--bvh-builder",
                           "--no-spatial-splits",
                           "--persistent",
                           "--sort-rays",
                           "--profile",
                           "--benchmark",
                           "--report",
                           "--repeats",
                           "--trace-rays",
                           "--hits",
                           "--any-hit",
                           "--dump-rays",
                           "--make-rays"}) {
    int listed = 0;
    for (const std::string& line : lines) listed += ListsOption(line, flag);
    EXPECT_EQ(listed, 1) << flag << " is not listed once in --help:\n" << r.output;
  }
  EXPECT_TRUE(Contains(r.output, "--make-rays KIND FILE")) << r.output;
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << "a line wider than 100 columns: " << line;
}

// What most renders need comes first, in one group that ends within the first 60 lines of --help (the usage
// included): a terminal's page, without scrolling.
TEST(Cli, HelpShowsTheCommonOptionsFirst) {
  CommandResult r = RunTracer("--help");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::vector<std::string> lines = Lines(r.output);
  size_t header = 0;
  while (header < lines.size() && lines[header].find("options:") == std::string::npos) ++header;
  ASSERT_LT(header, 10u) << r.output;
  EXPECT_EQ(lines[header], " Common options:");
  size_t end = header + 1;  // the group ends at the first blank line
  while (end < lines.size() && !lines[end].empty()) ++end;
  EXPECT_LE(end, 60u) << "the first group ends at line " << end << " of --help";
  for (const char* flag :
       {"--scene", "--output", "--width", "--height", "--spp", "--eye", "--look-at", "--fov", "--env", "--env-map",
        "--backend", "--time", "--quiet", "--verbose", "--version", "--help"}) {
    bool inFirstGroup = false;
    for (size_t i = header + 1; i < end; ++i) inFirstGroup |= ListsOption(lines[i], flag);
    EXPECT_TRUE(inFirstGroup) << flag << " is not in the first group of --help:\n" << r.output;
  }
  // The camera file is the camera's other source, named where the camera's flags are.
  bool cameraFile = false;
  for (size_t i = header + 1; i < end; ++i) cameraFile |= Contains(lines[i], "SCENE.camera");
  EXPECT_TRUE(cameraFile) << r.output;
}

// --version prints the library's version string on stdout alone, and exits 0 without a scene.
TEST(Cli, VersionPrintsTheVersionAndExitsZero) {
  const std::string cwd = MakeTempDir();
  CommandResult out = RunTracerCapturing(cwd, "--version", "2>/dev/null");
  EXPECT_EQ(out.exitCode, 0) << out.output;
  EXPECT_EQ(out.output, "tracer " + tracer::VersionString() + "\n");
  // "tracer 0.9.0", with the build's commit in brackets when it was built from a git tree.
  EXPECT_EQ(out.output.rfind(std::string("tracer ") + tracer::VersionNumber(), 0), 0u) << out.output;
  EXPECT_GT(std::string(tracer::VersionNumber()).size(), 0u);
  EXPECT_NE(std::string(tracer::VersionNumber()).find('.'), std::string::npos) << tracer::VersionNumber();
  CommandResult err = RunTracerCapturing(cwd, "--version", "2>&1 >/dev/null");
  EXPECT_EQ(err.output, "");
}

// A render says on stderr what it renders and, at the end, how fast and where the image went: no more than three
// lines (a CUDA build without a usable GPU adds why it renders on the CPU), besides the progress bar on a terminal.
TEST(Cli, DefaultRenderPrintsAtMostThreeLines) {
  const std::string dir = MakeTempDir(), out = dir + "/x.png";
  CommandResult r =
      RunTracerCapturing(dir, Cornell() + " -o " + out + " --width 32 --height 24 --spp 2", "2>&1 >/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::vector<std::string> lines;
  for (const std::string& line : Lines(r.output))
    if (!Contains(line, "ETA")) lines.push_back(line);
  EXPECT_LE(lines.size(), 3u) << r.output;
  ASSERT_GE(lines.size(), 2u) << r.output;
  const std::string start = "rendering " + Cornell() + " (32 triangles) at 32x24, 2 spp, on the ";
  EXPECT_EQ(lines[lines.size() - 2].rfind(start, 0), 0u) << r.output;
  const std::string& summary = lines.back();
  EXPECT_EQ(summary.rfind("rendered on ", 0), 0u) << r.output;
  EXPECT_TRUE(Contains(summary, ": 2 spp in ") && Contains(summary, " M samples/s, ")) << r.output;
  EXPECT_EQ(summary.substr(summary.size() - out.size() - 8), "; wrote " + out) << r.output;
  for (const char* detail : {"loaded and built the BVH", "scene bounds", "time to image", "scene: 32 triangles"})
    EXPECT_FALSE(Contains(r.output, detail)) << detail << " is a detail for --verbose:\n" << r.output;
}

// --verbose adds the details: the scene, its bounds and camera, the BVH build, the parts of loading, and where the
// time to image went. With --quiet it is a usage error.
TEST(Cli, VerbosePrintsTheDetails) {
  const std::string dir = MakeTempDir(), out = dir + "/x.png";
  const std::string args = Cornell() + " -o " + out + " --backend cpu --width 32 --height 24 --spp 2";
  CommandResult r = RunTracerCapturing(dir, args + " --verbose", "2>&1 >/dev/null");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  for (const char* detail :
       {"scene: 32 triangles, 4 materials", "scene bounds: min 0,0,0 max 556,548.8,559.2\n",
        "camera (the scene's .camera file", "loaded and built the BVH in ", "  load: read ", "time to image "})
    EXPECT_TRUE(Contains(r.output, detail)) << detail << " missing under --verbose:\n" << r.output;
  EXPECT_TRUE(Contains(r.output, "\nwrote " + out + " in ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "rendering " + Cornell() + " (32 triangles) at 32x24, 2 spp, on the CPU\n"))
      << r.output;
  EXPECT_GT(Lines(r.output).size(), 10u) << r.output;
  CommandResult both = RunTracerCapturing(dir, args + " --verbose --quiet", "2>&1");
  EXPECT_EQ(both.exitCode, 2) << both.output;
  EXPECT_EQ(both.output, "tracer: usage error: --quiet and --verbose exclude each other\n");
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
  CommandResult r = RunTracer(Cornell() + " --verbose --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.png");
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
  const std::string args = " --verbose --backend cpu --env 1,1,1 --width 16 --height 12 --spp 1 --seed 5 -o ";
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

// ---- the camera and the image on a non-square frame -----------------------------------------------------------

namespace {
// An axis-aligned quad on the plane z = -1 facing +z (towards a camera at the origin), as OBJ lines; `first` is the
// 1-based index of its first vertex.
std::string QuadFacingPlusZ(double x0, double y0, double x1, double y1, int first) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "v %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\nv %.9g %.9g -1\nf %d %d %d %d\n", x0,
                y0, x1, y0, x1, y1, x0, y1, first, first + 1, first + 2, first + 3);
  return buf;
}
}  // namespace

// A 64x32 frame (aspect 2) with a vertical fov of 40 degrees, from the origin looking down -z. On the plane z = -1 the
// image spans |y| <= t and |x| <= 2t, t = tan(20 degrees), and pixel edges fall at y = (1 - 2r/32) t and
// x = (2c/64 - 1) 2t. Two emitters have their edges on pixel edges: a band above y = 0.8125 t (rows 0-2 exactly)
// and a strip right of x = 1.75 t between y = -0.25 t and 0.25 t (columns 60-63 of rows 12-19). Bottom-up rows, a
// horizontal fov, a swapped aspect or a mirrored image each light other pixels. The PNG of the same render is read
// back and compared, row by row, with the PFM tone-mapped.
TEST(Cli, NonSquareFrameUsesTheVerticalFovWithRowZeroAtTheTop) {
  const std::string dir = MakeTempDir();
  const double t = std::tan(20.0 * 3.14159265358979323846 / 180.0);
  WriteFile(dir + "/e.mtl", "newmtl lamp\nKd 0 0 0\nKe 1 1 1\n");
  WriteFile(dir + "/e.obj", "mtllib e.mtl\nusemtl lamp\n" + QuadFacingPlusZ(-3.0, 0.8125 * t, 3.0, 3.0, 1) +
                                QuadFacingPlusZ(1.75 * t, -0.25 * t, 3.0, 0.25 * t, 5));
  const std::string args = dir +
                           "/e.obj --backend cpu --width 64 --height 32 --spp 4 --seed 3 --eye 0,0,0 --look-at 0,0,-1 "
                           "--up 0,1,0 --fov 40 -o " +
                           dir;
  for (const char* name : {"/e.pfm", "/e.png"}) {
    CommandResult r = RunTracer(args + name);
    ASSERT_EQ(r.exitCode, 0) << r.output;
  }
  int w = 0, h = 0;
  const std::vector<float> pfm = tracer::ReadPfm(dir + "/e.pfm", w, h);
  ASSERT_EQ(w, 64);
  ASSERT_EQ(h, 32);
  int wrong = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const bool lit = y <= 2 || (x >= 60 && y >= 12 && y <= 19);
      const float v = pfm[3 * (static_cast<size_t>(y) * w + x)];
      // Inside an emitter every sample sees Ke = 1; outside, nothing (no environment). 0.5 leaves room for a rare
      // sample that lands on an edge and rounds to the other side.
      if ((v > 0.5f) != lit && wrong++ < 10) ADD_FAILURE() << "pixel (" << x << ", " << y << ") = " << v;
    }
  EXPECT_EQ(wrong, 0);

  int pw = 0, ph = 0, channels = 0;
  unsigned char* png = stbi_load((dir + "/e.png").c_str(), &pw, &ph, &channels, 3);
  ASSERT_NE(png, nullptr) << stbi_failure_reason();
  ASSERT_EQ(pw, w);
  ASSERT_EQ(ph, h);
  for (int y = 0; y < h; ++y) {
    std::vector<int> row(png + static_cast<size_t>(y) * w * 3, png + static_cast<size_t>(y + 1) * w * 3), expected;
    for (int i = 0; i < 3 * w; ++i)
      expected.push_back(tracer::ToneMapToSrgb8(pfm[static_cast<size_t>(y) * w * 3 + i], 1.0f));
    EXPECT_EQ(row, expected) << "PNG row " << y;
  }
  stbi_image_free(png);
}

// Under --verbose the summary says how long the image took to write, and where the whole time to image went: parts
// that add up to no more than the total (the rest is start-up), each read from the line itself.
TEST(Cli, RenderReportsTheTimeToImage) {
  const std::string out = MakeTempDir() + "/img.png";
  CommandResult r = RunTracer(Cornell() + " -o " + out + " --width 64 --height 48 --spp 4 --backend cpu --verbose");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + out + " in "), std::string::npos) << r.output;
  const size_t at = r.output.find("time to image ");
  ASSERT_NE(at, std::string::npos) << r.output;
  double total, load, setup, pool, render, readback, resolve, write, rest;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at,
                        "time to image %lfs: loading and BVH build %lfs, set-up %lfs, path pool and film %lfs, render "
                        "%lfs (final film readback %lfs), resolve %lfs, write %lfs, the rest %lfs",
                        &total, &load, &setup, &pool, &render, &readback, &resolve, &write, &rest),
            9)
      << r.output.substr(at);
  EXPECT_GT(render, 0.0);
  EXPECT_LE(readback, render + 0.01);
  EXPECT_LE(load + setup + pool + render + resolve + write, total + 0.05);
  EXPECT_NEAR(load + render + resolve + write + rest + setup + pool, total, 0.1 + 0.05 * total);
}

// A closed room seen from outside (the framed default camera): the probe says so before the render and suggests a
// camera inside, which then renders the lit room with no such warning.
TEST(Cli, CameraOutsideAClosedRoomIsToldToGoInside) {
  const std::string dir = MakeTempDir();
  // A cube with its faces wound to face inwards, and a lamp under the ceiling facing down.
  WriteFile(dir + "/room.mtl", "newmtl wall\nKd 0.8 0.8 0.8\nnewmtl lamp\nKd 0 0 0\nKe 5 5 5\n");
  WriteFile(dir + "/room.obj",
            "mtllib room.mtl\nv -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
            "usemtl wall\nf 1 2 3 4\nf 5 8 7 6\nf 1 4 8 5\nf 2 6 7 3\nf 1 5 6 2\nf 4 3 7 8\n"
            "v -0.3 0.9 -0.3\nv 0.3 0.9 -0.3\nv 0.3 0.9 0.3\nv -0.3 0.9 0.3\nusemtl lamp\nf 9 10 11 12\n");
  const std::string args = dir + "/room.obj --backend cpu --width 16 --height 16 --spp 2 ";
  CommandResult outside = RunTracer(args + "-o " + dir + "/out.pfm");
  ASSERT_EQ(outside.exitCode, 0) << outside.output;
  EXPECT_TRUE(FileExists(dir + "/out.pfm")) << "a warning, not an error: the image is still written";
  const std::string hint =
      "the camera is most likely outside a closed room or inside an object, and the image may "
      "be dark. A camera that sees front faces from outside every object: ";
  const size_t at = outside.output.find(hint);
  ASSERT_NE(at, std::string::npos) << outside.output;
  const std::string flags = outside.output.substr(at + hint.size(), outside.output.find('\n', at) - at - hint.size());
  EXPECT_EQ(flags.rfind("--eye 0,0,0 --look-at 0,0,-1.73", 0), 0u) << flags;

  CommandResult inside = RunTracer(args + flags + " -o " + dir + "/in.pfm");
  ASSERT_EQ(inside.exitCode, 0) << inside.output;
  EXPECT_FALSE(Contains(inside.output, "back of a triangle")) << inside.output;
  EXPECT_FALSE(Contains(inside.output, "entirely black")) << inside.output;
  int w = 0, h = 0;
  double sum = 0;
  for (float v : tracer::ReadPfm(dir + "/in.pfm", w, h)) sum += v;
  EXPECT_GT(sum, 0.0);
  // The Cornell box, seen through its open side, draws no such warning.
  CommandResult cornell = RunTracer(Cornell() + " --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/c.png");
  EXPECT_FALSE(Contains(cornell.output, "back of a triangle")) << cornell.output;
}

// A texture named with Windows separators shows in the image: a red texture over a white Kd, lit by a white
// environment, renders red (a missing texture would leave the quad white).
TEST(Cli, WindowsPathTextureShowsInTheImage) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(system(("mkdir -p '" + dir + "/maps/red'").c_str()), 0);
  const unsigned char red[] = {255, 0, 0};
  ASSERT_NE(stbi_write_png((dir + "/maps/red/r.png").c_str(), 1, 1, 3, red, 3), 0);
  WriteFile(dir + "/q.mtl", "newmtl q\nKd 1 1 1\nmap_Kd .\\maps\\red\\r.png\n");
  WriteFile(dir + "/q.obj", "mtllib q.mtl\nusemtl q\n" + QuadFacingPlusZ(-2.0, -2.0, 2.0, 2.0, 1));
  CommandResult r = RunTracer(dir +
                              "/q.obj --backend cpu --width 8 --height 8 --spp 4 --env 1,1,1 --eye 0,0,0 --look-at "
                              "0,0,-1 -o " +
                              dir + "/q.pfm");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_FALSE(Contains(r.output, "map_Kd")) << r.output;
  int w = 0, h = 0;
  const std::vector<float> px = tracer::ReadPfm(dir + "/q.pfm", w, h);
  const size_t centre = 3 * (static_cast<size_t>(h / 2) * w + w / 2);
  EXPECT_GT(px[centre], 0.5f);
  EXPECT_EQ(px[centre + 1], 0.0f);
  EXPECT_EQ(px[centre + 2], 0.0f);
}

// Errors found before rendering leave nothing behind, also under the default output path: no image, no output/.
TEST(Cli, ErrorsBeforeRenderingMakeNoDefaultOutputFolder) {
  const std::string cwd = MakeTempDir();
  CommandResult missing = RunTracerIn(cwd, cwd + "/none.obj --backend cpu");
  EXPECT_EQ(missing.exitCode, 1) << missing.output;
  CommandResult up = RunTracerIn(cwd, Cornell() + " --backend cpu --spp 1 --up 0,0,0");
  EXPECT_EQ(up.exitCode, 2) << up.output;
  CommandResult parallel = RunTracerIn(cwd, Cornell() + " --backend cpu --spp 1 --eye 0,5,0 --look-at 0,0,0");
  EXPECT_EQ(parallel.exitCode, 2) << parallel.output;
  EXPECT_FALSE(FileExists(cwd + "/output")) << "nothing made for a run that failed";
}
