// @file render_summary.h: what a render says on stderr about itself after the image was written: how fast, where
// the image went and where the time went.
#pragma once
#include <string>

#include "app/cli.h"
#include "tracer/host/render_result.h"
#include "tracer/host/timing.h"

namespace tracer {

// Where a render's time to image went.
struct RenderTimes {
  const Stopwatch* command = nullptr;  // started with the render command
  double load = 0.0;                   // loading and building (LoadedScene::loadSeconds)
  // > 0: the time from the end of the build to the film on the host (the renderer's set-up and the scene's upload
  // included), which an MPI job's summary gives for the whole job instead.
  double frame = 0.0;
  double write = 0.0;  // the image file (and the AOV files beside it)
};

// After the image was written: the adaptive sampling's outcome (--adaptive), the rates of each kind of ray, the write
// and, with times.frame > 0 (one process), where the time to image went; then the final checkpoint when saved.
void PrintSummary(const CliOptions& cli, const RenderResult& result, int startSpp, bool checkpointSaved,
                  const RenderTimes& times);

}  // namespace tracer
