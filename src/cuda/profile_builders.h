// @file profile_builders.h: the BVH builders in --profile and --benchmark (profile_builders.cu): the GPU builder's
// triangle pre-splitting row, and the builders side by side, apart from profile.cu.
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

// The scene's triangles in the order its BVHs were built from (SceneData keeps them in the binary BVH's order).
std::vector<Vec3> OriginalPositions(const SceneData& data);

// The BVH builders side by side on the scene's triangles: the GPU builder (H-PLOC), its naive twin (PLOC's global
// passes) and the host's binned SAH with spatial splits; prints one block and adds "bvh_builders" to `j`.
class JsonWriter;
struct RenderOptions;
void CompareBvhBuilders(const SceneData& data, const RenderOptions& base, int repeats, JsonWriter& j);

}  // namespace tracer
