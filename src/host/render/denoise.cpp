// @file denoise.cpp: --denoise on the host's threads: the half-buffers resolved from the film, then core/denoise.h's
// per-pixel passes over a thread pool.
#include "tracer/host/denoise.h"

#include <stdexcept>

#include "tracer/core/film.h"
#include "tracer/core/first_hit.h"
#include "tracer/host/aov.h"
#include "tracer/host/render_result.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

static_assert(kAovMissDepth >= kDenoiseMissDepth, "the denoiser must see the first-hit outputs' misses as misses");

const char* DenoiseMethodName(DenoiseMethod m) { return m == DenoiseMethod::kAtrous ? "atrous" : "nfor"; }

bool DenoiseMethodFromName(const std::string& name, DenoiseMethod* m) {
  if (name == "nfor")
    *m = DenoiseMethod::kNfor;
  else if (name == "atrous")
    *m = DenoiseMethod::kAtrous;
  else
    return false;
  return true;
}

void ResolveHalves(const HostFilm& film, std::vector<float>& halfA, std::vector<float>& halfB, int threads) {
  if (film.odd.size() != film.sum.size()) throw std::logic_error("ResolveHalves: the film kept no half-buffers");
  halfA.assign(film.sum.size(), 0.0f);
  halfB.assign(film.sum.size(), 0.0f);
  ThreadPool pool(ThreadPool::ThreadsFor(threads));
  pool.ParallelFor(film.sum.size(), size_t(1) << 15, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const unsigned n = film.pixelSpp.empty() ? static_cast<unsigned>(film.sppDone) : film.pixelSpp[i / 3];
      HalfBufferValues(film.sum[i], film.odd[i], n, halfA[i], halfB[i]);
    }
  });
}

DenoiseImages DenoiseInputs(const RenderResult& result, const AovImages& aov) {
  DenoiseImages in;
  in.width = result.width;
  in.height = result.height;
  in.color = result.rgb;
  ResolveHalves(result.film, in.halfA, in.halfB);
  in.albedo = aov.albedo;
  in.normal = aov.normal;
  in.position = aov.position;
  in.depth = aov.depth;
  in.emission = aov.emission;
  return in;
}

namespace {

void CheckSizes(const DenoiseImages& in) {
  const size_t n = static_cast<size_t>(in.width) * static_cast<size_t>(in.height);
  for (const std::vector<float>* v :
       {&in.color, &in.halfA, &in.halfB, &in.albedo, &in.normal, &in.position, &in.emission})
    if (v->size() != n * 3) throw std::invalid_argument("Denoise: an input image has the wrong size");
  if (in.depth.size() != n) throw std::invalid_argument("Denoise: the depth image has the wrong size");
}

}  // namespace

std::vector<float> DenoiseCpu(const DenoiseImages& in, DenoiseMethod method, int threads,
                              const DenoiseSettings& settings) {
  CheckSizes(in);
  const size_t pixels = static_cast<size_t>(in.width) * static_cast<size_t>(in.height);
  std::vector<float> var3(pixels * 3), var1(pixels);
  DenoiseView v{in.width,        in.height,          in.color.data(),  in.halfA.data(),
                in.halfB.data(), in.albedo.data(),   in.normal.data(), in.position.data(),
                in.depth.data(), in.emission.data(), var3.data(),      settings};
  ThreadPool pool(ThreadPool::ThreadsFor(threads));
  auto perPixel = [&](auto&& fn) {
    pool.ParallelFor(pixels, 256, [&](size_t b, size_t e) {
      for (size_t p = b; p < e; ++p) fn(static_cast<int>(p));
    });
  };
  perPixel([&](int p) { DenoiseVariancePixel(v, p, var3.data(), var1.data()); });
  std::vector<float> out(pixels * 3);
  if (method == DenoiseMethod::kNfor) {
    perPixel([&](int p) { StoreRgb(out.data(), p, NforPixel(v, p)); });
    return out;
  }
  // Five levels, ping-ponging between two colour and two variance buffers.
  std::vector<float> color = in.color, var = var1, nextVar(pixels);
  for (int level = 0; level < kAtrousLevels; ++level) {
    perPixel([&](int p) { AtrousPixel(v, color.data(), var.data(), level, p, out.data(), nextVar.data()); });
    color.swap(out);
    var.swap(nextVar);
  }
  return color;
}

}  // namespace tracer
