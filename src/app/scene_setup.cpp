// @file scene_setup.cpp: see scene_setup.h.
#include "scene_setup.h"

#include <cstdio>
#include <exception>
#include <iostream>

namespace tracer {

LoadOptions SceneLoadOptions(const CliOptions& cli) {
  LoadOptions options;
  options.allowOutsidePaths = cli.allowOutsidePaths;
  options.searchPaths = cli.texturePaths;
  return options;
}

BvhBuildOptions SceneBvhOptions(const CliOptions& cli, bool wide) {
  BvhBuildOptions options;
  options.wide = wide;
  options.spatialSplits = cli.spatialSplits;
  return options;
}

void ReportBuilt(const CliOptions& cli, const SceneData& data, double seconds) {
  if (!cli.render.quiet)
    std::fprintf(stderr, "loaded and built the BVH in %.2fs (%s)\n", seconds, DescribeBvhs(data).c_str());
}

int ReportingErrors(int (*command)(CliOptions&), CliOptions& cli) {
  try {
    return command(cli);
  } catch (const std::exception& e) {
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tracer
