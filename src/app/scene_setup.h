// @file scene_setup.h: what every command that loads a scene does the same way: the loader's options from the
// flags, the line that reports the BVH build, and how a failure ends the command.
#pragma once
#include "app/cli.h"
#include "tracer/host/job.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

// --allow-outside-paths, --texture-path, --threads and --naive-obj-parse, for LoadScene.
LoadOptions SceneLoadOptions(const CliOptions& cli);

// The BVH build options of the flags: spatial splits unless --no-spatial-splits; the wide BVH when `wide`; `builder`
// (ChooseBvhBuilder's) in place of the host builders unless null.
BvhBuildOptions SceneBvhOptions(const CliOptions& cli, bool wide, BvhBuilderFn builder = nullptr);

// What loading took beyond the parts the Scene (LoadSeconds) and SceneData (arraysSeconds) record themselves.
struct LoadClock {
  double build = 0.0;     // BuildSceneData as a whole (the BVH builds are this less arraysSeconds)
  double clusters = 0.0;  // BuildLightClusters, when tile guiding may need it
  double total = 0.0;     // from the start of loading to the end of the build
};

// On stderr unless --quiet: why the GPU builder handed the build to the host, if it did. With cli.Details(), also
// "loaded and built the BVH in S s (binary BVH: ...; wide BVH: ...)", then the seconds of each part of loading (read,
// validation, parse, conversion, BVH build, arrays, clusters) and the peak host memory per triangle: one line each
// under --benchmark and --profile, all on one line otherwise.
void ReportBuilt(const CliOptions& cli, const Scene& scene, const SceneData& data, const LoadClock& clock);

// Runs a single-process command; any exception ends it with "tracer: error: WHAT" on stderr and exit code 1.
int ReportingErrors(int (*command)(CliOptions&), CliOptions& cli);
// The same for render and profile, which may run under MPI: there the other ranks may be waiting for this one, so
// the job ends at once, naming the rank.
int ReportingErrors(int (*command)(CliOptions&, Job&), CliOptions& cli, Job& job);

}  // namespace tracer
