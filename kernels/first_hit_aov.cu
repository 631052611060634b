// @file first_hit_aov.cu: --aov's first-hit outputs on the GPU: one thread per pixel runs FirstHitPixel
// (core/first_hit.h), the CPU's per-pixel code, over the scene uploaded again.
#include <cuda_runtime.h>

#include <vector>

#include "tracer/core/first_hit.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/host/aov.h"
#include "tracer/host/pass_driver.h"

namespace tracer {
namespace {

// Pixel p's outputs as 13 floats: albedo, normal and position (3 each), depth, then emission (3).
template <class Traversal>
__global__ void FirstHitKernel(SceneView view, RenderParams rp, int samples, float* out, size_t pixels) {
  const size_t p = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pixels) return;
  const FirstHitOutputs f = FirstHitPixel<Traversal, true>(view, rp, p, samples);
  float* o = out + p * 13;
  for (int c = 0; c < 3; ++c) {
    o[c] = Axis(f.albedo, c);
    o[3 + c] = Axis(f.normal, c);
    o[6 + c] = Axis(f.position, c);
    o[10 + c] = Axis(f.emission, c);
  }
  o[9] = f.depth;
}

}  // namespace

void ComputeFirstHitAovsCuda(const SceneData& scene, const RenderOptions& options, int kinds, int samples,
                             AovImages& out) {
  SizeFirstHitAovs(options.width, options.height, kinds, out);
  if (!(kinds & kFirstHitAovs) || samples <= 0) return;
  const size_t pixels = static_cast<size_t>(options.width) * static_cast<size_t>(options.height);
  DeviceScene deviceScene(scene);
  DeviceBuffer<float> dOut(pixels * 13, "first-hit outputs (--aov)");
  RenderParams rp = MakeRenderParams(options);
  rp.sampleBase = 0;
  const bool binary = options.binaryBvh || deviceScene.view.wide.nodes == nullptr;
  DispatchBvh(binary, [&](auto t) {
    FirstHitKernel<decltype(t)><<<GridFor(pixels, kBlock), kBlock>>>(deviceScene.view, rp, samples, dOut.Get(), pixels);
  });
  TRACER_CHECK_LAUNCH("first_hit_aov");
  std::vector<float> host(pixels * 13);
  TRACER_CUDA_CHECK(cudaMemcpy(host.data(), dOut.Get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (size_t p = 0; p < pixels; ++p) {
    const float* o = &host[p * 13];
    StoreFirstHit(FirstHitOutputs{Vec3(o[0], o[1], o[2]), Vec3(o[3], o[4], o[5]), Vec3(o[6], o[7], o[8]), o[9],
                                  Vec3(o[10], o[11], o[12])},
                  p, out);
  }
}

}  // namespace tracer
