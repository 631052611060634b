// @file aov.cpp: auxiliary outputs: parsing --aov, the first-hit pass on the host, and the layers to write.
#include "tracer/host/aov.h"

#include <stdexcept>

#include "tracer/core/integrator.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

namespace {
struct AovName {
  const char* name;
  int kind;
};
constexpr AovName kAovNames[] = {{"albedo", kAovAlbedo},     {"normal", kAovNormal},     {"depth", kAovDepth},
                                 {"position", kAovPosition}, {"variance", kAovVariance}, {"samples", kAovSamples}};
}  // namespace

int ParseAovList(const std::string& list) {
  int kinds = 0;
  size_t begin = 0;
  for (;;) {
    const size_t end = list.find(',', begin);
    const std::string name = list.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    int kind = 0;
    for (const AovName& a : kAovNames)
      if (name == a.name) kind = a.kind;
    if (!kind)
      throw std::invalid_argument(
          "--aov: unknown output '" + name +
          "' (expected a comma-separated list of albedo, normal, depth, position, variance, samples)");
    kinds |= kind;
    if (end == std::string::npos) return kinds;
    begin = end + 1;
  }
}

void ComputeFirstHitAovs(const SceneData& scene, const RenderOptions& options, int kinds, int samples, AovImages& out) {
  const int w = options.width, h = options.height;
  const size_t pixels = static_cast<size_t>(w) * static_cast<size_t>(h);
  out.width = w;
  out.height = h;
  if (kinds & kAovAlbedo) out.albedo.assign(pixels * 3, 0.0f);
  if (kinds & kAovNormal) out.normal.assign(pixels * 3, 0.0f);
  if (kinds & kAovDepth) out.depth.assign(pixels, 0.0f);
  if (kinds & kAovPosition) out.position.assign(pixels * 3, 0.0f);
  if (!(kinds & (kAovAlbedo | kAovNormal | kAovDepth | kAovPosition)) || samples <= 0) return;
  const SceneView view = scene.View();
  RenderParams rp = MakeRenderParams(options);
  rp.sampleBase = 0;
  const bool binary = options.binaryBvh || view.wide.nodes == nullptr;
  const float inv = 1.0f / static_cast<float>(samples);
  ThreadPool pool(ThreadPool::ThreadsFor(options.threads));
  pool.ParallelFor(pixels, 64, [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      Vec3 albedo(0.0f), normal(0.0f), position(0.0f);
      float depth = 0.0f;
      int hits = 0;
      for (int k = 0; k < samples; ++k) {
        Ray ray;
        PathState ps;
        GenerateItem(view, rp, static_cast<uint64_t>(k) * pixels + p, ray, ps);
        HitRecord hit;
        DispatchBvh(binary, [&](auto bvh) { hit = decltype(bvh)::template Trace<false, false>(view, ray); });
        if (hit.tri < 0) continue;
        ++hits;
        Surface sf = GetSurface<false>(view, hit);
        Vec3 emission;
        const SurfaceBsdf b = GetBsdf<false>(view, sf, emission);
        albedo += (b.cls == kMirror || (b.cls == kGlossy && IsBlack(b.kd))) ? b.ks : b.kd;
        normal += Dot(sf.ns, ray.d) < 0.0f ? sf.ns : -sf.ns;
        position += sf.p;
        depth += hit.t * Length(ray.d);
      }
      // Albedo and normal over all the pixel's rays (a ray that leaves adds 0: edges blend with the background);
      // depth and position over the rays that hit (a blend of near and far would be neither).
      const float invHits = hits ? 1.0f / static_cast<float>(hits) : 0.0f;
      for (int c = 0; c < 3; ++c) {
        if (!out.albedo.empty()) out.albedo[p * 3 + c] = Axis(albedo, c) * inv;
        if (!out.normal.empty()) out.normal[p * 3 + c] = Axis(normal, c) * inv;
        if (!out.position.empty()) out.position[p * 3 + c] = Axis(position, c) * invHits;
      }
      if (!out.depth.empty()) out.depth[p] = hits ? depth * invHits : kAovMissDepth;
    }
  });
}

std::vector<ImageLayer> AovLayers(const AovImages& images, int kinds) {
  std::vector<ImageLayer> layers;
  if (kinds & kAovAlbedo) layers.push_back({"albedo", {"R", "G", "B"}, &images.albedo});
  if (kinds & kAovNormal) layers.push_back({"normal", {"X", "Y", "Z"}, &images.normal});
  if (kinds & kAovDepth) layers.push_back({"depth", {"Z"}, &images.depth});
  if (kinds & kAovPosition) layers.push_back({"position", {"X", "Y", "Z"}, &images.position});
  if (kinds & kAovVariance) layers.push_back({"variance", {"R", "G", "B"}, &images.variance});
  if (kinds & kAovSamples) layers.push_back({"samples", {"Y"}, &images.samples});
  return layers;
}

std::string AovSiblingPath(const std::string& outPath, const std::string& layer) {
  const size_t slash = outPath.find_last_of('/');
  const size_t dot = outPath.find_last_of('.');
  const std::string stem =
      dot != std::string::npos && (slash == std::string::npos || dot > slash) ? outPath.substr(0, dot) : outPath;
  return stem + "." + layer + ".pfm";
}

}  // namespace tracer
