// @file block_reduce_device.cuh: warp and block sums for the per-tile light statistics, in two versions
// (interleaved pairs + warp shuffles, and the naive neighbored pairs), and the keyed block accumulation that
// turns per-thread (key, value) records into one global atomic per distinct key per block (device-only).
//
// After Harris, "Optimizing Parallel Reduction in CUDA" (2007): kernel 1 (neighbored pairs, tid % (2*stride)
// divergence) against kernels 3 and 5 (sequential addressing, last warp by shuffles rather than the volatile
// unrolled tail of the original).
#pragma once
#include <cuda_runtime.h>

#include "tracer/core/common.h"

namespace tracer {

// Sum over the first `width` lanes of a warp by __shfl_down_sync.
//   Preconditions: width is a power of two in [1, 32]; lanes [0, width) of the warp all call it, and `mask`
//   holds exactly those lanes (0xffffffff for width 32).
//   Result: valid in lane 0 only (the other lanes hold partial sums).
//   Example: width 32, lane i holds i -> lane 0 returns 496.
TRACER_DEVICE float WarpSum(float v, unsigned width = 32, unsigned mask = 0xffffffffu) {
  for (unsigned offset = width / 2; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset);
  return v;
}

// Block-wide sum, interleaved pairs (sequential addressing: thread i adds i + s, s halving from n/2) in shared
// memory down to 32 partial sums, then one warp finishes with shuffles. No divergence inside a warp until the
// last warp, and conflict-free shared memory accesses.
//   Preconditions: 1-D block, blockDim.x a power of two in [1, 1024]; every thread of the block calls it (it
//   holds barriers); `smem` points to at least blockDim.x floats of shared memory that no other code touches
//   during the call. The call may be repeated right away on the same smem (no extra barrier needed).
//   Result: the sum of all threads' v, valid in thread 0 only. The summation order differs from
//   BlockSumNeighbored, so float results agree only to rounding (exactly for integer-valued inputs).
//   Example: 256 threads, thread i holds 1.0f -> thread 0 returns 256.0f.
TRACER_DEVICE float BlockSumInterleaved(float v, float* smem) {
  const unsigned tid = threadIdx.x, n = blockDim.x;
  smem[tid] = v;
  __syncthreads();
  for (unsigned s = n / 2; s >= 32; s /= 2) {  // down to the last 32 partial sums
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  float r = 0.0f;
  if (tid < 32) {
    const unsigned width = n < 32 ? n : 32;
    const unsigned mask = width == 32 ? 0xffffffffu : (1u << width) - 1u;
    r = WarpSum(smem[tid], width, mask);
  }
  return r;
}

// Naive twin of BlockSumInterleaved: neighbored pairs, `tid % (2*stride) == 0` adds tid + stride, so the
// active threads are scattered over every warp (divergent until stride 32), each level costs a barrier and an
// integer modulo, and shared accesses become 2-, 4-, ... way bank-conflicted; expect about 2x the time of the
// interleaved version for the reduction itself.
//   Preconditions, result and example: as BlockSumInterleaved.
TRACER_DEVICE float BlockSumNeighbored(float v, float* smem) {
  const unsigned tid = threadIdx.x, n = blockDim.x;
  smem[tid] = v;
  __syncthreads();
  for (unsigned stride = 1; stride < n; stride *= 2) {
    if (tid % (2 * stride) == 0) smem[tid] += smem[tid + stride];
    __syncthreads();
  }
  return smem[tid];  // meaningful in thread 0 (smem[0] is the sum)
}

// Shared memory that BlockAccumulateByKey needs: blockDim.x floats and one int.
template <unsigned kBlockThreads>
struct BlockAccumulateStorage {
  float sums[kBlockThreads];
  int leader;
};

// Adds each thread's `value` into E[key] with one atomicAdd per distinct key in the block: the block picks the
// largest pending key (a shared atomicMax), sums the values of the threads holding it (BlockSumNeighbored when
// kNaive, else BlockSumInterleaved), thread 0 adds that sum to E[key], and the loop repeats until no key is
// pending. Cost: one block sum per distinct key, so it pays when records arrive grouped by key (one tile's
// shading points toward one cluster, or after a sort by key); with 256 different keys it is 256 block sums.
//   Preconditions: 1-D block of kBlockThreads == blockDim.x threads, a power of two <= 1024; every thread calls
//   it (pass key = -1 for "no record", also for threads past the end of the input: no early return before
//   the call); `storage` is shared memory.
//   Result: E updated (float atomics: the order of additions between blocks is not fixed, so sums of
//   non-integer values vary in the last bits from run to run). Nothing is returned.
//   Example: 4 threads with (key, value) = (2, 1), (2, 3), (-1, 9), (0, 5) -> E[2] += 4 and E[0] += 5, two atomics.
template <bool kNaive, unsigned kBlockThreads>
__device__ void BlockAccumulateByKey(int key, float value, float* E, BlockAccumulateStorage<kBlockThreads>& storage) {
  for (;;) {
    if (threadIdx.x == 0) storage.leader = -1;
    __syncthreads();
    if (key >= 0) atomicMax(&storage.leader, key);
    __syncthreads();
    const int leader = storage.leader;  // uniform across the block
    if (leader < 0) return;
    const float mine = key == leader ? value : 0.0f;
    const float sum = kNaive ? BlockSumNeighbored(mine, storage.sums) : BlockSumInterleaved(mine, storage.sums);
    if (threadIdx.x == 0) atomicAdd(&E[leader], sum);
    if (key == leader) key = -1;
  }
}

}  // namespace tracer
