// @file profile_builders.h: --profile's row about the GPU BVH builder's triangle pre-splitting (profile_builders.cu),
// apart from profile.cu, which measures it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer {

// What a render over a scene's trees spent in traversal: the intersect and shadow stages' milliseconds.
struct TraversalMs {
  double intersect = 0.0, shadow = 0.0;
};
using MeasureTraversal = std::function<TraversalMs(const SceneData& scene, const std::string& label)>;

// A row of the profile's table: the naive twin's time and the optimised one's, with the evidence.
struct PresplitRow {
  std::string name, stage, evidence;
  double naiveMs = 0.0, optMs = 0.0;
};

// The GPU builder's wide BVH over the scene's triangles (positions, in the order its BVHs were built from) without
// pre-splits (the naive twin) and with them forced (whatever the scene's waste says), each rendered through
// `measure` with the scene's own binary BVH and arrays: the traversal's time, and as evidence the builds' times (median
// of `repeats`), references per triangle, wide SAH costs and the scene's waste with the gate's choice.
PresplitRow ProfilePresplit(const SceneData& data, const std::vector<Vec3>& positions, int repeats,
                            const MeasureTraversal& measure);

}  // namespace tracer
