// @file aov.h: auxiliary outputs (--aov), what denoisers take beside the image: the first hit's albedo, shading
// normal, camera distance and world position, and the per-pixel variance of the image's mean.
//
// The first-hit outputs are computed after the render by the same per-ray code (core/first_hit.h's FirstHitPixel),
// on the host's threads (ComputeFirstHitAovs) or, after a render on the GPU, on the GPU (ComputeFirstHitAovsCuda,
// defined when nvcc built it): `samples` camera rays per pixel, the render's own first samples (the same pixel and
// lens positions). Albedo and normal are averaged over all of them (a ray that leaves the scene adds 0), depth and
// position over those that hit (kAovMissDepth and 0 where none does). The variance
// comes from the render itself: the passes are batches of samples, and the spread of their means estimates it
// (pixel_batches.h, RenderOptions::varianceAov); so do the samples per pixel (RenderResult::film.pixelSpp).
#pragma once
#include <string>
#include <vector>

#include "tracer/core/first_hit.h"
#include "tracer/host/image_io.h"
#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"

namespace tracer {

enum AovKind : int {
  kAovAlbedo = 1,     // the base colour at the first hit (Kd times its texture; a mirror's or conductor's Ks)
  kAovNormal = 2,     // the shading normal at the first hit (after bump and normal maps), toward the camera
  kAovDepth = 4,      // the distance from the camera to the first hit; kAovMissDepth where every ray leaves
  kAovPosition = 8,   // the world position of the first hit; 0 where every ray leaves
  kAovVariance = 16,  // the variance of each pixel's mean, per channel
  kAovSamples = 32,   // the samples each pixel received (--adaptive's sample map; the same everywhere without it)
  kAovNoisy = 64,     // --denoise: the image before denoising
  kAovHalves = 128,   // --denoise: the half-buffers, the means of the even- and of the odd-numbered samples
  kAovEmission = 256  // the emitted radiance seen at the first hit (a front-facing emitter's; 0 elsewhere)
};
constexpr int kFirstHitAovs = kAovAlbedo | kAovNormal | kAovDepth | kAovPosition | kAovEmission;

// The kinds named in a comma-separated list ("albedo,normal"); throws std::invalid_argument naming a bad name.
int ParseAovList(const std::string& list);

struct AovImages {
  int width = 0, height = 0;
  std::vector<float> albedo, normal, position;  // 3 floats per pixel, row 0 at the top
  std::vector<float> emission;                  // 3 floats per pixel
  std::vector<float> depth;                     // 1 float per pixel
  std::vector<float> variance;                  // 3 floats per pixel
  std::vector<float> samples;                   // 1 float per pixel
  std::vector<float> noisy;                     // 3 floats per pixel
  std::vector<float> halfA, halfB;              // 3 floats per pixel
};

// The first-hit outputs of `kinds` (variance aside) at `samples` rays per pixel, on options.threads host threads
// (0: all).
void ComputeFirstHitAovs(const SceneData& scene, const RenderOptions& options, int kinds, int samples, AovImages& out);
#if defined(TRACER_HAVE_CUDA)
// The same on the current CUDA device, one thread per pixel, over `resident` (the render's device scene, kept by
// the backend choice) or, when null, over the scene uploaded again; from the camera rays' hits that `film` (the
// render's, RenderOptions::firstHitSamples) kept, where it did, instead of tracing them. Throws DeviceError.
struct DeviceScene;
struct DeviceFilmView;
void ComputeFirstHitAovsCuda(const SceneData& scene, const RenderOptions& options, int kinds, int samples,
                             AovImages& out, const DeviceScene* resident = nullptr,
                             const DeviceFilmView* film = nullptr);
#endif
// Sizes out's first-hit images for `kinds` at width x height (zeros), and stores one pixel's outputs in them.
void SizeFirstHitAovs(int width, int height, int kinds, AovImages& out);
void StoreFirstHit(const FirstHitOutputs& f, size_t p, AovImages& out);

// The layers of `kinds` that `images` holds, in a fixed order (albedo, normal, depth, position, variance, samples,
// noisy, halfA, halfB, emission).
std::vector<ImageLayer> AovLayers(const AovImages& images, int kinds);

// The file beside `outPath` that holds one layer when the image format has no layers: out.png -> out.albedo.pfm.
std::string AovSiblingPath(const std::string& outPath, const std::string& layer);

}  // namespace tracer
