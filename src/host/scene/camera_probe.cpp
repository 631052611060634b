// @file camera_probe.cpp: primary rays through a coarse grid, traced on the host with the per-ray traversal code.
#include "tracer/host/camera_probe.h"

#include <algorithm>
#include <cmath>

#include "tracer/core/bvh.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"

namespace tracer {

namespace {

// Counts a ray's closest hit, and whether it sees the triangle's back.
void Trace(const SceneView& view, const Ray& ray, PrimaryRayProbe& probe) {
  const HitRecord hit = TraverseBvh<false, false>(view.bvh, ray);
  probe.rays++;
  if (hit.tri < 0) return;
  probe.hits++;
  if (Dot(GetSurface<false>(view, hit).ng, ray.d) > 0.0f) probe.backFaces++;
}

}  // namespace

PrimaryRayProbe ProbePrimaryRays(const SceneData& scene, int n) { return ProbePrimaryRays(scene, scene.camera, n); }

PrimaryRayProbe ProbePrimaryRays(const SceneData& scene, const Camera& camera, int n) {
  PrimaryRayProbe probe;
  const SceneView view = scene.View();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      // The cell's centre in pixels, as a pixel index and the offset within that pixel.
      const float x = (static_cast<float>(i) + 0.5f) * static_cast<float>(camera.width) / static_cast<float>(n);
      const float y = (static_cast<float>(j) + 0.5f) * static_cast<float>(camera.height) / static_cast<float>(n);
      const int px = static_cast<int>(x), py = static_cast<int>(y);
      Trace(view, camera.Generate(px, py, x - static_cast<float>(px), y - static_cast<float>(py)), probe);
    }
  return probe;
}

PrimaryRayProbe ProbeAround(const SceneData& scene, Vec3 p, int n) {
  PrimaryRayProbe probe;
  const SceneView view = scene.View();
  const float golden = kPi * (3.0f - std::sqrt(5.0f));
  for (int i = 0; i < n; ++i) {
    const float z = 1.0f - (2.0f * static_cast<float>(i) + 1.0f) / static_cast<float>(n);
    const float r = std::sqrt(std::max(0.0f, 1.0f - z * z)), phi = golden * static_cast<float>(i);
    Ray ray;
    ray.o = p;
    ray.d = Vec3(r * std::cos(phi), r * std::sin(phi), z);
    ray.tmax = kInf;
    ray.index = 0;
    Trace(view, ray, probe);
  }
  return probe;
}

bool SeesFrontFacesFromOutside(const SceneData& scene, const Camera& camera) {
  const PrimaryRayProbe view = ProbePrimaryRays(scene, camera);
  if (4 * view.hits < view.rays || 20 * view.backFaces > view.hits) return false;
  const PrimaryRayProbe around = ProbeAround(scene, camera.eye);
  return 20 * around.backFaces <= around.hits;
}

bool MostlyBackFaces(const PrimaryRayProbe& probe) { return probe.hits >= 16 && 2 * probe.backFaces > probe.hits; }

}  // namespace tracer
