// @file knobs.h: every TRACER_* environment variable the tracer itself reads, in one place (docs/TESTING.md lists
// them with what they are for). They are for measuring and testing, not for normal use: flags are. Each is read
// when asked for, never cached, so a test may change one between two calls.
#pragma once
#include <string>

namespace tracer::knobs {

// TRACER_PLOC_RADIUS: the GPU builder's PLOC search radius, 8 or 32 (any other value: `fallback`).
int PlocRadius(int fallback);
// TRACER_SWEEP_BLOCKS: the most blocks of the GPU builder's top-down sweeps (at least 1), else `fallback`.
int SweepBlocks(int fallback);
// TRACER_SAH_TOP: 1 forces the GPU builder's SAH top on, 0 off; anything else (or unset) leaves it to size.
enum class Switch { kAuto, kOn, kOff };
Switch SahTop();
// TRACER_SPLIT_TOP: the GPU builder's spatial-split top: "auto" as BvhBuildOptions::splitTop (by the triangles'
// waste and the SAH cost), "1" always (kept whatever its SAH cost), "0" never; unset or anything else: as the options
// say. Only for H-PLOC builds with the wide BVH and spatial splits.
enum class SplitTopKnob { kUnset, kOff, kAuto, kForced };
SplitTopKnob SplitTop();
// TRACER_SPLIT_TOP_MIN: the fewest references of a node that the spatial-split top still splits (at least 2), else
// `fallback`.
int SplitTopMin(int fallback);
// TRACER_MORTON_CUBE (set to anything): Morton codes over the scene's bounding cube instead of its box.
bool MortonCube();
// TRACER_MPI_WATCHDOG_SECONDS: the MPI dispatcher's watchdog, the least time a rank may go silent before the job is
// ended (the dispatcher waits at least 20 times the longest pass too), default 300; 0 turns it off.
double MpiWatchdogSeconds();
// TRACER_MPI_SHARED_FILM: the film sum's groups, K consecutive ranks of a node (0 or 1: every rank alone; unset: the
// nodes).
int MpiSharedFilm();
// TRACER_MPI_DEVICE_SCENE=0 (on rank 0): no rank copies rank 0's device scene; all receive it from the host.
bool MpiDeviceSceneOff();
// TRACER_FAULT_INJECT: a fault to inject for the error-handling tests (cpu-pass, illegal-address, ipc-open, ...);
// empty when unset.
std::string FaultInject();

}  // namespace tracer::knobs
