// @file test_util.h: helpers shared by the tests: scene locations, temporary files, running the CLI.
#pragma once
#include <string>

#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer::test {

// ../shared/scenes, or $TRACER_SHARED_SCENES; empty when it does not exist.
std::string SharedScenesDir();
// The project's tests/ and scenes/ folders.
std::string TestDir();
std::string ProjectScenesDir();
// A fresh, empty temporary directory (removed by the OS's tmp cleaning; tests keep it small).
std::string MakeTempDir();
void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);
bool FileExists(const std::string& path);

// The scene's render data with its own camera (SCENE.camera) at w x h, no environment.
SceneData BuildWithSceneCamera(const Scene& scene, int w, int h);

struct CommandResult {
  int exitCode;        // the process's exit status, or 128 + signal
  std::string output;  // stdout and stderr together
};
// Runs the tracer executable with the given arguments (a shell-quoted string), with a time limit, and with
// extra environment settings ("NAME=value ...") when env is not empty.
CommandResult RunTracer(const std::string& args, int timeoutSeconds = 120, const std::string& env = "");

}  // namespace tracer::test

// Skips the current test when ../shared/scenes (or the named file in it) is absent.
#define TRACER_SHARED_SCENE_OR_SKIP(var, relpath)                                              \
  std::string var = ::tracer::test::SharedScenesDir();                                         \
  if (var.empty() || !::tracer::test::FileExists(var + "/" + (relpath)))                       \
    GTEST_SKIP() << "shared scene " << (relpath) << " not found (../shared/scenes is absent)"; \
  var += std::string("/") + (relpath)
