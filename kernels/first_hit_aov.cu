// @file first_hit_aov.cu: --aov's first-hit outputs on the GPU: one thread per pixel runs FirstHitPixel
// (core/first_hit.h), the CPU's per-pixel code, over a device scene (the render's, or the scene uploaded again), from
// the render's own camera-ray hits where it kept them (RenderOptions::firstHitSamples), else tracing the rays.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "tracer/core/denoise.h"
#include "tracer/core/first_hit.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/first_hit_launch.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/pass_driver.h"

namespace tracer {
namespace {

struct FirstHitPointers {
  float *albedo, *normal, *position, *depth, *emission;
};

template <class Traversal>
__global__ void FirstHitKernel(SceneView view, RenderParams rp, int samples, FirstHitPointers out, int pixels,
                               const HitRecord* kept, uint32_t keptSamples) {
  const int p = ThreadIndex();
  if (p >= pixels) return;
  const FirstHitOutputs f =
      FirstHitPixel<Traversal, true>(view, rp, static_cast<uint64_t>(p), samples, kept, keptSamples);
  StoreRgb(out.albedo, p, f.albedo);
  StoreRgb(out.normal, p, f.normal);
  StoreRgb(out.position, p, f.position);
  StoreRgb(out.emission, p, f.emission);
  out.depth[p] = f.depth;
}

void CopyOut(const float* from, size_t values, bool wanted, std::vector<float>& to) {
  if (!wanted) return;
  to.resize(values);
  TRACER_CUDA_CHECK(cudaMemcpy(to.data(), from, values * sizeof(float), cudaMemcpyDeviceToHost));
}

}  // namespace

DeviceFirstHit::DeviceFirstHit(size_t pixels, float* storage) : pixels_(pixels) {
  if (!storage) {
    own_.Allocate(pixels * kFloatsPerPixel, "first-hit features");
    storage = own_.Get();
  }
  albedo = storage;
  normal = albedo + pixels * 3;
  position = normal + pixels * 3;
  emission = position + pixels * 3;
  depth = emission + pixels * 3;
}

void DeviceFirstHit::CopyTo(int width, int height, int kinds, AovImages& out) const {
  out.width = width;
  out.height = height;
  const size_t n3 = pixels_ * 3;
  CopyOut(albedo, n3, kinds & kAovAlbedo, out.albedo);
  CopyOut(normal, n3, kinds & kAovNormal, out.normal);
  CopyOut(position, n3, kinds & kAovPosition, out.position);
  CopyOut(depth, pixels_, kinds & kAovDepth, out.depth);
  CopyOut(emission, n3, kinds & kAovEmission, out.emission);
}

void TraceFirstHit(const SceneView& view, const RenderOptions& options, int samples, DeviceFirstHit& out,
                   cudaStream_t stream, const DeviceFilmView* film) {
  const int pixels = options.width * options.height;
  RenderParams rp = MakeRenderParams(options);
  rp.sampleBase = 0;
  const bool kept = film && film->firstHits && film->width == options.width && film->height == options.height;
  const HitRecord* hits = kept ? film->firstHits : nullptr;
  const uint32_t keptSamples = kept ? static_cast<uint32_t>(film->firstHitSamples) : 0u;
  const FirstHitPointers ptrs{out.albedo, out.normal, out.position, out.depth, out.emission};
  const bool binary = options.binaryBvh || view.wide.nodes == nullptr;
  DispatchBvh(binary, [&](auto t) {
    FirstHitKernel<decltype(t)><<<GridFor(static_cast<size_t>(pixels), kBlock), kBlock, 0, stream>>>(
        view, rp, samples, ptrs, pixels, hits, keptSamples);
  });
  TRACER_CHECK_LAUNCH("first_hit_aov");
}

void PrepareFirstHitCuda() {
  cudaFuncAttributes attributes;
  for (const bool binary : {true, false})
    DispatchBvh(binary,
                [&](auto t) { TRACER_CUDA_CHECK(cudaFuncGetAttributes(&attributes, FirstHitKernel<decltype(t)>)); });
}

void ComputeFirstHitAovsCuda(const SceneData& scene, const RenderOptions& options, int kinds, int samples,
                             AovImages& out, const DeviceScene* resident, const DeviceFilmView* film) {
  SizeFirstHitAovs(options.width, options.height, kinds, out);
  if (!(kinds & kFirstHitAovs) || samples <= 0) return;
  std::unique_ptr<DeviceScene> uploaded;
  if (!resident) resident = (uploaded = std::make_unique<DeviceScene>(scene)).get();
  DeviceFirstHit dOut(static_cast<size_t>(options.width) * options.height);
  TraceFirstHit(resident->view, options, samples, dOut, 0, film);
  dOut.CopyTo(options.width, options.height, kinds, out);
}

}  // namespace tracer
