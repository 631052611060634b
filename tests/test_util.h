// @file test_util.h: helpers shared by the tests: scene locations, temporary files, running the CLI.
#pragma once
#include <string>

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
