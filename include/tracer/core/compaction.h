// @file compaction.h: how stages hand work to the next stage, an enum that host options name without pulling in
// the warp intrinsics of queue.h.
#pragma once

namespace tracer {

// Warp-aggregated pushes (the default), one atomic per thread (--naive-compaction), or no queues at all: every
// stage runs over the whole pool and dead lanes idle (--no-compaction).
enum class Compaction { kWarpAggregated, kPerThreadAtomic, kNone };

}  // namespace tracer
