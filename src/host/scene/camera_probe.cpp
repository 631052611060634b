// @file camera_probe.cpp: primary rays through a coarse grid, traced on the host with the per-ray traversal code.
#include "tracer/host/camera_probe.h"

#include "tracer/core/bvh.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"

namespace tracer {

PrimaryRayProbe ProbePrimaryRays(const SceneData& scene, int n) {
  PrimaryRayProbe probe;
  const SceneView view = scene.View();
  const Camera& camera = view.camera;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      // The cell's centre in pixels, as a pixel index and the offset within that pixel.
      const float x = (static_cast<float>(i) + 0.5f) * static_cast<float>(camera.width) / static_cast<float>(n);
      const float y = (static_cast<float>(j) + 0.5f) * static_cast<float>(camera.height) / static_cast<float>(n);
      const int px = static_cast<int>(x), py = static_cast<int>(y);
      const Ray ray = camera.Generate(px, py, x - static_cast<float>(px), y - static_cast<float>(py));
      const HitRecord hit = TraverseBvh<false, false>(view.bvh, ray);
      probe.rays++;
      if (hit.tri < 0) continue;
      probe.hits++;
      if (Dot(GetSurface<false>(view, hit).ng, ray.d) > 0.0f) probe.backFaces++;
    }
  return probe;
}

bool MostlyBackFaces(const PrimaryRayProbe& probe) { return probe.hits >= 16 && 2 * probe.backFaces > probe.hits; }

}  // namespace tracer
