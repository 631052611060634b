// @file denoise.cu: --denoise on the GPU (DenoiseCuda, host/denoise.h): one thread per pixel runs core/denoise.h's
// per-pixel code, the CPU's, pass after pass: the variance, then five a-trous levels or the regression.
#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "tracer/core/denoise.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/host/denoise.h"

namespace tracer {
namespace {

__global__ void DenoiseVarianceKernel(DenoiseView v, float* var3, float* varMean, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) DenoiseVariancePixel(v, p, var3, varMean);
}

__global__ void AtrousKernel(DenoiseView v, const float* in, const float* inVar, int level, float* out, float* outVar,
                             int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) AtrousPixel(v, in, inVar, level, p, out, outVar);
}

__global__ void NforKernel(DenoiseView v, float* out, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) StoreRgb(out, p, NforPixel(v, p));
}

}  // namespace

std::vector<float> DenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings) {
  const int pixels = in.width * in.height;
  const size_t n3 = static_cast<size_t>(pixels) * 3;
  DeviceBuffer<float> color, halfA, halfB, albedo, normal, position, depth, emission;
  color.Upload(in.color, "denoiser input");
  halfA.Upload(in.halfA, "denoiser input");
  halfB.Upload(in.halfB, "denoiser input");
  albedo.Upload(in.albedo, "denoiser input");
  normal.Upload(in.normal, "denoiser input");
  position.Upload(in.position, "denoiser input");
  depth.Upload(in.depth, "denoiser input");
  emission.Upload(in.emission, "denoiser input");
  if (color.Size() != n3 || halfA.Size() != n3 || halfB.Size() != n3 || albedo.Size() != n3 || normal.Size() != n3 ||
      position.Size() != n3 || emission.Size() != n3 || depth.Size() != static_cast<size_t>(pixels))
    throw std::invalid_argument("Denoise: an input image has the wrong size");
  DeviceBuffer<float> var3(n3, "denoiser variance"), varA(pixels, "denoiser variance"),
      varB(pixels, "denoiser variance"), out(n3, "denoiser output"), tmp(n3, "denoiser output");
  const DenoiseView v{in.width,     in.height,      color.Get(), halfA.Get(),    halfB.Get(), albedo.Get(),
                      normal.Get(), position.Get(), depth.Get(), emission.Get(), var3.Get(),  settings};
  const unsigned grid = GridFor(static_cast<size_t>(pixels), kBlock);
  DenoiseVarianceKernel<<<grid, kBlock>>>(v, var3.Get(), varA.Get(), pixels);
  TRACER_CHECK_LAUNCH("denoise_variance");
  const float* result = out.Get();
  if (method == DenoiseMethod::kNfor) {
    NforKernel<<<grid, kBlock>>>(v, out.Get(), pixels);
    TRACER_CHECK_LAUNCH("denoise_nfor");
  } else {
    // Ping-pong: level 0 reads the image, each next level the one before.
    const float* src = color.Get();
    float* colors[2] = {out.Get(), tmp.Get()};
    float* vars[2] = {varB.Get(), varA.Get()};
    const float* srcVar = varA.Get();
    for (int level = 0; level < kAtrousLevels; ++level) {
      float* dst = colors[level & 1];
      float* dstVar = vars[level & 1];
      AtrousKernel<<<grid, kBlock>>>(v, src, srcVar, level, dst, dstVar, pixels);
      TRACER_CHECK_LAUNCH("denoise_atrous");
      src = dst;
      srcVar = dstVar;
    }
    result = src;
  }
  std::vector<float> host(n3);
  TRACER_CUDA_CHECK(cudaMemcpy(host.data(), result, n3 * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace tracer
