// @file sah_top_wide.cu: the SAH top's grid-wide levels (TopWide*), and TopWideLevels, which runs them.
//
// Every group of more than kTopWide clusters is split by the whole grid, in chunks of kTopChunk clusters, a block
// each. (With a block a group, TopBig alone, the top was several times slower: binned SAH splits are uneven, so the
// groups along the tree's heaviest path add up to several times the clusters, all of them for one block at a time;
// docs/PERFORMANCE.md.) A level: TopWideChunks (the level's chunks; bins cleared), TopWideBin (each chunk's bins in
// shared memory, then added to its group's), TopWideSplit (a warp a group), TopWideCount (each chunk's clusters on the
// left; both children's centroid bounds), TopWideScatter (each chunk's clusters to the other buffer, in order: its
// lefts after those of the group's chunks before it, its rights after all the group's lefts and the rights before it,
// so that the places do not depend on timing), TopWideNext (the children, to the next level, TopBig or TopSmall). A
// level's groups are read from TopQueues::wide[level], the next level's written to wide[1 - level].
#include <algorithm>

#include "bvh_build/sah_top_wide.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/raii.h"

namespace tracer::gpu_build {
namespace {

__device__ int Chunks(const TopTask& g) { return (g.end - g.begin + kTopChunk - 1) / kTopChunk; }

__global__ void __launch_bounds__(1024) TopWideChunks(TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int warpSum[32], carry;
  const int count = s->wideCount[level], lane = static_cast<int>(threadIdx.x & 31),
            warp = static_cast<int>(threadIdx.x >> 5);
  if (threadIdx.x == 0) carry = 0, s->wideCount[1 - level] = 0;
  __syncthreads();
  for (int base = 0; base < count; base += static_cast<int>(blockDim.x)) {
    const int g = base + static_cast<int>(threadIdx.x);
    const int n = g < count ? Chunks(q.Wide(level)[g]) : 0;
    int incl = n;  // inclusive sum over the block
    for (int o = 1; o < 32; o *= 2) {
      const int v = __shfl_up_sync(kFullMask, incl, o);
      if (lane >= o) incl += v;
    }
    if (lane == 31) warpSum[warp] = incl;
    __syncthreads();
    for (int v = 0; v < warp; ++v) incl += warpSum[v];
    const int first = carry + incl - n;
    if (g < count) {
      const TopTask task = q.Wide(level)[g];
      w.chunk0[g] = first;
      for (int j = 0; j < n; ++j) w.chunkOf[first + j] = make_int2(g, task.begin + j * kTopChunk);
      ClearBins(w.bins[g], 0, 1);
      for (int e = 0; e < 12; ++e) w.kidBounds[12 * g + e] = e % 6 < 3 ? 0xffffffffu : 0u;
    }
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1) carry = first + n;
    __syncthreads();
  }
  if (threadIdx.x == 0) s->chunks = carry;
}

// A chunk's group and clusters.
struct TopChunk {
  int group, begin, end;
  TopTask task;
  __device__ TopChunk(const TopQueues& q, const TopWide& w, int level, int c) {
    const int2 co = w.chunkOf[c];
    group = co.x, task = q.Wide(level)[co.x], begin = co.y, end = min(co.y + kTopChunk, task.end);
  }
};

__global__ void __launch_bounds__(256)
    TopWideBin(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ TopBins bins;
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    ClearBins(bins, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
    __syncthreads();
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int* in = buf.Buffer(ch.task.parity);
    const int lane = static_cast<int>(threadIdx.x & 31);
    for (int i = ch.begin + static_cast<int>(threadIdx.x); i - lane < ch.end; i += static_cast<int>(blockDim.x)) {
      const uint32_t mask = __ballot_sync(kFullMask, i < ch.end);  // every lane of a warp with work goes round
      if (i >= ch.end) continue;
      const int k = in[i];
      AddToBins(bins, grid, t.lo[k], t.hi[k], t.Count(k), mask);
    }
    __syncthreads();
    TopBins& g = w.bins[ch.group];
    for (int i = static_cast<int>(threadIdx.x); i < 3 * kTopBins; i += static_cast<int>(blockDim.x)) {
      const int a = i / kTopBins, k = i % kTopBins, n = bins.count[a][k];
      if (n == 0) continue;
      atomicAdd(&g.count[a][k], n);
      for (int e = 0; e < 3; ++e)
        atomicMin(&g.lo[a][e][k], bins.lo[a][e][k]), atomicMax(&g.hi[a][e][k], bins.hi[a][e][k]);
    }
    __syncthreads();
  }
}

// One warp a block.
__global__ void __launch_bounds__(32) TopWideSplit(TopState* s, TopWide w, int level) {
  __shared__ TopBins bins;
  constexpr int kWords = static_cast<int>(sizeof(TopBins) / sizeof(uint32_t));
  for (int g = static_cast<int>(blockIdx.x); g < s->wideCount[level]; g += static_cast<int>(gridDim.x)) {
    const uint32_t* from = reinterpret_cast<const uint32_t*>(&w.bins[g]);
    uint32_t* to = reinterpret_cast<uint32_t*>(&bins);
    for (int i = static_cast<int>(threadIdx.x); i < kWords; i += 32) to[i] = from[i];
    __syncwarp();
    const int sp = BestBinnedSplit(bins);
    if (threadIdx.x == 0) w.split[g] = sp;
    __syncwarp();
  }
}

// Whether cluster k at position i of group `task` goes left by split sp (BestBinnedSplit's answer; -1: the first
// half of the positions).
__device__ bool GoesLeft(const PlocTree& t, const TopTask& task, const TopGrid& grid, int sp, int k, int i, Vec3& c) {
  c = Centroid(t.lo[k], t.hi[k]);
  return sp >= 0 ? grid.Bin(c, sp / kTopBins) <= sp % kTopBins : i < task.begin + (task.end - task.begin) / 2;
}

__global__ void __launch_bounds__(256)
    TopWideCount(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int left;
  __shared__ uint32_t bounds[12];
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    if (threadIdx.x == 0) left = 0;
    if (threadIdx.x < 12) bounds[threadIdx.x] = threadIdx.x % 6 < 3 ? 0xffffffffu : 0u;
    __syncthreads();
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int sp = w.split[ch.group];
    const int* in = buf.Buffer(ch.task.parity);
    int mine = 0;
    Vec3 lo[2] = {Vec3(kInf), Vec3(kInf)}, hi[2] = {Vec3(-kInf), Vec3(-kInf)};
    for (int i = ch.begin + static_cast<int>(threadIdx.x); i < ch.end; i += static_cast<int>(blockDim.x)) {
      Vec3 cen;
      const bool l = GoesLeft(t, ch.task, grid, sp, in[i], i, cen);
      mine += l;
      if (l)
        lo[0] = Min(lo[0], cen), hi[0] = Max(hi[0], cen);
      else
        lo[1] = Min(lo[1], cen), hi[1] = Max(hi[1], cen);
    }
    atomicAdd(&left, mine);
    GrowOrderedBounds(bounds, lo[0], hi[0]);
    GrowOrderedBounds(bounds + 6, lo[1], hi[1]);
    __syncthreads();
    if (threadIdx.x == 0) w.chunkLeft[c] = left;
    if (threadIdx.x < 12) {
      uint32_t* g = &w.kidBounds[12 * ch.group + threadIdx.x];
      if (threadIdx.x % 6 < 3)
        atomicMin(g, bounds[threadIdx.x]);
      else
        atomicMax(g, bounds[threadIdx.x]);
    }
    __syncthreads();
  }
}

// The lefts of group g's chunks before chunk c, and of all its chunks (every thread of the block gets both).
__device__ int2 LeftsBefore(const TopWide& w, const TopTask& task, int g, int c, int* sums) {
  if (threadIdx.x == 0) sums[0] = sums[1] = 0;
  __syncthreads();
  const int c0 = w.chunk0[g], n = Chunks(task);
  int before = 0, all = 0;
  for (int j = static_cast<int>(threadIdx.x); j < n; j += static_cast<int>(blockDim.x)) {
    const int v = w.chunkLeft[c0 + j];
    all += v;
    if (c0 + j < c) before += v;
  }
  atomicAdd(&sums[0], before), atomicAdd(&sums[1], all);
  __syncthreads();
  const int2 r = make_int2(sums[0], sums[1]);
  __syncthreads();
  return r;
}

__global__ void __launch_bounds__(kTopBlock)
    TopWideScatter(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level) {
  __shared__ int sums[2], counts[2 * kTopBlock / 32];
  for (int c = static_cast<int>(blockIdx.x); c < s->chunks; c += static_cast<int>(gridDim.x)) {
    const TopChunk ch(q, w, level, c);
    const int2 lefts = LeftsBefore(w, ch.task, ch.group, c, sums);
    const TopGrid grid(ch.task.clo, ch.task.chi);
    const int sp = w.split[ch.group];
    const int* in = buf.Buffer(ch.task.parity);
    int* out = buf.Buffer(ChildParity(ch.task.parity));
    const int leftBase = ch.task.begin + lefts.x;
    const int rightBase = ch.task.begin + lefts.y + (ch.begin - ch.task.begin - lefts.x);
    int leftDone = 0, rightDone = 0;
    for (int base = ch.begin; base < ch.end; base += kTopBlock) {
      const int i = base + static_cast<int>(threadIdx.x);
      const bool valid = i < ch.end;
      int k = 0;
      bool left = false;
      if (valid) {
        k = in[i];
        Vec3 cen;
        left = GoesLeft(t, ch.task, grid, sp, k, i, cen);
      }
      const RoundRank r = RankInRound(valid, left, counts);
      if (valid) out[left ? leftBase + leftDone + r.rank : rightBase + rightDone + r.rank] = k;
      leftDone += r.left, rightDone += r.right;
    }
  }
}

// A thread a group: its children (one cluster: that cluster; more: a new node, to the next level or on).
__global__ void TopWideNext(PlocTree t, TopBuffers buf, TopState* s, TopQueues q, TopWide w, int level, int* parent) {
  const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (g >= s->wideCount[level]) return;
  const TopTask task = q.Wide(level)[g];
  int nl = 0;
  for (int j = 0, c0 = w.chunk0[g], n = Chunks(task); j < n; ++j) nl += w.chunkLeft[c0 + j];
  const int* out = buf.Buffer(ChildParity(task.parity));
  int kid[2];
  for (int h = 0; h < 2; ++h) {
    const int first = h ? task.begin + nl : task.begin, last = h ? task.end : task.begin + nl;
    if (last - first == 1) {
      kid[h] = out[first];
      continue;
    }
    kid[h] = atomicAdd(&s->nextNode, 1);
    TopTask c{first, last, kid[h], ChildParity(task.parity), {}, {}};
    for (int e = 0; e < 3; ++e)
      c.clo[e] = FloatFromOrdered(w.kidBounds[12 * g + 6 * h + e]),
      c.chi[e] = FloatFromOrdered(w.kidBounds[12 * g + 6 * h + 3 + e]);
    PushTopTask(s, q, c, level);
  }
  LinkTopNode(t, parent, task.node, kid[0], kid[1]);
}

}  // namespace

// The grid-wide levels (TopWide*), each read back to see whether another is needed.
void TopWideLevels(const BuildArrays& a, const PlocTree& tree, const TopBuffers& buf, int* parent, int sms,
                   cudaStream_t st) {
  const size_t n = static_cast<size_t>(tree.n), groups = n / kTopWide + 1;
  const unsigned chunkGrid = std::min(static_cast<unsigned>(n / kTopChunk + groups), static_cast<unsigned>(16 * sms));
  const unsigned groupGrid = std::min(static_cast<unsigned>(groups), static_cast<unsigned>(16 * sms));
  PinnedBuffer<int> count(1);
  for (int level = 0;; level ^= 1) {
    TRACER_CUDA_CHECK(
        cudaMemcpyAsync(count.Get(), &a.topState->wideCount[level], sizeof(int), cudaMemcpyDeviceToHost, st));
    TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
    if (*count.Get() == 0) return;
    TopWideChunks<<<1, 1024, 0, st>>>(a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideChunks");
    TopWideBin<<<chunkGrid, 256, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideBin");
    TopWideSplit<<<groupGrid, 32, 0, st>>>(a.topState, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideSplit");
    TopWideCount<<<chunkGrid, 256, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideCount");
    TopWideScatter<<<chunkGrid, kTopBlock, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level);
    TRACER_CHECK_LAUNCH("TopWideScatter");
    TopWideNext<<<GridFor(groups, kBlock), kBlock, 0, st>>>(tree, buf, a.topState, a.topQueues, a.topWide, level,
                                                            parent);
    TRACER_CHECK_LAUNCH("TopWideNext");
  }
}

}  // namespace tracer::gpu_build
