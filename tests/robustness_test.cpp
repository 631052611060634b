// @file robustness_test.cpp: robustness from the outside: bad options, non-finite samples, no GPU, long renders
// (--time, signals, checkpoints and resume) and the checkpoint file format itself.
//
// Scene-input robustness lives in loader_test.cpp and is not repeated here. The CLI tests run the tracer
// executable; those that need a signal or an environment variable start it themselves (Spawn) or pass it to RunTracer.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stb/stb_image.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_checks.h"
#include "test_util.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/image_io.h"

namespace tracer {
namespace {

using test::Clock;
using test::CommandResult;
using test::FileExists;
using test::MakeTempDir;
using test::ReadFile;
using test::RunTracer;
using test::Seconds;
using test::Spawn;
using test::Spawned;
using test::SppFromMessage;
using test::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Cornell() { return test::ProjectScenesDir() + "/cornell.obj"; }

// Every name in a folder except . and ..
std::set<std::string> ListDir(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

std::vector<float> ReadPfmOrEmpty(const std::string& path, int& w, int& h) {
  try {
    return ReadPfm(path, w, h);
  } catch (const std::exception&) {
    return {};
  }
}

// A floor under a tiny, very bright emitter, and a camera looking down at both: a firefly machine.
std::string WriteFireflyScene(const std::string& dir) {
  WriteFile(dir + "/firefly.mtl", "newmtl floor\nKd 0.8 0.8 0.8\nnewmtl lamp\nKd 0 0 0\nKe 1000000 1000000 1000000\n");
  WriteFile(dir + "/firefly.obj",
            "mtllib firefly.mtl\nusemtl floor\nv -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nf 1 4 3 2\n"
            "usemtl lamp\nv -0.02 0.5 -0.02\nv 0.02 0.5 -0.02\nv 0.02 0.5 0.02\nv -0.02 0.5 0.02\nf 5 6 7 8\n"
            "f 5 8 7 6\n");
  return dir + "/firefly.obj";
}
const char kFireflyCamera[] = " --eye 0,2,0.01 --look-at 0,0,0 --fov 60";

// The camera sits inside a closed glass cube (Ni 3) facing a light of Ke 3e38. Leaving the glass scales
// radiance by eta^2 = 9 (Veach 1997, ch. 5), so every path that reaches the light carries 9 * 3e38 = Inf:
// a scene that makes non-finite samples on purpose.
std::string WriteInfScene(const std::string& dir) {
  WriteFile(dir + "/inf.mtl",
            "newmtl glass\nillum 7\nKd 0 0 0\nKs 1 1 1\nTf 1 1 1\nNi 3\nnewmtl light\nKd 0 0 0\nKe 3e38 3e38 3e38\n");
  WriteFile(dir + "/inf.obj",
            "mtllib inf.mtl\nusemtl glass\n"
            "v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
            "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n"
            "usemtl light\nv -4 -4 3\nv 4 -4 3\nv 4 4 3\nv -4 4 3\nf 9 12 11 10\n");
  return dir + "/inf.obj";
}
const char kInfCamera[] = " --eye 0,0,0 --look-at 0,0,1 --fov 60";

double MaxValue(const std::vector<float>& v) {
  double m = 0.0;
  for (float x : v) m = std::max<double>(m, x);
  return m;
}

// ================================ options: usage errors before any loading ================================

TEST(RobustOptions, BadValuesAreUsageErrorsBeforeLoading) {
  std::string dir = MakeTempDir();
  std::string out = dir + "/x.png";
  ASSERT_EQ(mkdir((dir + "/folder.png").c_str(), 0755), 0);
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      // w*h*3 overflows 32-bit indices long before memory runs out: capped at 2^28 pixels
      {"--width 32768 --height 32768", "2^28"},
      {"--width 20000 --height 20000", "400000000 pixels"},
      {"--width 99999999999", "--width 99999999999: not a valid value (expected a whole number from 1 to 32768)"},
      {"--spp 99999999999", "--spp 99999999999: not a valid value (expected a whole number from 1 to 2147483647)"},
      {"--time -1", "--time"},
      {"--time nan", "nan"},
      {"--checkpoint-interval -1", "--checkpoint-interval"},
      {"--resume " + dir + "/missing.ckpt", "missing.ckpt: no such readable file"},
      {"--checkpoint " + dir + "/no/such/folder/c.ckpt", "does not exist"},
      {"--checkpoint " + dir + "/folder.png", "is a folder"},
  };
  for (const Case& c : cases) {
    CommandResult r = RunTracer(Cornell() + " -o " + out + " --backend cpu " + c.args);
    EXPECT_EQ(r.exitCode, 2) << c.args << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, "usage error")) << c.args << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, c.message)) << c.args << ": expected '" << c.message << "' in\n" << r.output;
    // Before loading: the scene summary is printed right after the scene loads.
    EXPECT_FALSE(Contains(r.output, "scene:")) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"folder.png"});
}

TEST(RobustOptions, UnwritableOutputPlacesAreUsageErrors) {
  // Tests run as root, which passes access(W_OK) everywhere; these places refuse even root.
  std::string dir = MakeTempDir();
  ASSERT_EQ(mkdir((dir + "/folder.png").c_str(), 0755), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/etc/passwd/x.png", "'/etc/passwd' is not a folder"},  // a regular file used as a folder
      {"/proc/x.png", "not writable"},                         // procfs accepts no new files
      {dir + "/folder.png", "is a folder"},                    // the rename at the end would fail
      {dir + "/missing/x.png", "does not exist"},
  };
  for (const auto& [path, message] : cases) {
    CommandResult r = RunTracer(Cornell() + " --backend cpu --width 8 --height 8 --spp 1 -o " + path);
    EXPECT_EQ(r.exitCode, 2) << path << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, message)) << path << ": expected '" << message << "' in\n" << r.output;
    EXPECT_FALSE(Contains(r.output, "scene:")) << path << "\n" << r.output;
  }
  // The probe file used to test writability is gone again.
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"folder.png"});
  CommandResult ok = RunTracer(Cornell() + " --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/ok.png");
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
  EXPECT_EQ(ListDir(dir), (std::set<std::string>{"folder.png", "ok.png"}));
}

TEST(RobustOptions, FailedRenderLeavesNoFileBehind) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
  CommandResult r = RunTracer(dir + "/bad.obj --backend cpu -o " + dir + "/x.pfm --checkpoint " + dir + "/x.ckpt");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, dir + "/bad.obj:4")) << "the error names file and line:\n" << r.output;
  // No image, no checkpoint, no temporary file: the scene file is all there is.
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"bad.obj"});
}

// ================================ numerical faults ================================

TEST(RobustNumerics, WriteImageReplacesNonFiniteValuesAndCountsThem) {
  std::string dir = MakeTempDir();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> rgb = {0.5f, nan, 0.25f, inf, -inf, 1.0f};  // 2x1 pixels
  for (const char* ext : {".pfm", ".hdr", ".png"}) {
    std::string path = dir + "/img" + ext;
    EXPECT_EQ(WriteImage(path, rgb, 2, 1), 3u) << ext;
    int w = 0, h = 0, n = 0;
    std::vector<float> back;
    if (std::string(ext) == ".pfm") {
      back = ReadPfm(path, w, h);
    } else {
      float* px = stbi_loadf(path.c_str(), &w, &h, &n, 3);
      ASSERT_NE(px, nullptr) << ext << ": " << stbi_failure_reason();
      back.assign(px, px + 6);
      stbi_image_free(px);
    }
    ASSERT_EQ(back.size(), 6u) << ext;
    for (float v : back) EXPECT_TRUE(std::isfinite(v)) << ext;
    EXPECT_EQ(back[1], 0.0f) << ext << ": NaN is written as 0";
    EXPECT_EQ(back[3], 0.0f) << ext << ": +Inf is written as 0";
    EXPECT_EQ(back[4], 0.0f) << ext << ": -Inf is written as 0";
    EXPECT_GT(back[0], 0.0f) << ext << ": finite values are kept";
  }
}

TEST(RobustNumerics, NonFiniteSamplesAreCountedDroppedAndNeverWritten) {
  std::string dir = MakeTempDir();
  std::string scene = WriteInfScene(dir);
  for (const char* ext : {".pfm", ".hdr"}) {
    std::string out = dir + "/inf" + ext;
    CommandResult r = RunTracer(scene + kInfCamera + " --backend cpu --width 16 --height 16 --spp 4 -o " + out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("warning: ([0-9]+) non-finite samples were dropped")))
        << "the scene is built to overflow; the drop must be reported:\n"
        << r.output;
    EXPECT_GT(std::stoll(m[1]), 0);
    int w = 0, h = 0, n = 0;
    std::vector<float> px;
    if (std::string(ext) == ".pfm") {
      px = ReadPfm(out, w, h);
    } else {
      float* p = stbi_loadf(out.c_str(), &w, &h, &n, 3);
      ASSERT_NE(p, nullptr);
      px.assign(p, p + 16 * 16 * 3);
      stbi_image_free(p);
    }
    ASSERT_EQ(px.size(), 16u * 16 * 3);
    for (float v : px) ASSERT_TRUE(std::isfinite(v)) << ext;
  }
}

TEST(RobustNumerics, CheckNanStopsAtTheFirstNonFiniteSample) {
  std::string dir = MakeTempDir();
  std::string scene = WriteInfScene(dir);
  CommandResult r =
      RunTracer(scene + kInfCamera + " --backend cpu --check-nan --width 16 --height 16 --spp 64 -o " + dir + "/x.pfm");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m, std::regex("non-finite sample at pixel \\(([0-9]+), ([0-9]+)\\).*depth ([0-9]+)")))
      << r.output;
  EXPECT_LT(std::stoi(m[1]), 16);
  EXPECT_LT(std::stoi(m[2]), 16);
  // Camera ray, glass wall, light: the Inf appears where the path reaches the light, one vertex past the glass.
  EXPECT_GE(std::stoi(m[3]), 1) << r.output;
  EXPECT_FALSE(FileExists(dir + "/x.pfm")) << "--check-nan aborts: no image";
  // A clean scene renders normally with the flag on.
  CommandResult clean =
      RunTracer(Cornell() + " --backend cpu --check-nan --width 8 --height 8 --spp 2 -o " + dir + "/c.pfm");
  EXPECT_EQ(clean.exitCode, 0) << clean.output;
}

TEST(RobustNumerics, ClampIsOffByDefaultAndCapsFireflies) {
  std::string dir = MakeTempDir();
  std::string scene = WriteFireflyScene(dir);
  const std::string common = scene + kFireflyCamera + " --backend cpu --width 32 --height 32 --spp 4 --max-depth 2 -o ";
  CommandResult plain = RunTracer(common + dir + "/plain.pfm");
  CommandResult clamped = RunTracer(common + dir + "/clamped.pfm --clamp 1");
  ASSERT_EQ(plain.exitCode, 0) << plain.output;
  ASSERT_EQ(clamped.exitCode, 0) << clamped.output;
  int w, h;
  double maxPlain = MaxValue(ReadPfm(dir + "/plain.pfm", w, h));
  double maxClamped = MaxValue(ReadPfm(dir + "/clamped.pfm", w, h));
  // The lamp (Ke 1e6) is seen directly, so without a clamp some pixel is far brighter than the bound below.
  EXPECT_GT(maxPlain, 100.0) << "the default must not clamp";
  // With --clamp 1 each contribution is at most 1; a path of max depth 2 adds at most 5 (emission at
  // 3 vertices, light samples at 2), so no pixel mean can exceed 5.
  EXPECT_LE(maxClamped, 5.0);
  EXPECT_GT(maxClamped, 0.0);
}

// ================================ no GPU ================================

TEST(RobustGpu, HiddenDevicesFallBackToTheCpuUnderAuto) {
  std::string dir = MakeTempDir();
  CommandResult r =
      RunTracer(Cornell() + " --width 8 --height 8 --spp 1 -o " + dir + "/a.png", 120, "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // The fallback is announced with its reason, in the line that opens the render.
  EXPECT_TRUE(Contains(r.output, "on the CPU (no usable GPU: ") ||
              Contains(r.output, "on the CPU (this build has no CUDA)"))
      << "the fallback is announced:\n"
      << r.output;
  EXPECT_TRUE(Contains(r.output, "rendered on cpu")) << r.output;
  EXPECT_TRUE(FileExists(dir + "/a.png"));
}

TEST(RobustGpu, HiddenDevicesFailCleanlyUnderBackendCuda) {
  std::string dir = MakeTempDir();
  CommandResult r = RunTracer(Cornell() + " --backend cuda --width 8 --height 8 --spp 1 -o " + dir + "/a.png", 120,
                              "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "error: --backend cuda")) << r.output;
  EXPECT_TRUE(ListDir(dir).empty());
}

// ================================ long renders: progress, --quiet, --time ================================

TEST(RobustProgress, BarOnlyWhenStderrIsATerminal) {
  std::string dir = MakeTempDir();
  const std::string args = Cornell() + " --backend cpu --width 16 --height 16 --spp 64 -o " + dir + "/x.png";
  CommandResult piped = RunTracer(args);
  ASSERT_EQ(piped.exitCode, 0) << piped.output;
  EXPECT_FALSE(Contains(piped.output, "ETA")) << "no progress bar into a pipe:\n" << piped.output;
  EXPECT_TRUE(Contains(piped.output, "rendered on cpu"));

  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux 'script' is missing: no pty";
  // script(1) gives the tracer a pseudo-terminal for stdin, stdout and stderr.
  auto underPty = [&](const std::string& extra) {
    std::string cmd = std::string(TRACER_EXE) + " " + args + extra;
    FILE* p = popen(("script -qec '" + cmd + "' /dev/null 2>&1").c_str(), "r");
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    EXPECT_EQ(pclose(p), 0) << out;
    return out;
  };
  std::string tty = underPty("");
  EXPECT_TRUE(Contains(tty, "ETA") && Contains(tty, "/64 spp") && Contains(tty, "Mrays/s"))
      << "a progress bar on a terminal:\n"
      << tty;
  std::string quiet = underPty(" --quiet");
  EXPECT_FALSE(Contains(quiet, "ETA")) << "--quiet silences the bar:\n" << quiet;
  EXPECT_FALSE(Contains(quiet, "rendered on")) << quiet;
}

TEST(RobustProgress, QuietPrintsOnlyErrors) {
  std::string dir = MakeTempDir();
  CommandResult ok = RunTracer(Cornell() + " --backend cpu --quiet --width 8 --height 8 --spp 2 -o " + dir + "/x.png");
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
  EXPECT_EQ(ok.output, "") << "--quiet on a clean render prints nothing";
  CommandResult bad = RunTracer(dir + "/none.obj --backend cpu --quiet -o " + dir + "/y.png");
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_TRUE(Contains(bad.output, "none.obj")) << "errors still show under --quiet:\n" << bad.output;
}

// The same warning at many lines is printed once, with a count; --quiet prints no warning at all.
TEST(RobustProgress, WarningsAreDeduplicatedAndQuietSilencesThem) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/d.mtl", "newmtl a\nKd 2 0 0\nKe 1 1 1\nnewmtl a\nKd 2 0 0\nnewmtl a\nKd 2 0 0\n");
  WriteFile(dir + "/d.obj", "mtllib d.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n");
  const std::string args = dir + "/d.obj --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.png";
  CommandResult r = RunTracer(args);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string clamped = "tracer: warning: " + dir +
                              "/d.mtl:1: material 'a': Kd (2, 0, 0) is out of range; clamped to (1, 0, 0) (and 2 "
                              "more like it)\n";
  EXPECT_TRUE(Contains(r.output, clamped)) << r.output;
  EXPECT_EQ(r.output.find("is out of range"), r.output.rfind("is out of range")) << "printed once:\n" << r.output;
  EXPECT_TRUE(Contains(r.output, "tracer: warning: " + dir +
                                     "/d.mtl:4: material 'a' is defined again (3 definitions in all); the first "
                                     "definition, at " +
                                     dir + "/d.mtl:1, is used\n"))
      << r.output;
  CommandResult quiet = RunTracer(args + " --quiet");
  EXPECT_EQ(quiet.exitCode, 0);
  EXPECT_EQ(quiet.output, "") << "--quiet keeps only errors";
}

TEST(RobustProgress, BlackImageWarnsAndIsStillWritten) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/dark.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const std::string args = dir + "/dark.obj --backend cpu --width 8 --height 8 --spp 1 -o " + dir + "/x.pfm";
  CommandResult dark = RunTracer(args);
  ASSERT_EQ(dark.exitCode, 0) << dark.output;
  EXPECT_TRUE(FileExists(dir + "/x.pfm"));
  EXPECT_TRUE(Contains(dark.output, "only an environment can light it: pass --env R,G,B or --env-map FILE.hdr"))
      << dark.output;
  // What is true of this scene: no emitters and no environment (nothing about the camera, which sees the front).
  EXPECT_TRUE(Contains(dark.output,
                       "tracer: warning: the image is entirely black: no pixel received any light. The scene has no "
                       "emitters (Ke in the MTL): pass --env R,G,B or --env-map FILE (.hdr or .exr), or add an "
                       "emitter\n"))
      << dark.output;
  EXPECT_FALSE(Contains(dark.output, "--eye")) << dark.output;
  CommandResult lit = RunTracer(args + " --env 0.5,0.5,0.5");
  ASSERT_EQ(lit.exitCode, 0) << lit.output;
  EXPECT_FALSE(Contains(lit.output, "entirely black")) << lit.output;
}

TEST(RobustLongRender, TimeLimitStopsAtAPassBoundaryAndRecordsTheSpp) {
  std::string dir = MakeTempDir();
  auto t0 = Clock::now();
  CommandResult r = RunTracer(Cornell() + " --backend cpu --width 32 --height 32 --spp 100000000 --time 1 -o " + dir +
                                  "/t.pfm --checkpoint " + dir + "/t.ckpt",
                              60);
  const double wall = Seconds(t0);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_LT(wall, 20.0) << "--time 1 must stop the render long before 10^8 spp";
  int spp = SppFromMessage(r.output, "stopped by --time after");
  ASSERT_GT(spp, 0) << r.output;
  EXPECT_LT(spp, 100000000);
  EXPECT_TRUE(Contains(r.output, "rendered on cpu (") && Contains(r.output, ": " + std::to_string(spp) + " spp"))
      << r.output;
  // The checkpoint records the samples reached, and the image is that film resolved.
  Checkpoint c = LoadCheckpoint(dir + "/t.ckpt");
  EXPECT_EQ(c.film.sppDone, spp);
  int w, h;
  std::vector<float> img = ReadPfm(dir + "/t.pfm", w, h);
  std::vector<float> film = c.film.Resolve();
  ASSERT_EQ(img.size(), film.size());
  EXPECT_EQ(0, std::memcmp(img.data(), film.data(), img.size() * sizeof(float)));
}

// ================================ long renders: signals ================================

// One signal: the current pass ends, the image so far is written atomically, the spp reached is printed
// and checkpointed, and the exit code is 128 + signal. The checkpoint then resumes to exactly the image
// of an uninterrupted render.
void SignalFinishesThePass(int sig) {
  std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 32 --height 32 --seed 5";
  Spawned p = Spawn(base + " --spp 100000000 -o " + dir + "/i.pfm --checkpoint " + dir + "/i.ckpt", dir + "/log");
  ASSERT_TRUE(p.WaitForLog("rendering " + Cornell(), 30)) << p.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(p.pid, sig), 0);
  int code = p.Wait(30);
  std::string log = p.Log();
  ASSERT_EQ(code, 128 + sig) << log;
  int spp = SppFromMessage(log, "interrupted at");
  ASSERT_GT(spp, 0) << log;

  // The image is complete and valid, its temporary file gone.
  EXPECT_EQ(ListDir(dir), (std::set<std::string>{"i.pfm", "i.ckpt", "log"}));
  int w = 0, h = 0;
  std::vector<float> img = ReadPfmOrEmpty(dir + "/i.pfm", w, h);
  ASSERT_EQ(img.size(), 32u * 32 * 3) << "not a valid 32x32 PFM";
  Checkpoint c = LoadCheckpoint(dir + "/i.ckpt");
  EXPECT_EQ(c.film.sppDone, spp);
  std::vector<float> film = c.film.Resolve();
  EXPECT_EQ(0, std::memcmp(img.data(), film.data(), img.size() * sizeof(float)))
      << "the image is the checkpointed film";

  // Resume a little further, and compare with one uninterrupted render of the same length.
  const std::string target = " --spp " + std::to_string(spp + 6);
  CommandResult resumed = RunTracer(base + target + " -o " + dir + "/resumed.pfm --resume " + dir + "/i.ckpt");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  // Rendering all samples afresh would also match; the resumed run must have taken only the rest.
  EXPECT_TRUE(Contains(resumed.output,
                       ": " + std::to_string(spp + 6) + " spp (" + std::to_string(spp) + " from the checkpoint)"))
      << resumed.output;
  CommandResult whole = RunTracer(base + target + " -o " + dir + "/whole.pfm");
  ASSERT_EQ(whole.exitCode, 0) << whole.output;
  EXPECT_EQ(ReadFile(dir + "/resumed.pfm"), ReadFile(dir + "/whole.pfm"))
      << "resumed render differs from uninterrupted";
}

TEST(RobustSignals, SigintFinishesThePassWritesTheImageAndExits130) { SignalFinishesThePass(SIGINT); }
TEST(RobustSignals, SigtermFinishesThePassWritesTheImageAndExits143) { SignalFinishesThePass(SIGTERM); }

TEST(RobustSignals, SecondSignalExitsAtOnce) {
  std::string dir = MakeTempDir();
  // One thread on 2048x2048: the first pass (one sample per pixel) takes seconds, so a single signal would
  // wait for it and then write an image. Two signals must not wait.
  Spawned p = Spawn(Cornell() + " --backend cpu --threads 1 --width 2048 --height 2048 --spp 4 -o " + dir + "/x.pfm",
                    dir + "/log");
  ASSERT_TRUE(p.WaitForLog("rendering " + Cornell(), 30)) << p.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto t0 = Clock::now();
  ASSERT_EQ(kill(p.pid, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(kill(p.pid, SIGINT), 0);
  int code = p.Wait(60);
  EXPECT_EQ(code, 130) << p.Log();
  EXPECT_LT(Seconds(t0), 1.0) << "the second signal must not wait for the pass";
  EXPECT_FALSE(Contains(p.Log(), "rendered on")) << "the pass should not have finished:\n" << p.Log();
  EXPECT_FALSE(FileExists(dir + "/x.pfm"));
}

// ================================ checkpoint and resume through the CLI ================================

TEST(RobustResume, ResumedRenderEqualsAnUninterruptedOne) {
  std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 32 --height 24 --seed 3 --spp 24";
  CommandResult whole = RunTracer(base + " -o " + dir + "/whole.pfm");
  ASSERT_EQ(whole.exitCode, 0) << whole.output;
  // --time stops after the first pass (4 spp at this size), and the checkpoint holds it.
  CommandResult part = RunTracer(base + " --time 1e-9 -o " + dir + "/part.pfm --checkpoint " + dir + "/c.ckpt");
  ASSERT_EQ(part.exitCode, 0) << part.output;
  int spp = SppFromMessage(part.output, "stopped by --time after");
  ASSERT_GT(spp, 0) << part.output;
  ASSERT_LT(spp, 24) << part.output;
  EXPECT_EQ(LoadCheckpoint(dir + "/c.ckpt").film.sppDone, spp);
  EXPECT_NE(ReadFile(dir + "/part.pfm"), ReadFile(dir + "/whole.pfm"));
  // Resume in two steps (the second one also continuing the checkpoint it rewrites).
  CommandResult step = RunTracer(base + " --time 1e-9 --resume " + dir + "/c.ckpt --checkpoint " + dir + "/c.ckpt -o " +
                                 dir + "/step.pfm");
  ASSERT_EQ(step.exitCode, 0) << step.output;
  EXPECT_GT(LoadCheckpoint(dir + "/c.ckpt").film.sppDone, spp);
  CommandResult rest = RunTracer(base + " --resume " + dir + "/c.ckpt -o " + dir + "/resumed.pfm");
  ASSERT_EQ(rest.exitCode, 0) << rest.output;
  EXPECT_TRUE(Contains(rest.output, "from the checkpoint")) << rest.output;
  EXPECT_EQ(ReadFile(dir + "/resumed.pfm"), ReadFile(dir + "/whole.pfm")) << "resume must be bit-identical";
}

TEST(RobustResume, PeriodicCheckpointsSurviveAHardKill) {
  std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 32 --height 32 --seed 9";
  // A checkpoint after every pass; SIGKILL gives the tracer no chance to save at the end.
  Spawned p =
      Spawn(base + " --spp 100000000 --checkpoint-interval 0 -o " + dir + "/k.pfm --checkpoint " + dir + "/k.ckpt",
            dir + "/log");
  ASSERT_TRUE(p.WaitForLog("rendering " + Cornell(), 30)) << p.Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(p.pid, SIGKILL);
  EXPECT_EQ(p.Wait(30), 128 + SIGKILL);
  EXPECT_FALSE(FileExists(dir + "/k.pfm"));
  Checkpoint c = LoadCheckpoint(dir + "/k.ckpt");  // throws if the kill left a torn file
  ASSERT_GT(c.film.sppDone, 0);
  const std::string target = " --spp " + std::to_string(c.film.sppDone + 4);
  CommandResult resumed = RunTracer(base + target + " --resume " + dir + "/k.ckpt -o " + dir + "/r.pfm");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_TRUE(Contains(resumed.output, "(" + std::to_string(c.film.sppDone) + " from the checkpoint)"))
      << resumed.output;
  ASSERT_EQ(RunTracer(base + target + " -o " + dir + "/w.pfm").exitCode, 0);
  EXPECT_EQ(ReadFile(dir + "/r.pfm"), ReadFile(dir + "/w.pfm"));
}

TEST(RobustResume, DifferentSettingsAreRefusedByName) {
  std::string dir = MakeTempDir();
  std::string scene = WriteFireflyScene(dir);
  const std::string base = scene + kFireflyCamera + " --backend cpu -o " + dir + "/x.pfm";
  const std::string ckpt = dir + "/c.ckpt";
  ASSERT_EQ(RunTracer(base + " --spp 4 --width 16 --height 16 --checkpoint " + ckpt).exitCode, 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--width 17 --height 16", "width: '16' in the checkpoint, '17' now"},
      {"--width 16 --height 16 --seed 2", "seed: '1' in the checkpoint, '2' now"},
      {"--width 16 --height 16 --max-depth 3", "max-depth"},
      {"--width 16 --height 16 --clamp 5", "clamp"},
      {"--width 16 --height 16 --fov 50", "camera-tan-half-fov"},
      {"--width 16 --height 16 --env 1,1,1", "env"},
      {"--width 16 --height 16 --light-sampling tiles", "light-sampling"},
  };
  for (const auto& [args, message] : cases) {
    CommandResult r = RunTracer(base + " --spp 8 --resume " + ckpt + " " + args);
    EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, "--resume " + ckpt) && Contains(r.output, message))
        << args << ": expected '" << message << "' in\n"
        << r.output;
  }
  // An edited MTL keeps the OBJ's path and size; the content hash still tells.
  WriteFile(dir + "/firefly.mtl", "newmtl floor\nKd 0.5 0.8 0.8\nnewmtl lamp\nKd 0 0 0\nKe 1000000 1000000 1000000\n");
  CommandResult edited = RunTracer(base + " --width 16 --height 16 --spp 8 --resume " + ckpt);
  EXPECT_EQ(edited.exitCode, 2) << edited.output;
  EXPECT_TRUE(Contains(edited.output, "scene-content: the materials differ (an MTL file changed)")) << edited.output;
}

TEST(RobustResume, CorruptOrForeignCheckpointsAreErrorsNamingTheFile) {
  std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 8 --height 8";
  const std::string ckpt = dir + "/c.ckpt";
  ASSERT_EQ(RunTracer(base + " --spp 4 -o " + dir + "/x.pfm --checkpoint " + ckpt).exitCode, 0);
  std::string good = ReadFile(ckpt);
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x40;  // a bit in the film sums
  WriteFile(dir + "/flipped.ckpt", bad);
  WriteFile(dir + "/short.ckpt", good.substr(0, good.size() - 1));
  WriteFile(dir + "/image.ckpt", ReadFile(dir + "/x.pfm"));
  for (const auto& [name, message] :
       std::vector<std::pair<std::string, std::string>>{{"flipped.ckpt", "checksum mismatch"},
                                                        {"short.ckpt", "truncated"},
                                                        {"image.ckpt", "not a tracer checkpoint"}}) {
    CommandResult r = RunTracer(base + " --spp 8 -o " + dir + "/y.pfm --resume " + dir + "/" + name);
    EXPECT_EQ(r.exitCode, 1) << name << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, dir + "/" + name + ": " + message)) << name << "\n" << r.output;
  }
  // A checkpoint that already holds enough samples is written out as it is.
  CommandResult done = RunTracer(base + " --spp 2 --resume " + ckpt + " -o " + dir + "/again.pfm");
  EXPECT_EQ(done.exitCode, 0) << done.output;
  EXPECT_TRUE(Contains(done.output, "already holds 4 spp")) << done.output;
  EXPECT_EQ(ReadFile(dir + "/again.pfm"), ReadFile(dir + "/x.pfm"));
}

// ================================ the checkpoint format ================================

Checkpoint SampleCheckpoint(int w, int h) {
  Checkpoint c;
  c.film.Reset(w, h);
  std::mt19937_64 rng(42);
  for (auto& v : c.film.sum) v = rng();
  c.film.sppDone = 37;
  c.film.dropped = 5;
  c.seed = 0xdeadbeef;
  c.settings = "scene=/a/b.obj\nwidth=" + std::to_string(w) + "\nheight=" + std::to_string(h) + "\n";
  return c;
}

TEST(RobustCheckpointFormat, RoundTripKeepsEveryField) {
  std::string dir = MakeTempDir();
  Checkpoint a = SampleCheckpoint(7, 5);
  SaveCheckpoint(dir + "/a.ckpt", a);
  struct stat st;
  ASSERT_EQ(stat((dir + "/a.ckpt").c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), 56 + a.settings.size() + 7 * 5 * 3 * 8 + 8)
      << "the layout in checkpoint.h";
  Checkpoint b = LoadCheckpoint(dir + "/a.ckpt");
  EXPECT_EQ(b.film.width, 7);
  EXPECT_EQ(b.film.height, 5);
  EXPECT_EQ(b.film.sppDone, 37);
  EXPECT_EQ(b.film.dropped, 5u);
  EXPECT_EQ(b.seed, 0xdeadbeefu);
  EXPECT_EQ(b.settings, a.settings);
  EXPECT_EQ(b.film.sum, a.film.sum);
  EXPECT_EQ(ListDir(dir), std::set<std::string>{"a.ckpt"}) << "no temporary file is left";
}

TEST(RobustCheckpointFormat, FailedSaveKeepsThePreviousCheckpoint) {
  std::string dir = MakeTempDir();
  const std::string path = dir + "/c.ckpt";
  Checkpoint first = SampleCheckpoint(4, 4);
  SaveCheckpoint(path, first);
  // A folder where the temporary file would go makes the next save fail before the rename.
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  ASSERT_EQ(mkdir(tmp.c_str(), 0755), 0);
  Checkpoint second = first;
  second.film.sppDone = 99;
  try {
    SaveCheckpoint(path, second);
    ADD_FAILURE() << "saving through a folder in the way must fail";
  } catch (const CheckpointError& e) {
    EXPECT_TRUE(Contains(e.what(), path + ": cannot write checkpoint")) << e.what();
  }
  rmdir(tmp.c_str());
  EXPECT_EQ(LoadCheckpoint(path).film.sppDone, 37) << "the old checkpoint is intact";
  EXPECT_THROW(SaveCheckpoint("/proc/c.ckpt", first), CheckpointError);
  EXPECT_THROW(SaveCheckpoint(dir + "/missing/c.ckpt", first), CheckpointError);
}

TEST(RobustCheckpointFormat, EveryCorruptionIsRefusedWithTheFileName) {
  std::string dir = MakeTempDir();
  const std::string goodPath = dir + "/good.ckpt";
  Checkpoint c = SampleCheckpoint(6, 4);
  SaveCheckpoint(goodPath, c);
  const std::string good = ReadFile(goodPath);
  auto put32 = [](std::string s, size_t at, uint32_t v) {
    std::memcpy(&s[at], &v, 4);
    return s;
  };
  const size_t settingsAt = 56, sumsAt = 56 + c.settings.size();
  std::string flipSum = good, flipSettings = good, flipCheck = good;
  flipSum[sumsAt + 17] ^= 1;
  flipSettings[settingsAt + 3] ^= 1;
  flipCheck[good.size() - 1] ^= 0x80;
  const std::vector<test::CheckpointCase> cases = {
      {"", "not a tracer checkpoint"},
      {good.substr(0, 40), "not a tracer checkpoint"},
      {"X" + good.substr(1), "wrong magic"},
      {put32(good, 8, 3), "checkpoint version 3"},
      {put32(good, 12, 0), "image size 0x4"},
      {put32(good, 12, 0xffffffffu), "image size -1x4"},
      // 32768 x 32768 claims 24 GiB of sums: refused by the size check, not by an allocation
      {put32(put32(good, 12, 32768), 16, 32768), "image size 32768x32768"},
      {put32(put32(good, 12, 16384), 16, 16384), "truncated"},
      {put32(good, 20, 0x80000000u), "negative sample count"},
      {put32(good, 28, 0xfffffff0u), "settings length"},
      {good.substr(0, good.size() - 1), "truncated"},
      {good + "x", "1 unexpected bytes"},
      {flipSum, "checksum mismatch"},
      {flipSettings, "checksum mismatch"},
      {flipCheck, "checksum mismatch"},
  };
  test::ExpectEachCheckpointRefused(dir, cases);
  // Not a regular file, or no file at all.
  EXPECT_THROW(LoadCheckpoint(dir), CheckpointError);
  EXPECT_THROW(LoadCheckpoint("/dev/zero"), CheckpointError);
  EXPECT_THROW(LoadCheckpoint(dir + "/missing.ckpt"), CheckpointError);
  std::string fifo = dir + "/pipe.ckpt";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(LoadCheckpoint(fifo), CheckpointError);  // must not block
}

TEST(RobustCheckpointFormat, HashNoticesEverySingleBitAndStreamsInAnySplit) {
  std::vector<unsigned char> data(1024);
  std::mt19937 rng(1);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  const uint64_t h = HashBytes(data.data(), data.size());
  std::set<uint64_t> seen{h};
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    seen.insert(HashBytes(data.data(), data.size()));
    data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
  EXPECT_EQ(seen.size(), data.size() * 8 + 1) << "some single-bit flips collide";
  for (size_t split : {0, 1, 3, 8, 13, 1000}) {
    Hasher s;
    s.Update(data.data(), split);
    s.Update(data.data() + split, data.size() - split);
    EXPECT_EQ(s.Digest(), h) << "split at " << split;
  }
  // Trailing zero bytes change the length, so the hash.
  EXPECT_NE(HashBytes("ab", 2), HashBytes("ab\0", 3));
}

TEST(RobustCheckpointFormat, SettingsMismatchNamesEachKey) {
  EXPECT_EQ(DescribeSettingsMismatch("a=1\nb=2\n", "a=1\nb=2\n"), "");
  EXPECT_EQ(DescribeSettingsMismatch("a=1\nb=2\n", "a=1\nb=3\n"), "b: '2' in the checkpoint, '3' now");
  std::string both = DescribeSettingsMismatch("a=1\nb=2\n", "a=0\nc=2\n");
  EXPECT_TRUE(Contains(both, "a: '1' in the checkpoint, '0' now") &&
              Contains(both, "b: '2' in the checkpoint, not set now") &&
              Contains(both, "c: not in the checkpoint, '2' now"))
      << both;
  // The lines that explain scene-content: absent from an older checkpoint, they refuse nothing; present in both,
  // they name the input that changed.
  const std::string parts = "scene-content-parts=materials:1,textures:2,environment-map:3\n";
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\nseed=1\n", "scene-content=a\n" + parts + "seed=1\n"), "");
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\n" + parts, "scene-content=b\n" + parts),
            "scene-content: the geometry differs (the scene file's vertices, faces or groups changed)");
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\n" + parts,
                                     "scene-content=b\nscene-content-parts=materials:1,textures:9,environment-map:3\n"),
            "scene-content: the textures differ (a texture image changed)");
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\n", "scene-content=b\n" + parts),
            "scene-content: the scene file, its MTL files or textures, or the environment map or its scale changed "
            "(this checkpoint does not record which)");
  // Another build's checkpoint (another scene layout, or none recorded): the build is named, not the scene.
  const std::string layout = "scene-layout=0123\n";
  for (const std::string& saved : {"scene-content=a\n" + parts, "scene-content=a\n" + parts + "scene-layout=4567\n"}) {
    const std::string why = DescribeSettingsMismatch(saved, "scene-content=b\n" + parts + layout);
    EXPECT_TRUE(Contains(why, "written by another build of tracer") && Contains(why, "without --resume") &&
                !Contains(why, "geometry"))
        << why;
  }
  // The same layout: the scene's own difference, as before; the same scene under another layout refuses nothing.
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\n" + parts + layout, "scene-content=b\n" + parts + layout),
            "scene-content: the geometry differs (the scene file's vertices, faces or groups changed)");
  EXPECT_EQ(DescribeSettingsMismatch("scene-content=a\n" + parts + "scene-layout=4567\n",
                                     "scene-content=a\n" + parts + layout),
            "");
  EXPECT_NE(SceneLayoutHash(), 0u);
}

}  // namespace
}  // namespace tracer
