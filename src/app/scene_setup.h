// @file scene_setup.h: what every command that loads a scene does the same way: the loader's options from the
// flags, the line that reports the BVH build, and how a failure ends the command.
#pragma once
#include "tracer/host/cli.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

// --allow-outside-paths and --texture-path, for LoadScene.
LoadOptions SceneLoadOptions(const CliOptions& cli);

// The BVH build options of the flags: spatial splits unless --no-spatial-splits; the wide BVH when `wide`; `builder`
// (ChooseBvhBuilder's) in place of the host builders unless null.
BvhBuildOptions SceneBvhOptions(const CliOptions& cli, bool wide, BvhBuilderFn builder = nullptr);

// "loaded and built the BVH in S s (binary BVH: ...; wide BVH: ...)" on stderr, unless --quiet.
void ReportBuilt(const CliOptions& cli, const SceneData& data, double seconds);

// Runs a single-process command; any exception ends it with "tracer: error: WHAT" on stderr and exit code 1.
// (Render and profile, which may run under MPI, have their own in commands.cpp: they end the job first.)
int ReportingErrors(int (*command)(CliOptions&), CliOptions& cli);

}  // namespace tracer
