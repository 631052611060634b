// @file profile_builders.h: the BVH builders side by side in --profile and --benchmark (profile_builders.cu), apart
// from profile.cu.
#pragma once
#include <string>
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer {

// The scene's triangles in the order its BVHs were built from (SceneData keeps them in the binary BVH's order).
std::vector<Vec3> OriginalPositions(const SceneData& data);

// The BVH builders side by side on the scene's triangles: the GPU builder (H-PLOC), its naive twin (PLOC's global
// passes) and the host's binned SAH with spatial splits; prints one block and adds "bvh_builders" to `j`.
class JsonWriter;
struct RenderOptions;
void CompareBvhBuilders(const SceneData& data, const RenderOptions& base, int repeats, JsonWriter& j);

}  // namespace tracer
