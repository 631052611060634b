// @file camera_probe.h: a look through the camera before a render, for the warnings that keep a user from waiting
// for a black image: how many primary rays hit the scene, and how many of those see a triangle from behind.
#pragma once
#include "tracer/core/camera.h"

namespace tracer {

struct SceneData;

struct PrimaryRayProbe {
  int rays = 0;       // traced
  int hits = 0;       // that hit a triangle
  int backFaces = 0;  // of the hits, those that see the triangle's back (the ray along its winding's normal)
};

// Traces one ray through the centre of each cell of an n x n grid over the image (the scene's camera, the binary
// BVH, closest hit) on the calling thread: 1024 rays for n = 32, a few milliseconds on any scene.
PrimaryRayProbe ProbePrimaryRays(const SceneData& scene, int n = 32);
// The same through another camera (a candidate, before suggesting it).
PrimaryRayProbe ProbePrimaryRays(const SceneData& scene, const Camera& camera, int n = 32);

// Rays from `p` in n directions spread evenly over the sphere (a Fibonacci lattice), closest hit. Every ray hits: p
// is enclosed (no environment reaches it); back faces among the hits: p is most likely inside a closed object.
PrimaryRayProbe ProbeAround(const SceneData& scene, Vec3 p, int n = 256);

// Whether `camera` is a view worth suggesting: its primary rays hit the scene (a quarter of them at least) and see
// front faces (at most 1 in 20 see a back face), and its eye is outside every closed object (at most 1 in 20 of the
// rays around it see a back face).
bool SeesFrontFacesFromOutside(const SceneData& scene, const Camera& camera);

// True when the probe says the camera most likely looks at the outside of a closed room or the inside of a closed
// object: more than half of at least 16 hits see back faces. A scene of one-sided sheets facing away trips it too;
// the warning says "most likely".
bool MostlyBackFaces(const PrimaryRayProbe& probe);

}  // namespace tracer
