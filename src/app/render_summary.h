// @file render_summary.h: what a render says on stderr about itself: one line before it starts (what is rendered,
// where) and the summary after the image was written (how fast, where it went; under --verbose where the time went).
#pragma once
#include <cstddef>
#include <string>

#include "app/cli.h"
#include "tracer/host/denoise.h"
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
  double write = 0.0;    // the image file (and the AOV files beside it)
  double denoise = 0.0;  // --denoise (its half-buffers resolved, the features traced, the filter run); 0: not denoised
  DenoiseTiming denoiseParts;  // where the denoiser's time went (--verbose)
};

// What the render wrote besides the image.
struct RenderWrites {
  int aovFiles = 0;              // --aov's files beside an image other than .exr
  bool checkpointSaved = false;  // the final --checkpoint
};

// "rendering SCENE (N triangles) at WxH, S spp, WHERE", unless --quiet; `where` such as "on the GPU".
void PrintRenderStart(const CliOptions& cli, size_t triangles, const std::string& where);

// After the image was written: the adaptive sampling's outcome (--adaptive), then "rendered on BACKEND: S spp in T s,
// rates; wrote FILE" in one line, or under --verbose the rates of each kind of ray, the write and, with times.frame
// > 0 (one process), where the time to image went.
void PrintSummary(const CliOptions& cli, const RenderResult& result, int startSpp, const RenderWrites& writes,
                  const RenderTimes& times);

}  // namespace tracer
