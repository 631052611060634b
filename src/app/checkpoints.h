// @file checkpoints.h: the render command's side of long renders: continuing a checkpoint (--resume) and saving one
// every --checkpoint-interval (--checkpoint).
#pragma once
#include <cstdint>
#include <string>

#include "app/cli.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/render_options.h"

namespace tracer {

// For --denoise, whether the checkpoint kept the odd samples' sums (checked as soon as it is read, before the scene
// loads). Returns kContinue, or 2 (a usage error, printed).
int CheckResumedHalves(const CliOptions& cli, const Checkpoint& resumed, const RenderOptions& opt);

// Points the render at the resumed film when the checkpoint was made with the same settings and image size, and, for
// --denoise, kept the odd samples' sums. Returns kContinue, or 2 (a usage error, printed) when it was not or did not.
int UseResumedFilm(const CliOptions& cli, const Checkpoint& resumed, const std::string& settings, RenderOptions& opt);

// The periodic save. A failed one must not end a render that may have hours left: it warns (once, unless quiet) and
// the render goes on; the final save at the end reports its own failure.
CheckpointFn PeriodicCheckpoint(const std::string& path, uint32_t seed, const std::string& settings, bool quiet);

}  // namespace tracer
