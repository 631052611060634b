// @file first_hit.h: one pixel's first-hit outputs (--aov albedo, normal, depth, position), what denoisers take beside
// the image, by the renderer's own per-ray code: camera, traversal with cut-outs, surface, BSDF with bump and normal
// maps. The CPU (host/aov.h's ComputeFirstHitAovs, on the host's threads) and the GPU (one thread per pixel) call it.
#pragma once
#include "tracer/core/film.h"
#include "tracer/core/integrator.h"

namespace tracer {

constexpr float kAovMissDepth =
    1e10f;  // the depth where every ray leaves, as Blender's depth pass writes the background

struct FirstHitOutputs {
  Vec3 albedo, normal, position;
  float depth;
  Vec3 emission;  // the radiance an emitter sends toward the camera (0 elsewhere, and on a one-sided one's back)
};

// Pixel p's outputs from `samples` camera rays, the render's own first samples (work items k * pixels + p of a pass
// at sampleBase 0, so the same pixel and lens positions). Albedo (Kd times its texture; a mirror's or conductor's Ks)
// and the shading normal toward the camera are averaged over all of them, a ray that leaves adding 0 (edges blend with
// the background), and so is the emission seen (a front face's, as the render sees it; the denoiser's one clue to
// where a lamp ends, whose albedo, normal and depth may be the ceiling's; both faces of a two-sided one); depth (camera
// distance) and position over those that hit (a blend of near and far would be neither), kAovMissDepth and 0 where none
// does. Each ray's closest hit is the render's own where it kept it (`kept`, FilmView::firstHits: sample k's at
// kept[k * pixels + p] for k below keptSamples, unless kHitNotRecorded), else traced with Traversal
// (WideBvhTraversal or BinaryBvhTraversal): the same hit either way, so the outputs do not depend on which.
template <class Traversal, bool kLdg>
TRACER_HD FirstHitOutputs FirstHitPixel(const SceneView& view, const RenderParams& rp, uint64_t p, int samples,
                                        const HitRecord* kept = nullptr, uint32_t keptSamples = 0) {
  const uint64_t pixels = static_cast<uint64_t>(rp.width) * static_cast<uint64_t>(rp.height);
  Vec3 albedo(0.0f), normal(0.0f), position(0.0f), emitted(0.0f);
  float depth = 0.0f;
  int hits = 0;
  for (int k = 0; k < samples; ++k) {
    Ray ray;
    PathState ps;
    GenerateItem(view, rp, static_cast<uint64_t>(k) * pixels + p, ray, ps);
    HitRecord hit{0.0f, 0.0f, 0.0f, kHitNotRecorded};
    if (kept && static_cast<uint32_t>(k) < keptSamples) hit = kept[static_cast<uint64_t>(k) * pixels + p];
    if (hit.tri == kHitNotRecorded) hit = Traversal::template Trace<false, kLdg>(view, ray);
    if (hit.tri < 0) continue;
    ++hits;
    Surface sf = GetSurface<kLdg>(view, hit);  // GetBsdf applies bump and normal maps to sf.ns
    Vec3 emission;
    const SurfaceBsdf b = GetBsdf<kLdg>(view, sf, emission);
    albedo += AovAlbedo(b);
    normal += Dot(sf.ns, ray.d) < 0.0f ? sf.ns : -sf.ns;
    if (EmitterCosine(view, hit.tri, sf.ng, -ray.d) > 0.0f) emitted += emission;
    position += sf.p;
    depth += hit.t * Length(ray.d);
  }
  const float inv = samples > 0 ? 1.0f / static_cast<float>(samples) : 0.0f;
  const float invHits = hits ? 1.0f / static_cast<float>(hits) : 0.0f;
  return FirstHitOutputs{albedo * inv, normal * inv, position * invHits, hits ? depth * invHits : kAovMissDepth,
                         emitted * inv};
}

}  // namespace tracer
