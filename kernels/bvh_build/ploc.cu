// @file ploc.cu: PLOC's global passes (Meister and Bittner 2018), the naive twin of H-PLOC: each pass finds every
// cluster's nearest neighbour, flags the mutual pairs, scans the flags (CUB) and merges, until one cluster is left (or,
// with the SAH top, a quarter of the triangles, handed over to it).
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <stdexcept>

#include "bvh_build/ploc.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/raii.h"

namespace tracer::gpu_build {
namespace {

// Each cluster's nearest neighbour (NearerPair) within kRadius positions.
template <int kRadius>
__global__ void PlocNearest(const Float4* cLo, const Float4* cHi, const PassState* state, int stop, int* nn) {
  const int c = state->clusters;
  if (c <= stop || static_cast<int>(blockIdx.x) * kBlock >= c) return;
  __shared__ Float4 sLo[kBlock + 2 * kRadius], sHi[kBlock + 2 * kRadius];
  const int base = static_cast<int>(blockIdx.x) * kBlock - kRadius;
  for (int k = threadIdx.x; k < kBlock + 2 * kRadius; k += kBlock) {
    const int g = base + k;
    if (g >= 0 && g < c) sLo[k] = cLo[g], sHi[k] = cHi[g];
  }
  __syncthreads();
  const int i = static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x);
  if (i >= c) return;
  const int me = static_cast<int>(threadIdx.x) + kRadius;
  const Float4 lo = sLo[me], hi = sHi[me];
  float best = kInf;
  int bestJ = -1;
  for (int d = -kRadius; d <= kRadius; ++d) {
    const int j = i + d;
    if (d == 0 || j < 0 || j >= c) continue;
    const float a = UnionHalfArea(lo, hi, sLo[me + d], sHi[me + d]);
    if (bestJ < 0 || NearerPair(a, i, j, best, bestJ)) best = a, bestJ = j;
  }
  nn[i] = bestJ;
}

// Per cluster: bit 32 when it merges with its mutual nearest neighbour (the lower of the two makes the node), bit 0
// when it survives the pass (all but the higher of a mutual pair). An exclusive sum gives both the new node's
// number and the survivor's new position.
__global__ void PlocFlags(const int* nn, const PassState* state, int stop, int capacity, unsigned long long* flags) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, c = state->clusters;
  if (i >= capacity) return;
  if (i >= c || c <= stop) {  // the scan runs over `capacity`: nothing beyond the clusters counts
    flags[i] = 0;
    return;
  }
  const int j = nn[i];
  const bool mutual = nn[j] == i;
  flags[i] =
      (static_cast<unsigned long long>(mutual && i < j) << 32) | static_cast<unsigned long long>(!(mutual && i > j));
}

// Merges mutual pairs into new nodes (with both layouts' bottom-up choices), and compacts the survivors into copy
// `outAt`. Clustering stops at `stop` clusters or fewer.
__global__ void PlocMerge(PlocTree t, const PassState* state, PassState* next, int stop, int outAt, int* passes,
                          const int* nn, const unsigned long long* flags, const unsigned long long* scanned,
                          const int* cNode, const Float4* cLo, const Float4* cHi, int* outNode, Float4* outLo,
                          Float4* outHi, int maxLeaf, double ci, double ct, bool wide) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, c = state->clusters, nodeBase = state->nodeBase;
  if (c <= stop) {  // done: a queued pass only carries the state over
    if (i == 0) *next = *state;
    return;
  }
  if (i >= c) return;
  const unsigned long long f = flags[i], s = scanned[i];
  if (i == c - 1) {
    const int survivors = static_cast<int>((s + f) & 0xffffffffu), merged = c - survivors;
    *next = PassState{survivors, nodeBase + merged, outAt};
    ++*passes;
  }
  if (!(f & 1u)) return;
  const int pos = static_cast<int>(s & 0xffffffffu);
  if (!(f >> 32)) {
    outNode[pos] = cNode[i], outLo[pos] = cLo[i], outHi[pos] = cHi[i];
    return;
  }
  const int j = nn[i], k = nodeBase + static_cast<int>(s >> 32);
  const Float4 lo = BoxMin(cLo[i], cLo[j]), hi = BoxMax(cHi[i], cHi[j]);
  MakeNode(t, k, cNode[i], cNode[j], lo, hi, maxLeaf, ci, ct, wide);
  outLo[pos] = lo, outHi[pos] = hi, outNode[pos] = k;
}

// PLOC's passes: the clusters left (state->at holds them) to the top's list.
__global__ void TopGather(const PassState* state, const int* cNode0, const int* cNode1, TopState* s, int* list) {
  const int m = state->clusters, i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i == 0) s->items = m;
  if (i < m) list[i] = (state->at ? cNode1 : cNode0)[i];
}

}  // namespace

size_t PassScanBytes(int n, cudaStream_t st) {
  size_t bytes = 0;
  TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<unsigned long long*>(nullptr),
                                                  static_cast<unsigned long long*>(nullptr), n, st));
  return bytes;
}

// PLOC's passes, queued in groups without waiting for each other: each kernel reads the cluster count from the device
// (grids are sized by a count read back earlier, an upper bound), and a pass over `stop` clusters or fewer does
// nothing. The count after a group is read back while the next group runs, to stop and to shrink the grids. Pass q
// reads state[q % 2] and writes state[(q + 1) % 2]. With the SAH top (top: its list), clustering stops at a quarter of
// the triangles, and the clusters left go to the list. Returns the passes.
int ClusterInPasses(const BuildArrays& a, const PlocTree& tree, size_t tempBytes, const BvhBuildOptions& options,
                    int* top, cudaStream_t st) {
  constexpr int kPassesPerCheck = 8;
  const int n = tree.n, stop = top ? std::max(2, n / 4) : 1;
  const PassState first[2] = {{n, n, 0}, {n, n, 0}};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.state, first, sizeof first, cudaMemcpyHostToDevice, st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.passes, 0, sizeof(int), st));
  PinnedBuffer<PassState> hostState(2);
  CudaEvent groupDone[2];
  int c = n, queued = 0;
  for (int group = 0;; ++group) {
    const unsigned grid = GridFor(static_cast<size_t>(c), kBlock);
    for (int k = 0; k < kPassesPerCheck; ++k, ++queued) {
      const int cur = queued & 1;  // the clusters' double buffers
      PassState *now = a.state + (queued & 1), *next = a.state + 1 - (queued & 1);
      WithPlocRadius([&](auto radius) {
        PlocNearest<decltype(radius)::value><<<grid, kBlock, 0, st>>>(a.cLo[cur], a.cHi[cur], now, stop, a.nn);
      });
      TRACER_CHECK_LAUNCH("PlocNearest");
      PlocFlags<<<grid, kBlock, 0, st>>>(a.nn, now, stop, c, a.flags);
      TRACER_CHECK_LAUNCH("PlocFlags");
      size_t bytes = tempBytes;
      TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(a.temp, bytes, a.flags, a.scanned, c, st));
      PlocMerge<<<grid, kBlock, 0, st>>>(tree, now, next, stop, 1 - cur, a.passes, a.nn, a.flags, a.scanned,
                                         a.cNode[cur], a.cLo[cur], a.cHi[cur], a.cNode[1 - cur], a.cLo[1 - cur],
                                         a.cHi[1 - cur], options.maxLeafSize, options.intersectCost,
                                         options.traversalCost, options.wide);
      TRACER_CHECK_LAUNCH("PlocMerge");
    }
    TRACER_CUDA_CHECK(cudaMemcpyAsync(hostState.Get() + (group & 1), a.state + (queued & 1), sizeof(PassState),
                                      cudaMemcpyDeviceToHost, st));
    groupDone[group & 1].Record(st);
    if (group == 0) continue;
    groupDone[(group - 1) & 1].Synchronize();  // the group before this one: this one runs meanwhile
    const int seen = hostState.Get()[(group - 1) & 1].clusters;
    if (seen <= stop) break;
    if (seen >= c && group > 1) throw std::logic_error("GPU BVH builder: clustering passes merged nothing");
    c = seen;
  }
  if (top) {
    TopGather<<<GridFor(static_cast<size_t>(c), kBlock), kBlock, 0, st>>>(a.state + (queued & 1), a.cNode[0],
                                                                          a.cNode[1], a.topState, top);
    TRACER_CHECK_LAUNCH("TopGather");
  }
  int passes = 0;
  TRACER_CUDA_CHECK(cudaMemcpyAsync(&passes, a.passes, sizeof passes, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  return passes;
}

}  // namespace tracer::gpu_build
