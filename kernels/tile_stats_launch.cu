// @file tile_stats_launch.cu: the per-tile light-statistics kernel (keyed block sums, one atomic per key per block) in
// its interleaved and neighbored versions, with timing.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tracer/cuda/block_reduce.cuh"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/event_timer.h"
#include "tracer/cuda/tile_stats_launch.h"

namespace tracer {

namespace {

// One thread per record; every thread reaches the block call (past-the-end threads hold key -1).
template <bool kNaive>
__global__ void __launch_bounds__(kTileStatsBlock)
    KeyedTileStatsKernel(const int* __restrict__ keys, const float* __restrict__ values, int n, float* E) {
  __shared__ BlockAccumulateStorage<kTileStatsBlock> storage;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int key = i < n ? keys[i] : -1;
  const float value = i < n ? values[i] : 0.0f;
  BlockAccumulateByKey<kNaive>(key, value, E, storage);
}

}  // namespace

void LaunchKeyedTileStats(bool naive, const int* dKeys, const float* dValues, int n, float* dE, cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned grid = GridFor(static_cast<size_t>(n), kTileStatsBlock);
  if (naive)
    KeyedTileStatsKernel<true><<<grid, kTileStatsBlock, 0, stream>>>(dKeys, dValues, n, dE);
  else
    KeyedTileStatsKernel<false><<<grid, kTileStatsBlock, 0, stream>>>(dKeys, dValues, n, dE);
  TRACER_CHECK_LAUNCH("tile_stats");
}

double TimeTileStatsMs(bool naive, int n, int numKeys, int runLength, int repeats) {
  if (n <= 0 || numKeys <= 0) return 0.0;
  repeats = std::max(repeats, 1);
  runLength = std::max(runLength, 1);
  // Sorted keys in runs, 10% "none", small integer values
  std::vector<int> keys(static_cast<size_t>(n));
  std::vector<float> values(static_cast<size_t>(n));
  uint32_t state = 0x2545F491u;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (int i = 0; i < n; ++i) {
    const int key = (i / runLength) % numKeys;
    keys[i] = next() % 10 == 0 ? -1 : key;
    values[i] = static_cast<float>(next() % 16);
  }
  DeviceBuffer<int> dKeys(keys.size(), "stats keys");
  DeviceBuffer<float> dValues(values.size(), "stats values"), dE(static_cast<size_t>(numKeys), "stats E");
  dKeys.Upload(keys.data(), keys.size());
  dValues.Upload(values.data(), values.size());
  dE.Zero();
  return MedianLaunchMs(0, 2, repeats,
                        [&]() { LaunchKeyedTileStats(naive, dKeys.Get(), dValues.Get(), n, dE.Get(), 0); });
}

void PrintTileStatsTable(int n, int numKeys, int repeats, std::FILE* out) {
  std::fprintf(out, "tile statistics, %d records over %d keys, block %u (keys sorted in runs, 10%% none)\n", n, numKeys,
               kTileStatsBlock);
  std::fprintf(out, "  %-8s %14s %14s %9s\n", "run", "neighbored ms", "interleaved ms", "speedup");
  for (int run : {256, 64, 16}) {
    const double naive = TimeTileStatsMs(true, n, numKeys, run, repeats);
    const double fast = TimeTileStatsMs(false, n, numKeys, run, repeats);
    std::fprintf(out, "  %-8d %14.3f %14.3f %8.2fx\n", run, naive, fast, naive / fast);
  }
  std::fflush(out);
}

}  // namespace tracer
