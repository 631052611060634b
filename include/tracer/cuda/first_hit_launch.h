// @file first_hit_launch.h: --aov's first-hit outputs traced on the GPU into device buffers (kernels/first_hit_aov.cu),
// where --denoise reads them without a round trip through the host.
#pragma once
#include <cuda_runtime.h>

#include "tracer/core/scene_view.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/render_options.h"

namespace tracer {

struct AovImages;

// One image per output, row 0 at the top: albedo, normal, position and emission 3 floats a pixel, depth one.
struct DeviceFirstHit {
  DeviceBuffer<float> albedo, normal, position, depth, emission;
  explicit DeviceFirstHit(size_t pixels);
  // The outputs of `kinds` (kAovAlbedo ... in host/aov.h) copied into `out`, sized for them.
  void CopyTo(int width, int height, int kinds, AovImages& out) const;
};

// The outputs of `samples` camera rays per pixel of options' image over the device scene `view` (core/first_hit.h's
// FirstHitPixel, the CPU's code) into `out`, on `stream`: each ray's hit taken from `kept` (a render's
// DeviceFilmView::firstHits, of its first keptSamples samples) where the render recorded it, else traced.
void TraceFirstHit(const SceneView& view, const RenderOptions& options, int samples, DeviceFirstHit& out,
                   cudaStream_t stream = 0, const HitRecord* kept = nullptr, int keptSamples = 0);

}  // namespace tracer
