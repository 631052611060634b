// @file scene_setup.h: what every command that loads a scene does the same way: the loader's options from the
// flags, and the line that reports the BVH build.
#pragma once
#include "tracer/host/cli.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

// --allow-outside-paths and --texture-path, for LoadScene.
LoadOptions SceneLoadOptions(const CliOptions& cli);

// "loaded and built the BVH in S s (binary BVH: ...; wide BVH: ...)" on stderr, unless --quiet.
void ReportBuilt(const CliOptions& cli, const SceneData& data, double seconds);

}  // namespace tracer
