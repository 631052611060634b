// @file minplus_launch.h: host launchers and timing of the min-plus propagation kernels (kernels/minplus_launch.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "tracer/core/minplus.h"
#include "tracer/host/render_options.h"

namespace tracer {

// One dense step dOut = min(dC, dD (x) dC) on device arrays laid out as in minplus.h (not kBand: see below). dOut must
// not alias dD or dC. When dChanged is not null, a thread that finds an entry made smaller stores 1 there (the caller
// zeroes it before the step); it is never cleared by the kernel.
//   kNaive:     one thread per (t, c), threadIdx.x -> t: each warp reads D with a stride of T floats.
//   kCoalesced: one thread per (t, c), threadIdx.x -> c: D[t][k] is a broadcast, C[k][c..c+31] one 128 B line.
//   kTiled:     128x128 output tile per 256-thread block, 8x8 outputs per thread from shared-memory tiles.
//   kDpx:       kTiled on fixed-point values with Hopper's __viaddmin_s32. This float entry point converts
//               D and C to fixed point into temporary buffers (cudaMalloc, so it synchronises) and the result
//               back: a convenience for tests; use MinPlusIterate or LaunchMinPlusStepFixed in a loop.
void LaunchMinPlusStep(MinPlusKernel which, const float* dD, const float* dC, float* dOut, int T, int K,
                       cudaStream_t stream, int* dChanged = nullptr);

// The banded step (core/minplus.h, TileBand) on device arrays: D is numTiles x band.Size(), C and out numTiles x K.
// Its result equals the dense step's on DenseFromBand(D), bit for bit.
void LaunchMinPlusBandStep(const TileBand& band, const float* dD, const float* dC, float* dOut, int K,
                           cudaStream_t stream, int* dChanged = nullptr);
// The T x T matrix a band stands for (DenseFromBand on the device).
void LaunchDenseFromBand(const TileBand& band, const float* dBand, float* dDense, cudaStream_t stream);

// The DPX step on values already in fixed point (see minplus.h), ending with FixSaturate.
void LaunchMinPlusStepFixed(const int32_t* dD, const int32_t* dC, int32_t* dOut, int T, int K, cudaStream_t stream,
                            int* dChanged = nullptr);
// Element-wise FixFromFloat / FloatFromFix over n values.
void LaunchFixFromFloat(const float* dSrc, int32_t* dDst, size_t n, cudaStream_t stream);
void LaunchFloatFromFix(const int32_t* dSrc, float* dDst, size_t n, cudaStream_t stream);

enum class MinPlusStop {
  kFixedSteps,      // exactly maxSteps steps, no host synchronisation
  kUntilConverged,  // after each step the host reads a device "changed" flag (one 4-byte copy and one stream
                    // synchronisation per step) and stops after the first step that changed nothing
};
// Iterates the step on dC in place (ping-pong with an internal scratch buffer; the result ends in dC).
// Returns the number of steps run, counted as MinPlusIterateHost counts them. For kDpx, D and C are converted
// to fixed point once, iterated there, and C is converted back: the result is then FloatFromFix of the
// fixed-point iteration, not the float one.
int MinPlusIterate(MinPlusKernel which, const float* dD, float* dC, int T, int K, int maxSteps, MinPlusStop stop,
                   cudaStream_t stream);

// MinPlusIterate for the banded step.
int MinPlusIterateBand(const TileBand& band, const float* dD, float* dC, int K, int maxSteps, MinPlusStop stop,
                       cudaStream_t stream);

// Median time in ms of one banded step on MinPlusRandomBandInputs (30% of the entries at +inf).
double TimeMinPlusBandMs(const TileBand& band, int K, int repeats);

// Median time in ms of one step of `which` at size T x K, over `repeats` timed launches after two warm-ups,
// on MinPlusRandomInputs (radius 8 tiles, 30% of C at +inf). kDpx times the fixed-point step alone (the
// conversions are done once, outside the timed region).
double TimeMinPlusMs(MinPlusKernel which, int T, int K, int repeats);

struct MinPlusTimingRow {
  const char* name;
  double ms;
  double speedupOverNaive;
  double gopsEquivalent;  // 2*T*T*K (one add and one min per term) / time, in 1e9/s
  double percentOfFp32Peak;
};
// Times all four kernels (naive with fewer repeats: it is slow) and prints a table to `out`:
// ms, speedup over naive, equivalent Gop/s and percent of the FP32 peak (SMs x 128 lanes x clock).
std::vector<MinPlusTimingRow> PrintMinPlusTable(int T, int K, int repeats, std::FILE* out = stdout);

}  // namespace tracer
