// @file scene_setup.cpp: see scene_setup.h.
#include "scene_setup.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "tracer/host/timing.h"

namespace tracer {

LoadOptions SceneLoadOptions(const CliOptions& cli) {
  LoadOptions options;
  options.allowOutsidePaths = cli.allowOutsidePaths;
  options.searchPaths = cli.texturePaths;
  options.threads = cli.render.threads;
  options.tinyobjParse = cli.naiveObjParse;
  return options;
}

BvhBuildOptions SceneBvhOptions(const CliOptions& cli, bool wide, BvhBuilderFn builder) {
  BvhBuildOptions options;
  options.wide = wide;
  options.builder = builder;
  options.spatialSplits = cli.spatialSplits;
  return options;
}

void ReportBuilt(const CliOptions& cli, const Scene& scene, const SceneData& data, const LoadClock& clock) {
  if (cli.render.quiet) return;
  const BvhBuildReport& r = data.bvhReport;
  if (!r.note.empty()) std::fprintf(stderr, "tracer: note: GPU BVH builder: %s\n", r.note.c_str());
  if (!cli.Details()) return;
  char how[320];
  if (r.builder == "gpu") {
    const std::string method = r.iterations > 0 ? r.method + ": " + std::to_string(r.iterations) : r.method;
    std::snprintf(how, sizeof how, "built on the GPU in %.1f ms, %s, + %.1f ms transfers and gathers", r.buildMs,
                  method.c_str(), r.transferMs);
  } else {
    std::snprintf(how, sizeof how, "built on the CPU in %.0f ms%s%s", r.buildMs, r.method.empty() ? "" : ", ",
                  r.method.c_str());
  }
  std::fprintf(stderr, "loaded and built the BVH in %.2fs (%s; %s)\n", clock.total, how, DescribeBvhs(data).c_str());
  const LoadSeconds& s = scene.seconds;
  struct Part {
    const char* name;
    double seconds;
    const char* what;
  };
  const Part parts[] = {
      {"read", s.read, "the OBJ into memory"},
      {"validation", s.validate,
       cli.naiveObjParse ? "line checks before tinyobjloader" : "line checks, numbers and indices parsed with them"},
      {"parse", s.parse, cli.naiveObjParse ? "tinyobjloader" : "MTL files and triangulation"},
      {"conversion", s.convert, "into the scene's arrays, indices and areas re-checked"},
      {"BVH build", clock.build - data.arraysSeconds, "binary and wide"},
      {"arrays", data.arraysSeconds, "shading, emitters and materials in BVH order"},
      {"light clusters", clock.clusters, "for tile guiding"},
  };
  const double peak = static_cast<double>(PeakHostBytes());
  const double perTriangle = peak / static_cast<double>(std::max<size_t>(scene.NumTriangles(), 1));
  if (cli.command == CliCommand::kRender) {
    std::fprintf(stderr, "  load:");
    for (const Part& p : parts) std::fprintf(stderr, " %s %.2fs,", p.name, p.seconds);
    std::fprintf(stderr, " peak host memory %.2f GiB = %.0f bytes/triangle\n", peak / 1073741824.0, perTriangle);
    return;
  }
  double accounted = 0.0;
  std::fprintf(stderr, "loading on the host (%zu triangles):\n", scene.NumTriangles());
  for (const Part& p : parts) {
    std::fprintf(stderr, "  %-18s %8.2f s  (%s)\n", p.name, p.seconds, p.what);
    accounted += p.seconds;
  }
  std::fprintf(stderr, "  %-18s %8.2f s  (camera, warnings, the rest)\n", "other", clock.total - accounted);
  std::fprintf(stderr, "  %-18s %8.2f s\n", "total", clock.total);
  std::fprintf(stderr, "  %-18s %8.2f GiB = %.0f bytes/triangle (peak resident set of the process)\n",
               "peak host memory", peak / 1073741824.0, perTriangle);
}

// What std::bad_alloc means to a user, where nothing more precise caught it.
constexpr char kOutOfHostMemory[] =
    "out of host memory (a scene, an image or a path pool too large for this machine or its memory limit); a smaller "
    "--width/--height or --paths-in-flight needs less";

int ReportingErrors(int (*command)(CliOptions&), CliOptions& cli) {
  try {
    return command(cli);
  } catch (const std::bad_alloc&) {
    std::cerr << "tracer: error: " << kOutOfHostMemory << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  }
}

int ReportingErrors(int (*command)(CliOptions&, Job&), CliOptions& cli, Job& job) {
  try {
    return command(cli, job);
  } catch (const std::bad_alloc&) {
    if (job.Ranks() > 1) job.Abort(kOutOfHostMemory);
    std::cerr << "tracer: error: " << kOutOfHostMemory << "\n";
    return 1;
  } catch (const std::exception& e) {
    if (job.Ranks() > 1) job.Abort(e.what());
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tracer
