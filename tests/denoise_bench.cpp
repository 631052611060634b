// @file denoise_bench.cpp: the CPU denoisers on a saved frame, timed and against a reference (not a test; run by hand).
//
//   build/tests/denoise_bench STEM [REFERENCE.pfm] [--threads N] [--per-pixel] [--gpu] [--repeats N]
//                             [--out OUT] [--set NAME=VALUE]...
//
// STEM names the files a render writes with `--denoise --aov noisy,halves,albedo,normal,position,depth,emission -o
// STEM.pfm`: STEM.noisy.pfm, STEM.halfA.pfm, ... Prints the filters' times (the best of --repeats runs on --threads
// host threads, default 1; wall clock and the process's CPU time) and, given a reference, relMSE (mean of (x - r)^2 /
// (r^2 + 0.01)) of the raw image and of each filter, and its mean over the reference's. --per-pixel times the
// regression's naive twin (settings.nforPerPixel) beside its tiles; --gpu (a CUDA build) also times the GPU's kernels
// (the median of --repeats after a warm-up) and gives the largest relative difference of each GPU image from the CPU's;
// --out writes each filter's image to OUT.FILTER.pfm and .png; --set changes a DenoiseSettings field (nforRadius,
// nforPatch, nforK, nforRidge, nforOutlier).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracer/host/denoise.h"
#include "tracer/host/image_io.h"

using namespace tracer;

namespace {

std::vector<float> Load(const std::string& path, int& w, int& h) {
  int iw = 0, ih = 0;
  std::vector<float> img = ReadPfm(path, iw, ih);
  if (w && (iw != w || ih != h)) throw std::runtime_error(path + ": not the size of the other images");
  w = iw, h = ih;
  return img;
}

double RelMse(const std::vector<float>& x, const std::vector<float>& r) {
  double s = 0.0;
  for (size_t i = 0; i < x.size(); ++i) s += (x[i] - r[i]) * (x[i] - r[i]) / (static_cast<double>(r[i]) * r[i] + 0.01);
  return s / static_cast<double>(x.size());
}

double Mean(const std::vector<float>& x) {
  double s = 0.0;
  for (const float v : x) s += v;
  return s / static_cast<double>(std::max<size_t>(1, x.size()));
}

void Set(DenoiseSettings& s, const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos) throw std::runtime_error("--set " + kv + ": expected NAME=VALUE");
  const std::string name = kv.substr(0, eq);
  const float value = std::stof(kv.substr(eq + 1));
  if (name == "nforRadius")
    s.nforRadius = static_cast<int>(value);
  else if (name == "nforPatch")
    s.nforPatch = static_cast<int>(value);
  else if (name == "nforK")
    s.nforK = value;
  else if (name == "nforRidge")
    s.nforRidge = value;
  else if (name == "nforOutlier")
    s.nforOutlier = value;
  else
    throw std::runtime_error("--set: unknown setting " + name);
}

#if defined(TRACER_HAVE_CUDA)
// The largest |x - r| / (|r| + 0.01) over the values.
double WorstRelative(const std::vector<float>& x, const std::vector<float>& r) {
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(x[i]) - r[i]) / (std::fabs(r[i]) + 0.01));
  return worst;
}
#endif

void GpuTimes(const DenoiseImages& in, const DenoiseSettings& settings, const DenoiseSettings& naive, int repeats,
              const std::vector<float>& atrous, const std::vector<float>& tiled, const std::vector<float>& ref) {
#if defined(TRACER_HAVE_CUDA)
  auto row = [&](const char* name, DenoiseMethod m, const DenoiseSettings& s, const std::vector<float>& cpu) {
    std::vector<float> image;
    const double ms = TimeDenoiseCuda(in, m, s, std::max(3, repeats), &image);
    std::printf("  GPU %-18s %10.3f ms  worst difference from the CPU %.3g", name, ms, WorstRelative(image, cpu));
    if (!ref.empty()) std::printf("  relMSE %.5g", RelMse(image, ref));
    std::printf("\n");
  };
  row("a-trous", DenoiseMethod::kAtrous, settings, atrous);
  row("regression", DenoiseMethod::kNfor, settings, tiled);
  row("regression per-pixel", DenoiseMethod::kNfor, naive, tiled);
#else
  (void)in, (void)settings, (void)naive, (void)repeats, (void)atrous, (void)tiled, (void)ref;
  throw std::runtime_error("--gpu: this build has no CUDA");
#endif
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: denoise_bench STEM [REFERENCE.pfm] [--threads N] [--per-pixel] [--repeats N] "
                 "[--set NAME=VALUE]...\n");
    return 2;
  }
  const std::string stem = argv[1];
  std::string refPath, outStem;
  int threads = 1, repeats = 1;
  bool perPixel = false, gpu = false;
  DenoiseSettings settings;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--per-pixel")
      perPixel = true;
    else if (a == "--gpu")
      gpu = true;
    else if (a == "--out" && i + 1 < argc)
      outStem = argv[++i];
    else if (a == "--set" && i + 1 < argc)
      Set(settings, argv[++i]);
    else if (refPath.empty() && a[0] != '-')
      refPath = a;
    else
      throw std::runtime_error("unknown argument " + a);
  }
  DenoiseImages in;
  int w = 0, h = 0;
  in.color = Load(stem + ".noisy.pfm", w, h);
  in.halfA = Load(stem + ".halfA.pfm", w, h);
  in.halfB = Load(stem + ".halfB.pfm", w, h);
  in.albedo = Load(stem + ".albedo.pfm", w, h);
  in.normal = Load(stem + ".normal.pfm", w, h);
  in.position = Load(stem + ".position.pfm", w, h);
  in.emission = Load(stem + ".emission.pfm", w, h);
  const std::vector<float> depth3 = Load(stem + ".depth.pfm", w, h);  // grey RGB
  in.depth.resize(depth3.size() / 3);
  for (size_t p = 0; p < in.depth.size(); ++p) in.depth[p] = depth3[3 * p];
  in.width = w, in.height = h;
  std::vector<float> ref;
  if (!refPath.empty()) ref = Load(refPath, w, h);
  auto run = [&](const char* name, DenoiseMethod m, const DenoiseSettings& s) {
    double best = 1e30, bestCpu = 1e30;
    std::vector<float> out;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      out = DenoiseCpu(in, m, threads, s);
      bestCpu = std::min(bestCpu, 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    // The process's CPU time beside the wall clock: on a shared machine it is the steadier of the two.
    std::printf("  %-22s %10.1f ms (CPU %.1f ms)", name, best, bestCpu);
    if (!ref.empty()) std::printf("  relMSE %.5g  mean/reference %.4f", RelMse(out, ref), Mean(out) / Mean(ref));
    std::printf("\n");
    if (!outStem.empty()) {
      std::string file = outStem + "." + name;
      std::replace(file.begin() + static_cast<long>(outStem.size()), file.end(), ' ', '-');
      WriteImage(file + ".pfm", out, in.width, in.height);
      WriteImage(file + ".png", out, in.width, in.height);
    }
    return out;
  };
  std::printf("%s (%dx%d, %d thread%s)\n", stem.c_str(), w, h, threads, threads == 1 ? "" : "s");
  if (!ref.empty())
    std::printf("  %-22s %13s  relMSE %.5g  mean/reference %.4f\n", "raw", "", RelMse(in.color, ref),
                Mean(in.color) / Mean(ref));
  const std::vector<float> atrous = run("a-trous", DenoiseMethod::kAtrous, settings);
  const std::vector<float> tiled = run("regression", DenoiseMethod::kNfor, settings);
  DenoiseSettings naive = settings;
  naive.nforPerPixel = true;
  if (perPixel) {
    const std::vector<float> pp = run("regression per-pixel", DenoiseMethod::kNfor, naive);
    std::printf("  per-pixel and tiled images %s\n", pp == tiled ? "identical" : "DIFFER");
  }
  if (gpu) GpuTimes(in, settings, naive, repeats, atrous, tiled, ref);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "denoise_bench: %s\n", e.what());
  return 1;
}
