// @file bvh_build.h: binned-SAH BVH construction on the host into the flat layout of bvh.h.
#pragma once
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer {

// positions: 3 per triangle. Requires at least one triangle and finite coordinates.
Bvh BuildBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options = {});

}  // namespace tracer
