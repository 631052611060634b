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

BvhBuildOptions SceneBvhOptions(const CliOptions& cli, bool wide, BvhBuilderFn builder) {
  BvhBuildOptions options;
  options.wide = wide;
  options.builder = builder;
  options.spatialSplits = cli.spatialSplits;
  return options;
}

void ReportBuilt(const CliOptions& cli, const SceneData& data, double seconds) {
  if (cli.render.quiet) return;
  const BvhBuildReport& r = data.bvhReport;
  if (!r.note.empty()) std::fprintf(stderr, "tracer: note: GPU BVH builder: %s\n", r.note.c_str());
  char how[160];
  if (r.builder == "gpu")
    std::snprintf(how, sizeof how, "built on the GPU in %.1f ms, %d clustering passes, + %.1f ms transfers", r.buildMs,
                  r.iterations, r.transferMs);
  else
    std::snprintf(how, sizeof how, "built on the CPU in %.0f ms", r.buildMs);
  std::fprintf(stderr, "loaded and built the BVH in %.2fs (%s; %s)\n", seconds, how, DescribeBvhs(data).c_str());
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
