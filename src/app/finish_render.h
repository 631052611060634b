// @file finish_render.h: the end of a render: refuse a NaN or empty result, save the final checkpoint, write the
// image (and --aov's outputs), report, and map what happened to the exit code.
#pragma once
#include <string>

#include "app/camera_choice.h"
#include "app/cli.h"
#include "app/render_summary.h"
#include "tracer/host/aov.h"
#include "tracer/host/render_result.h"

namespace tracer {

// Returns 1 on an error (--check-nan found a non-finite sample, nothing rendered, the checkpoint failed), 128 +
// `signal` when a signal interrupted the render (the image so far is written), else 0. `settings` go into the
// checkpoint and the .exr header; `camera` (what the probe before the render found) into the warning about a black or
// nearly black image.
int FinishRender(const CliOptions& cli, const RenderResult& result, const std::string& settings, int startSpp,
                 int signal, RenderTimes times, const CameraDiagnosis& camera, const AovImages& aov);

}  // namespace tracer
