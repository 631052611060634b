// @file make_rays.h: --make-rays: the traversal benchmark's rays (primary, diffuse and ambient-occlusion rays
// from a camera fixed by the scene's bounds), written as ray files so that --trace-rays and an external tracer
// (OptiX) can be timed on identical rays.
//
// Definitions (fixed, so that other tracers can make the same rays):
//   camera   pinhole, vertical fov 60 degrees, aspect W/H, up +y, eye = lo + (0.85, 0.55, 0.5) * extent,
//            target = lo + (0.15, 0.3, 0.5) * extent (component-wise; lo = bounds min, extent = max - min);
//   primary  one ray per pixel through its centre, in pixel order (row 0 at the top), id = pixel index,
//            unit direction, tmax = +inf;
//   diffuse  for each primary ray that hits (closest hit), 2 rays, the pixel's two consecutive: origin = hit
//            point + 1e-4 * |diagonal| * n, where n is the triangle's unit geometric normal turned to face
//            the camera (dot(n, primary direction) < 0); direction cosine-distributed about n; tmax = +inf;
//            id = 2 * pixel + k. A miss emits nothing;
//   ao       the diffuse rays with tmax = 0.1 * |diagonal| (replay with --any-hit).
// The random numbers are keyed by (seed, pixel, k), so a file depends on the scene, kind, size and seed only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tracer/core/camera.h"
#include "tracer/host/ray_file.h"

namespace tracer {

struct SceneData;

enum class RayKind { kPrimary, kDiffuse, kAo };

// "primary", "diffuse" or "ao"; false for any other name.
bool RayKindFromName(const std::string& name, RayKind* kind);
const char* RayKindName(RayKind kind);

// The fixed constants.
constexpr float kBenchmarkFovY = 60.0f;            // degrees
constexpr int kBenchmarkRaysPerHit = 2;            // diffuse and ao rays per hit primary ray
constexpr float kBenchmarkOffsetScale = 1e-4f;     // origin offset along the normal, times |diagonal|
constexpr float kBenchmarkAoDistanceScale = 0.1f;  // ao tmax, times |diagonal|

// The camera's placement from the scene's bounds (lo, hi).
struct BenchmarkView {
  Vec3 eye, target, up;
  float fovY;  // degrees
};
BenchmarkView BenchmarkViewOf(Vec3 lo, Vec3 hi);
// The pinhole camera of a view (BenchmarkViewOf's, or one the user placed) for a width x height image.
Camera BenchmarkCamera(const BenchmarkView& view, int width, int height);
Camera BenchmarkCamera(Vec3 lo, Vec3 hi, int width, int height);  // of BenchmarkViewOf(lo, hi)

// The rays of `kind` for a width x height image of `scene` through the pinhole camera `view` (null: the one its
// bounds give, BenchmarkViewOf). Primary rays need no traversal; diffuse and ao trace the primary rays with
// TraverseBvh on `threads` CPU threads (0 = all cores). The result does not depend on `threads`.
std::vector<RayRecord> MakeBenchmarkRays(const SceneData& scene, RayKind kind, int width, int height, uint32_t seed,
                                         int threads, const BenchmarkView* view = nullptr);

}  // namespace tracer
