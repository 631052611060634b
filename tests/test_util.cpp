// @file test_util.cpp: helpers shared by the tests.
#include "test_util.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tracer::test {

std::string SharedScenesDir() {
  const char* env = std::getenv("TRACER_SHARED_SCENES");
  std::string dir = env && *env ? env : TRACER_SHARED_SCENES;
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  return dir;
}

std::string TestDir() { return TRACER_TEST_DIR; }
std::string ProjectScenesDir() { return std::string(TRACER_TEST_DIR) + "/../scenes"; }

std::string MakeTempDir() {
  std::string tmpl = "/tmp/tracer_test_XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream f(path, std::ios::binary);
  f << contents;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

CommandResult RunTracer(const std::string& args, int timeoutSeconds, const std::string& env) {
  std::string cmd = (env.empty() ? "" : "env " + env + " ") + "timeout -s KILL " + std::to_string(timeoutSeconds) +
                    " " + std::string(TRACER_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return CommandResult{code, out};
}

SceneData BuildWithSceneCamera(const Scene& scene, int w, int h) {
  const Camera cam = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, scene.camera.fovY, w, h);
  return BuildSceneData(scene, cam, Vec3(0.0f));
}

}  // namespace tracer::test
