// @file aov.cpp: auxiliary outputs: parsing --aov, the first-hit pass on the host, and the layers to write.
#include "tracer/host/aov.h"

#include <stdexcept>

#include "tracer/core/first_hit.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

namespace {
struct AovName {
  const char* name;
  int kind;
};
constexpr AovName kAovNames[] = {{"albedo", kAovAlbedo},     {"normal", kAovNormal},     {"depth", kAovDepth},
                                 {"position", kAovPosition}, {"variance", kAovVariance}, {"samples", kAovSamples},
                                 {"noisy", kAovNoisy},       {"halves", kAovHalves},     {"emission", kAovEmission}};
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
      throw std::invalid_argument("--aov: unknown output '" + name +
                                  "' (expected a comma-separated list of albedo, normal, depth, position, variance, "
                                  "samples, noisy, halves, emission)");
    kinds |= kind;
    if (end == std::string::npos) return kinds;
    begin = end + 1;
  }
}

void SizeFirstHitAovs(int width, int height, int kinds, AovImages& out) {
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  out.width = width;
  out.height = height;
  out.albedo.assign(kinds & kAovAlbedo ? pixels * 3 : 0, 0.0f);
  out.normal.assign(kinds & kAovNormal ? pixels * 3 : 0, 0.0f);
  out.depth.assign(kinds & kAovDepth ? pixels : 0, 0.0f);
  out.position.assign(kinds & kAovPosition ? pixels * 3 : 0, 0.0f);
  out.emission.assign(kinds & kAovEmission ? pixels * 3 : 0, 0.0f);
}

void StoreFirstHit(const FirstHitOutputs& f, size_t p, AovImages& out) {
  for (int c = 0; c < 3; ++c) {
    if (!out.albedo.empty()) out.albedo[p * 3 + c] = Axis(f.albedo, c);
    if (!out.normal.empty()) out.normal[p * 3 + c] = Axis(f.normal, c);
    if (!out.position.empty()) out.position[p * 3 + c] = Axis(f.position, c);
    if (!out.emission.empty()) out.emission[p * 3 + c] = Axis(f.emission, c);
  }
  if (!out.depth.empty()) out.depth[p] = f.depth;
}

void ComputeFirstHitAovs(const SceneData& scene, const RenderOptions& options, int kinds, int samples, AovImages& out) {
  SizeFirstHitAovs(options.width, options.height, kinds, out);
  if (!(kinds & kFirstHitAovs) || samples <= 0) return;
  const SceneView view = scene.View();
  RenderParams rp = MakeRenderParams(options);
  rp.sampleBase = 0;
  const bool binary = options.binaryBvh || view.wide.nodes == nullptr;
  ThreadPool pool(ThreadPool::ThreadsFor(options.threads));
  const size_t pixels = static_cast<size_t>(options.width) * static_cast<size_t>(options.height);
  pool.ParallelFor(pixels, 64, [&](size_t begin, size_t end) {
    DispatchBvh(binary, [&](auto bvh) {
      for (size_t p = begin; p < end; ++p)
        StoreFirstHit(FirstHitPixel<decltype(bvh), false>(view, rp, p, samples), p, out);
    });
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
  if (kinds & kAovNoisy) layers.push_back({"noisy", {"R", "G", "B"}, &images.noisy});
  if (kinds & kAovHalves) {
    layers.push_back({"halfA", {"R", "G", "B"}, &images.halfA});
    layers.push_back({"halfB", {"R", "G", "B"}, &images.halfB});
  }
  if (kinds & kAovEmission) layers.push_back({"emission", {"R", "G", "B"}, &images.emission});
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
