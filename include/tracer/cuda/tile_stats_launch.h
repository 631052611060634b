// @file tile_stats_launch.h: host launchers and timing of the per-tile light-statistics reduction
// (kernels/tile_stats_launch.cu; the device primitives are in block_reduce_device.cuh).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>

namespace tracer {

constexpr unsigned kTileStatsBlock = 256;

// Adds values[i] into dE[keys[i]] for each of the n records (key = tile * K + cluster in [0, numKeys), or -1 for
// "no record"), one thread per record and one atomic per distinct key per block (BlockAccumulateByKey). The
// caller zeroes dE beforehand if it wants sums rather than accumulation. naive selects BlockSumNeighbored.
void LaunchKeyedTileStats(bool naive, const int* dKeys, const float* dValues, int n, float* dE, cudaStream_t stream);

// Median time in ms of LaunchKeyedTileStats over n records whose keys come in runs of about runLength equal keys
// (sorted by key, as after a sort or when a block shades one tile), 10% of them -1, over numKeys keys.
double TimeTileStatsMs(bool naive, int n, int numKeys, int runLength, int repeats);

// Times both versions at a few run lengths and prints a table to `out`.
void PrintTileStatsTable(int n, int numKeys, int repeats, std::FILE* out = stdout);

}  // namespace tracer
