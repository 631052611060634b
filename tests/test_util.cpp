// @file test_util.cpp: helpers shared by the tests.
#include "test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

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

void RemoveTree(const std::string& dir) {
  // Best effort: a folder left behind in /tmp fails no test.
  if (dir.rfind("/tmp/tracer_test_", 0) == 0 && std::system(("rm -rf '" + dir + "'").c_str()) != 0) return;
}

std::string Unpack(const std::string& archive) {
  std::string dir = MakeTempDir();
  std::string cmd = "tar -xJf '" + archive + "' -C '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) {
    RemoveTree(dir);
    return "";
  }
  return dir;
}

bool HaveTarXz() { return std::system("command -v tar >/dev/null 2>&1 && command -v xz >/dev/null 2>&1") == 0; }

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

CommandResult RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return CommandResult{code, out};
}

CommandResult RunTracer(const std::string& args, int timeoutSeconds, const std::string& env) {
  return RunCommand((env.empty() ? "" : "env " + env + " ") + "timeout -s KILL " + std::to_string(timeoutSeconds) +
                    " " + std::string(TRACER_EXE) + " " + args);
}

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool Spawned::WaitForLog(const std::string& text, double seconds) const {
  auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    if (Log().find(text) != std::string::npos) return true;
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return Log().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int Spawned::Wait(double seconds) {
  auto t0 = Clock::now();
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (Seconds(t0) > seconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Spawned SpawnCommand(const std::string& command, const std::string& logPath) {
  Spawned s;
  s.logPath = logPath;
  std::string cmd = "exec " + command + " >" + logPath + " 2>&1";
  s.pid = fork();
  if (s.pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return s;
}

Spawned Spawn(const std::string& args, const std::string& logPath) {
  return SpawnCommand(std::string(TRACER_EXE) + " " + args, logPath);
}

int SppFromMessage(const std::string& output, const std::string& prefix) {
  std::smatch m;
  if (std::regex_search(output, m, std::regex(prefix + " ([0-9]+) of ([0-9]+) spp"))) return std::stoi(m[1]);
  return -1;
}

Scene LoadOneTrianglePerMaterial(const std::string& dir, const std::string& stem, const std::string& mtl) {
  WriteFile(dir + "/" + stem + ".mtl", mtl);
  std::string obj = "mtllib " + stem + ".mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\n";
  std::istringstream lines(mtl);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("newmtl ", 0) == 0) obj += "usemtl " + line.substr(7) + "\nf 1 2 3\n";
  WriteFile(dir + "/" + stem + ".obj", obj);
  return LoadScene(dir + "/" + stem + ".obj");
}

RenderOptions QuietRender(int w, int h, int spp, int maxDepth) {
  RenderOptions o;
  o.width = w;
  o.height = h;
  o.spp = spp;
  o.maxDepth = maxDepth;
  o.quiet = true;
  return o;
}

size_t CountWarnings(const Scene& scene, const std::string& part) {
  size_t n = 0;
  for (const std::string& w : scene.warnings) n += w.find(part) != std::string::npos;
  return n;
}

std::string AllWarnings(const Scene& scene) {
  std::string all;
  for (const std::string& w : scene.warnings) all += w + "\n";
  return all;
}

TriangleHit BsdfAtTriangle(const Scene& scene, float b1, float b2) {
  const SceneData d =
      BuildSceneData(scene, Camera::LookAt(Vec3(0, 0, 5), Vec3(0), Vec3(0, 1, 0), 45.0f, 8, 8), Vec3(0.0f));
  const SceneView s = d.View();
  HitRecord hit;
  hit.t = 5.0f;
  hit.b1 = b1;
  hit.b2 = b2;
  hit.tri = 0;
  Surface sf = GetSurface<false>(s, hit);
  Vec3 emission;
  TriangleHit h;
  h.bsdf = GetBsdf<false>(s, sf, emission);
  h.frame = ShadingFrame<false>(s, sf, h.bsdf, sf.ns);
  return h;
}

SceneData BuildWithSceneCamera(const Scene& scene, int w, int h, const BvhBuildOptions& bvhOptions, Vec3 environment) {
  const Camera cam = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, scene.camera.fovY, w, h);
  return BuildSceneData(scene, cam, environment, bvhOptions);
}

// Random triangle soup: mostly small triangles of varied size, plus coplanar sheets, exact duplicates,
// zero-area triangles and shared vertices, so that SAH, ties and degenerate boxes are all exercised.
std::vector<Vec3> RandomSoup(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Vec3> p;
  auto rnd = [&](float s) { return Vec3(u(rng) * s, u(rng) * s, u(rng) * s); };
  for (int i = 0; i < n; ++i) {
    int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    size_t have = p.size() / 3;
    if (kind == 0 && have > 0) {  // exact duplicate of an earlier triangle
      size_t j = std::uniform_int_distribution<size_t>(0, have - 1)(rng);
      p.push_back(p[3 * j]);
      p.push_back(p[3 * j + 1]);
      p.push_back(p[3 * j + 2]);
    } else if (kind <= 2) {  // coplanar sheet z = 0.5 (axis-aligned, flat boxes)
      Vec3 c = rnd(10.0f);
      c.z = 0.5f;
      for (int k = 0; k < 3; ++k) p.push_back(c + Vec3(u(rng) - 0.5f, u(rng) - 0.5f, 0.0f) * 2.0f);
    } else if (kind == 3) {  // coplanar sheet on a tilted plane x + y + z = 15
      for (int k = 0; k < 3; ++k) {
        float x = u(rng) * 10.0f, y = u(rng) * 10.0f;
        p.push_back(Vec3(x, y, 15.0f - x - y));
      }
    } else if (kind == 4) {  // zero-area: a sliver with a repeated vertex
      Vec3 a = rnd(10.0f), b = a + rnd(1.0f);
      p.push_back(a);
      p.push_back(b);
      p.push_back(a);
    } else if (kind == 5 && have > 0) {  // shares an edge with an earlier triangle
      size_t j = std::uniform_int_distribution<size_t>(0, have - 1)(rng);
      p.push_back(p[3 * j + 1]);
      p.push_back(p[3 * j]);
      p.push_back(p[3 * j] + rnd(1.0f) - Vec3(0.5f));
    } else {  // random triangle, sizes spanning two decades
      Vec3 c = rnd(10.0f);
      float s = 0.05f + 2.0f * u(rng) * u(rng);
      for (int k = 0; k < 3; ++k) p.push_back(c + (rnd(2.0f) - Vec3(1.0f)) * s);
    }
  }
  return p;
}

}  // namespace tracer::test
