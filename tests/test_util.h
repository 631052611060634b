// @file test_util.h: helpers shared by the tests: scene locations, temporary files, running the CLI.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer::test {

// The third-party test scenes' folder: $TRACER_SHARED_SCENES, else the one the build was configured with (CMake's
// TRACER_SHARED_SCENES, by default .benchscenes/shared in the checkout); empty when it does not exist.
std::string SharedScenesDir();
// The project's tests/ and scenes/ folders.
std::string TestDir();
std::string ProjectScenesDir();
// A fresh, empty temporary directory (removed by the OS's tmp cleaning; tests keep it small).
std::string MakeTempDir();
// Removes a directory made by MakeTempDir (anything else is left alone).
void RemoveTree(const std::string& dir);
// Unpacks one of the shared .tar.xz scenes into a fresh temporary directory; returns "" on failure.
std::string Unpack(const std::string& archive);
// Whether tar and xz are installed (Unpack needs both).
bool HaveTarXz();
void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);

// Random triangle soup (3 positions per triangle): mostly small triangles of varied size, plus coplanar sheets, exact
// duplicates, zero-area triangles and shared vertices, so that SAH, ties and degenerate boxes are all exercised.
std::vector<Vec3> RandomSoup(int n, uint32_t seed);

// Writes dir/STEM.mtl with `mtl` and dir/STEM.obj holding one triangle for each of its newmtl materials, in order,
// and loads it: the way to test what the loader makes of MTL lines.
Scene LoadOneTrianglePerMaterial(const std::string& dir, const std::string& stem, const std::string& mtl);

// Render options for a small test image: w x h at spp samples, paths of at most maxDepth bounces, no progress.
RenderOptions QuietRender(int w, int h, int spp, int maxDepth);

// The loader's warnings that contain `part`, counted; and all of them, a line each (for a failure's message).
size_t CountWarnings(const Scene& scene, const std::string& part);
std::string AllWarnings(const Scene& scene);

// The BSDF that a hit at barycentrics (b1, b2) of triangle 0 of `scene` gets (GetBsdf, the scene lit by nothing and
// seen from 5 units), and its shading frame (ShadingFrame).
struct TriangleHit {
  SurfaceBsdf bsdf;
  Frame frame;
};
TriangleHit BsdfAtTriangle(const Scene& scene, float b1, float b2);

// The scene's render data with its own camera (SCENE.camera) at w x h, and a constant environment (none by default).
SceneData BuildWithSceneCamera(const Scene& scene, int w, int h, const BvhBuildOptions& bvhOptions = {},
                               Vec3 environment = Vec3(0.0f));

struct CommandResult {
  int exitCode;        // the process's exit status, or 128 + signal
  std::string output;  // stdout and stderr together
};
// Runs a shell command line and collects its stdout and stderr.
CommandResult RunCommand(const std::string& command);
// Runs the tracer executable with the given arguments (a shell-quoted string), with a time limit, and with
// extra environment settings ("NAME=value ...") when env is not empty.
CommandResult RunTracer(const std::string& args, int timeoutSeconds = 120, const std::string& env = "");

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point t0);

// A process of our own (the tracer, or mpirun running it), so the test can signal it. stdout and stderr go to
// logPath.
struct Spawned {
  pid_t pid = -1;
  std::string logPath;
  std::string Log() const { return ReadFile(logPath); }
  // Polls the log until it contains `text` (true) or the process ended or time ran out (false).
  bool WaitForLog(const std::string& text, double seconds) const;
  // Exit code (128 + signal when killed); kills it and reports -1 after `seconds`.
  int Wait(double seconds);
};
// The tracer with these arguments.
Spawned Spawn(const std::string& args, const std::string& logPath);
// Any shell command line; it is exec'd, so that the pid is the command's own and not a shell's.
Spawned SpawnCommand(const std::string& command, const std::string& logPath);

// "... interrupted at N of M spp ..." or "stopped by --time after N of M spp": N, or -1.
int SppFromMessage(const std::string& output, const std::string& prefix);

}  // namespace tracer::test

// Skips the current test when the shared scenes folder (or the named file in it) is absent.
#define TRACER_SHARED_SCENE_OR_SKIP(var, relpath)                                                \
  std::string var = ::tracer::test::SharedScenesDir();                                           \
  if (var.empty() || !::tracer::test::FileExists(var + "/" + (relpath)))                         \
    GTEST_SKIP() << "shared scene " << (relpath)                                                 \
                 << " not found (the shared scenes folder is absent; set TRACER_SHARED_SCENES)"; \
  var += std::string("/") + (relpath)
