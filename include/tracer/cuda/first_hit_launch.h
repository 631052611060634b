// @file first_hit_launch.h: --aov's first-hit outputs traced on the GPU into device buffers (kernels/first_hit_aov.cu),
// where --denoise reads them without a round trip through the host.
#pragma once
#include <cuda_runtime.h>

#include "tracer/core/scene_view.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/render_options.h"

namespace tracer {

struct AovImages;
struct DeviceFilmView;

// One image per output, row 0 at the top: albedo, normal, position and emission 3 floats a pixel, depth one; all five
// in one device allocation (kFloatsPerPixel floats a pixel), this object's own or the caller's.
struct DeviceFirstHit {
  static constexpr size_t kFloatsPerPixel = 13;
  float *albedo = nullptr, *normal = nullptr, *position = nullptr, *depth = nullptr, *emission = nullptr;
  // Over `storage` (pixels * kFloatsPerPixel floats, which must outlive this object), or over its own allocation when
  // null.
  explicit DeviceFirstHit(size_t pixels, float* storage = nullptr);
  // The outputs of `kinds` (kAovAlbedo ... in host/aov.h) copied into `out`, sized for them.
  void CopyTo(int width, int height, int kinds, AovImages& out) const;

 private:
  size_t pixels_;
  DeviceBuffer<float> own_;
};

// The outputs of `samples` camera rays per pixel of options' image over the device scene `view` (core/first_hit.h's
// FirstHitPixel, the CPU's code) into `out`, on `stream`: each ray's hit taken from the camera-ray hits that `film`
// kept (DeviceFilmView::firstHits, of its first firstHitSamples samples; only a film of options' size) where the
// render recorded it, else traced.
void TraceFirstHit(const SceneView& view, const RenderOptions& options, int samples, DeviceFirstHit& out,
                   cudaStream_t stream = 0, const DeviceFilmView* film = nullptr);

// Loads TraceFirstHit's kernels on the current device (host/denoise.h's PrepareDenoiseCuda says why).
void PrepareFirstHitCuda();

}  // namespace tracer
