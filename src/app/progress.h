// @file progress.h: what a render shows while it runs and how it is stopped early: the progress bar, and SIGINT and
// SIGTERM, which finish the current pass instead of killing the process.
#pragma once
#include "tracer/host/render_result.h"

namespace tracer {

// From here on, the first SIGINT or SIGTERM is remembered (StopSignal) and the render stops at the next pass
// boundary; a second one exits at once.
void CatchStopSignals();
// The signal caught since CatchStopSignals, or 0.
int StopSignal();

// The progress callback of a render: draws the bar on stderr when showBar, and stops the render at the next pass
// boundary after a signal. Rates and the ETA count only this run's samples (from startSpp on), not those a resumed
// checkpoint brought along.
ProgressFn ProgressBar(bool showBar, int startSpp);

}  // namespace tracer
