// @file scene_setup.cpp: see scene_setup.h.
#include "scene_setup.h"

#include <cstdio>

namespace tracer {

LoadOptions SceneLoadOptions(const CliOptions& cli) {
  LoadOptions options;
  options.allowOutsidePaths = cli.allowOutsidePaths;
  options.searchPaths = cli.texturePaths;
  return options;
}

void ReportBuilt(const CliOptions& cli, const SceneData& data, double seconds) {
  if (!cli.render.quiet)
    std::fprintf(stderr, "loaded and built the BVH in %.2fs (%s)\n", seconds, DescribeBvhs(data).c_str());
}

}  // namespace tracer
