// @file make_rays.cpp: --make-rays: the benchmark camera (host/make_rays.h) from the scene's bounds, its primary rays,
// and the diffuse and ambient-occlusion rays leaving the primary hits (traced on the CPU with TraverseBvh).
#include "tracer/host/make_rays.h"

#include <cstddef>

#include "tracer/core/bvh.h"
#include "tracer/core/rng.h"
#include "tracer/core/sampling.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"

namespace tracer {
namespace {

RayRecord ToRecord(Vec3 o, Vec3 d, float tmax, uint32_t id) {
  return RayRecord{{o.x, o.y, o.z}, {d.x, d.y, d.z}, tmax, id};
}

// Pixel p = y * width + x, through its centre.
Ray PrimaryRay(const Camera& camera, uint32_t pixel) {
  const int x = static_cast<int>(pixel % static_cast<uint32_t>(camera.width));
  const int y = static_cast<int>(pixel / static_cast<uint32_t>(camera.width));
  return camera.Generate(x, y, 0.5f, 0.5f);
}

}  // namespace

bool RayKindFromName(const std::string& name, RayKind* kind) {
  for (RayKind k : {RayKind::kPrimary, RayKind::kDiffuse, RayKind::kAo})
    if (name == RayKindName(k)) {
      *kind = k;
      return true;
    }
  return false;
}

const char* RayKindName(RayKind kind) {
  switch (kind) {
    case RayKind::kPrimary:
      return "primary";
    case RayKind::kDiffuse:
      return "diffuse";
    case RayKind::kAo:
      return "ao";
  }
  return "?";
}

BenchmarkView BenchmarkViewOf(Vec3 lo, Vec3 hi) {
  const Vec3 extent = hi - lo;
  BenchmarkView v;
  v.eye = lo + Vec3(0.85f, 0.55f, 0.5f) * extent;
  v.target = lo + Vec3(0.15f, 0.3f, 0.5f) * extent;
  v.up = Vec3(0.0f, 1.0f, 0.0f);
  v.fovY = kBenchmarkFovY;
  return v;
}

Camera BenchmarkCamera(const BenchmarkView& v, int width, int height) {
  return Camera::LookAt(v.eye, v.target, v.up, v.fovY, width, height);
}

// (Not through the overload above: written out here, the constant fov lets the compiler fold tanf, and the ray
// files of the benchmark camera keep the bytes they had; the run-time tanf may differ in the last bit.)
Camera BenchmarkCamera(Vec3 lo, Vec3 hi, int width, int height) {
  const BenchmarkView v = BenchmarkViewOf(lo, hi);
  return Camera::LookAt(v.eye, v.target, v.up, v.fovY, width, height);
}

std::vector<RayRecord> MakeBenchmarkRays(const SceneData& scene, RayKind kind, int width, int height, uint32_t seed,
                                         int threads, const BenchmarkView* placed) {
  const Camera camera = placed ? BenchmarkCamera(*placed, width, height)
                               : BenchmarkCamera(scene.boundsMin, scene.boundsMax, width, height);
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  if (kind == RayKind::kPrimary) {
    std::vector<RayRecord> rays(pixels);
    for (size_t p = 0; p < pixels; ++p) {
      const Ray r = PrimaryRay(camera, static_cast<uint32_t>(p));
      rays[p] = ToRecord(r.o, r.d, kInf, static_cast<uint32_t>(p));
    }
    return rays;
  }

  const float diagonal = Length(scene.boundsMax - scene.boundsMin);
  const float offset = kBenchmarkOffsetScale * diagonal;
  const float tmax = kind == RayKind::kAo ? kBenchmarkAoDistanceScale * diagonal : kInf;
  const SceneView view = scene.View();
  constexpr int kPer = kBenchmarkRaysPerHit;
  // Each pixel writes its own slots, so the threads need no ordering; the hits are compacted in pixel order.
  std::vector<RayRecord> slots(pixels * kPer);
  std::vector<unsigned char> hit(pixels, 0);
  ThreadPool pool(ThreadPool::ThreadsFor(threads));
  pool.ParallelFor(pixels, 256, [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      const uint32_t pixel = static_cast<uint32_t>(p);
      const Ray primary = PrimaryRay(camera, pixel);
      const HitRecord h = TraverseBvh<false, false>(view.bvh, primary);
      if (h.tri < 0) continue;
      hit[p] = 1;
      const Surface sf = GetSurface<false>(view, h);
      // The geometric normal on the camera's side of the triangle.
      const Vec3 n = Dot(sf.ng, primary.d) < 0.0f ? sf.ng : -sf.ng;
      const Vec3 origin = sf.p + n * offset;
      const Frame frame = Frame::FromNormal(n);
      for (int k = 0; k < kPer; ++k) {
        // Sample k of the pixel, with the dimensions the renderer uses for its first BSDF sample.
        const float u1 = Random(seed, pixel, static_cast<uint32_t>(k), BounceDim(0, kDimBsdfU));
        const float u2 = Random(seed, pixel, static_cast<uint32_t>(k), BounceDim(0, kDimBsdfV));
        const Vec3 d = Normalize(frame.ToWorld(SampleCosineHemisphere(u1, u2)));
        slots[p * kPer + k] = ToRecord(origin, d, tmax, pixel * kPer + static_cast<uint32_t>(k));
      }
    }
  });
  std::vector<RayRecord> rays;
  size_t hits = 0;
  for (unsigned char c : hit) hits += c;
  rays.reserve(hits * kPer);
  for (size_t p = 0; p < pixels; ++p)
    if (hit[p]) rays.insert(rays.end(), slots.begin() + p * kPer, slots.begin() + (p + 1) * kPer);
  return rays;
}

}  // namespace tracer
