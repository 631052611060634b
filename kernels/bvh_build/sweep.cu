// @file sweep.cu: the GPU BVH builder's two layouts from its tree: both top-down sweeps in one launch (the binary BVH's
// nodes and triangle order, the wide BVH's places), the wide nodes' encoding, and the binary BVH's order.
#include <algorithm>
#include <cuda/atomic>

#include "bvh_build/sweep.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// The sweep's blocks: 128 threads, so that a binary and a wide block fit an SM's registers together (163 a thread).
constexpr int kSweepBlock = 128;

// One thread's array in a block's shared memory, element j at j * blockDim.x (so a warp's lanes hit different banks).
// The top-down sweep keeps here its arrays that are indexed by computed values: other warps' acquire fences keep
// emptying the SM's L1 during the sweep, and arrays in local memory then went to L2 on every access, which made each
// wide node's visit many times slower (docs/PERFORMANCE.md).
struct LaneArray {
  int* at;
  __device__ int& operator[](int j) const { return at[j * static_cast<int>(blockDim.x)]; }
};

// The slots of node k as a wide node (their subtrees in node[0, m)), in the host collapse's order (its Collect:
// depth first, left first); budget: scratch. Starting from k's two children with the slots each is given, every
// round replaces each entry that splits its slots between its own children by those two, in place, from the back;
// every entry keeps at least one slot, so there are never more than kWideSlots. A round's loads are independent of
// each other (a round costs one trip to L2, not one per entry). Returns m.
__device__ int CollectSlots(const PlocTree& t, int k, const LaneArray& node, const LaneArray& budget) {
  const int2 ab = t.kids[k - t.n];
  const int left = t.choice[k - t.n].nodeSplit;
  node[0] = ab.x, budget[0] = left, node[1] = ab.y, budget[1] = kWideSlots - left;
  int m = 2;
  for (;;) {
    int share[kWideSlots], splits = 0;
    int2 kids[kWideSlots];
    TRACER_UNROLL
    for (int j = 0; j < kWideSlots; ++j) {
      const int q = j < m ? node[j] : 0;
      share[j] = q >= t.n ? t.choice[q - t.n].split[budget[j] - 1] : 0;
      kids[j] = share[j] > 0 ? t.kids[q - t.n] : make_int2(0, 0);
      splits += share[j] > 0;
    }
    if (splits == 0) return m;
    int to = m + splits;
    TRACER_UNROLL
    for (int j = kWideSlots - 1; j >= 0; --j) {
      if (j >= m) continue;
      const int b = budget[j];
      if (share[j] > 0) {
        to -= 2;
        node[to] = kids[j].x, budget[to] = share[j], node[to + 1] = kids[j].y, budget[to + 1] = b - share[j];
      } else {
        --to;
        node[to] = node[j], budget[to] = b;
      }
    }
    m += splits;
  }
}

// Node k's slots as a wide node (CollectSlots): their subtrees, boxes, kinds (inner: a wide node of its own) and
// triangle counts. Every array here is indexed by an unrolled loop's counter, and all slots' loads go out together.
__device__ int WideSlots(const PlocTree& t, int k, const LaneArray& node, const LaneArray& budget, int* q, Vec3* lo,
                         Vec3* hi, bool* inner, int* tris) {
  const int m = CollectSlots(t, k, node, budget);
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    q[j] = j < m ? node[j] : k;
    lo[j] = t.Lo(q[j]), hi[j] = t.Hi(q[j]), tris[j] = t.Count(q[j]);
    inner[j] = j < m && q[j] >= t.n && !t.choice[q[j] - t.n].leaf1;
  }
  return m;
}

// The root's place in both layouts, the node counts (totals[0] binary, totals[1] wide), and both sweeps' queues (each
// already -1): the root first, head 0, tail 1.
__global__ void InitRoot(PlocTree t, int* totals, int* binQueue, int* wideQueue, int* counters) {
  const int root = 2 * t.n - 2, x = root - t.n;
  const int2 ab = t.kids[x];
  t.triFirst[root] = 0;
  t.binAt[x] = 0;
  t.binDepth[x] = 0;
  t.wideAt[x] = make_int4(0, 1, 0, 1);
  if (t.wideFirst) t.wideFirst[x] = 0;
  totals[0] = 1 + t.BinNodes(ab.x) + t.BinNodes(ab.y);  // the root is a node even where one leaf would be cheaper
  totals[1] = t.wideNodes[x];
  binQueue[0] = wideQueue[0] = root;
  counters[0] = 0, counters[1] = 1, counters[2] = 0, counters[3] = 1;
}

// The top-down sweeps write both layouts, each in one launch. Inner node k, binary: the depth-first triangle positions
// of its children, and its binary node where the binary BVH has one (its children's places in it). Returns the inner
// children, which come next. status: binary depth, wide depth, a quantisation failure.
__device__ int VisitBinary(const PlocTree& t, int k, BvhNode* binNodes, int* status, const LaneArray& next) {
  const int x = k - t.n;
  const int2 ab = t.kids[x];
  const int first = t.triFirst[k];
  t.triFirst[ab.x] = first;
  t.triFirst[ab.y] = first + t.Count(ab.x);
  const int at = t.binAt[x];
  if (at >= 0) {
    const int depth = t.binDepth[x];
    int place = at + 1, ref[2], cnt[2];
    const int kid[2] = {ab.x, ab.y};
    for (int h = 0; h < 2; ++h) {
      const int q = kid[h];
      if (t.BinaryLeaf(q)) {
        ref[h] = t.triFirst[q], cnt[h] = t.Count(q);
        atomicMax(&status[0], depth + 1);
      } else {
        ref[h] = place, cnt[h] = 0;
        t.binAt[q - t.n] = place;
        t.binDepth[q - t.n] = depth + 1;
        place += t.binNodes[q - t.n];
      }
    }
    const Float4 l0 = t.lo[ab.x], l1 = t.hi[ab.x], r0 = t.lo[ab.y], r1 = t.hi[ab.y];
    BvhNode node;
    node.lxy = Float4{l0.x, l1.x, l0.y, l1.y};
    node.rxy = Float4{r0.x, r1.x, r0.y, r1.y};
    node.lrz = Float4{l0.z, l1.z, r0.z, r1.z};
    node.kids = Int4{ref[0], ref[1], cnt[0], cnt[1]};
    binNodes[at] = node;
  }
  int m = 0;
  if (ab.x >= t.n) next[m++] = ab.x;
  if (ab.y >= t.n) next[m++] = ab.y;
  return m;
}

// A wide node (its wideAt set): places its inner children (their wideAt) and its leaves' triangles (wideTriSrc: their
// binary positions) in the order of its slots; returns the inner children. The node itself is encoded afterwards,
// all wide nodes at once (EncodeWideNodes): only the slots' order is needed here, and the quantisation would add its
// latency to every level of the sweep.
__device__ int VisitWide(const PlocTree& t, int k, int* wideTriSrc, int* status, const LaneArray& node,
                         const LaneArray& budget, const LaneArray& next) {
  const int x = k - t.n, first = t.wideFirst[x];
  const int4 w = t.wideAt[x];
  int q[kWideSlots], tris[kWideSlots], below[kWideSlots];
  Vec3 lo[kWideSlots], hi[kWideSlots];
  bool inner[kWideSlots];
  const int m = WideSlots(t, k, node, budget, q, lo, hi, inner, tris);
  Vec3 blo = lo[0], bhi = hi[0];
  int innerSlots = 0, innerTris = 0;
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    below[j] = inner[j] ? t.wideNodes[q[j] - t.n] - 1 : 0;  // the wide nodes under an inner child
    if (j >= m) continue;
    blo = Min(blo, lo[j]), bhi = Max(bhi, hi[j]);
    if (inner[j]) ++innerSlots, innerTris += tris[j];
  }
  const uint32_t slotChild = AssignWideSlotsPacked(lo, hi, m, blo, bhi);  // as EncodeWideNode does
  uint32_t slotOf = 0;                                                    // 4 bits a child: its slot
  TRACER_UNROLL
  for (int s = 0; s < kWideSlots; ++s) {
    const uint32_t c = (slotChild >> (4 * s)) & 15u;
    if (c) slotOf |= static_cast<uint32_t>(s) << (4 * (c - 1));
  }
  atomicMax(&status[1], w.w);
  // Inner children in slot order from w.y, then their subtrees' nodes in slot order; triangles: this node's leaves in
  // slot order, then the inner children's subtrees' in slot order (as the host collapse emits them). Each child's
  // places from the children before it in slot order.
  const int childBase = w.y + innerSlots, triBase = w.z + (t.Count(k) - innerTris);
  int dfs = 0;  // the child's first triangle, depth first
  TRACER_UNROLL
  for (int j = 0; j < kWideSlots; ++j) {
    if (j >= m) break;
    const uint32_t sj = (slotOf >> (4 * j)) & 15u;
    int rank = 0, nodesBefore = 0, innerBefore = 0, leafBefore = 0;
    TRACER_UNROLL
    for (int i = 0; i < kWideSlots; ++i) {
      if (i >= m || ((slotOf >> (4 * i)) & 15u) >= sj) continue;
      if (inner[i])
        ++rank, nodesBefore += below[i], innerBefore += tris[i];
      else
        leafBefore += tris[i];
    }
    if (inner[j]) {
      t.wideAt[q[j] - t.n] = make_int4(w.y + rank, childBase + nodesBefore, triBase + innerBefore, w.w + 1);
      t.wideFirst[q[j] - t.n] = first + dfs;
      next[rank] = q[j];
    } else {
      for (int p = 0; p < tris[j]; ++p) wideTriSrc[w.z + leafBefore + p] = first + dfs + p;
    }
    dfs += tris[j];
  }
  return innerSlots;
}

// Every wide node (queue[0, totals[1]): the wide sweep's, each with its place), encoded: slots, grid, imask, meta.
// status[2]: a node's boxes do not quantise.
__global__ void __launch_bounds__(kBlock)
    EncodeWideNodes(PlocTree t, const int* queue, const int* totals, WideNode* wideNodes, int* status) {
  __shared__ int scratch[2 * kWideSlots * kBlock];
  const LaneArray slotNode{scratch + threadIdx.x}, slotBudget{scratch + kWideSlots * kBlock + threadIdx.x};
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < totals[1];
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const int k = queue[i];
    const int4 w = t.wideAt[k - t.n];
    Vec3 lo[kWideSlots], hi[kWideSlots];
    bool inner[kWideSlots];
    int q[kWideSlots], tris[kWideSlots], childOfSlot[kWideSlots];
    const int m = WideSlots(t, k, slotNode, slotBudget, q, lo, hi, inner, tris);
    WideNode node;
    if (EncodeWideNode(lo, hi, inner, tris, m, static_cast<uint32_t>(w.y), static_cast<uint32_t>(w.z), node,
                       childOfSlot))
      wideNodes[w.x] = node;
    else
      atomicExch(&status[2], 1);
  }
}

// A top-down sweep: a queue of the tree's nodes, each put there by its parent's visit. Each warp takes the next 32
// places and visits each node once its parent has put it there; a node's place always comes after its parent's, so
// the earliest waiting node's parent has been visited and nothing waits forever. The children of a round's visits get
// their places with one atomic per warp. total: the nodes to visit (all inner nodes, or the wide nodes). counters:
// head (places taken), tail (places filled).
template <bool kWide>
__device__ void SweepQueue(const PlocTree& t, int* queue, int* counters, int total, BvhNode* binNodes, int* wideTriSrc,
                           int* status, const LaneArray& node, const LaneArray& budget, const LaneArray& next) {
  using Ref = cuda::atomic_ref<int, cuda::thread_scope_device>;
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (;;) {
    int base = 0;
    if (lane == 0) base = atomicAdd(&counters[0], 32);
    base = __shfl_sync(kFullMask, base, 0);
    if (base >= total) return;
    const int place = base + lane;
    bool done = place >= total;
    while (!__all_sync(kFullMask, done)) {
      int m = 0;
      bool ready = false;
      if (!done) {
        const int k = Ref(queue[place]).load(cuda::std::memory_order_relaxed);
        if (k >= 0) {
          cuda::atomic_thread_fence(cuda::std::memory_order_acquire,
                                    cuda::thread_scope_device);  // what the parent wrote
          ready = true;
          m = kWide ? VisitWide(t, k, wideTriSrc, status, node, budget, next)
                    : VisitBinary(t, k, binNodes, status, next);
        }
      }
      int end = m;  // inclusive sum over the warp
      for (int o = 1; o < 32; o *= 2) {
        const int v = __shfl_up_sync(kFullMask, end, o);
        if (lane >= o) end += v;
      }
      const int sum = __shfl_sync(kFullMask, end, 31);
      int at = 0;
      if (lane == 31 && sum > 0) at = atomicAdd(&counters[1], sum);
      at = __shfl_sync(kFullMask, at, 31);
      if (m > 0) {
        cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);  // before the places
        for (int c = 0; c < m; ++c) Ref(queue[at + end - m + c]).store(next[c], cuda::std::memory_order_relaxed);
      }
      if (ready)
        done = true;
      else if (!done)
        __nanosleep(64);
    }
  }
}

// Both top-down sweeps at once, in one launch (the wide one keeps its own triangle positions, wideFirst): blocks
// [0, binaryBlocks) sweep the binary layout, the rest the wide one.
__global__ void __launch_bounds__(kSweepBlock)
    SweepTopDown(PlocTree t, int* binQueue, int* wideQueue, int* counters, const int* totals, int binaryBlocks,
                 BvhNode* binNodes, int* wideTriSrc, int* status) {
  __shared__ int scratch[3 * kWideSlots * kSweepBlock];  // each thread's slots, their budgets, the children to queue
  const int me = static_cast<int>(threadIdx.x);
  const LaneArray node{scratch + me}, budget{scratch + kWideSlots * kSweepBlock + me},
      next{scratch + 2 * kWideSlots * kSweepBlock + me};
  if (static_cast<int>(blockIdx.x) < binaryBlocks)
    SweepQueue<false>(t, binQueue, counters, t.n - 1, binNodes, wideTriSrc, status, node, budget, next);
  else
    SweepQueue<true>(t, wideQueue, counters + 2, totals[1], binNodes, wideTriSrc, status, node, budget, next);
}

// The binary BVH's order: the triangle at each of its positions. Its triangles (48 bytes each) are gathered on the host
// from the positions (GatherBvhTriangles), which is faster than reading them back.
__global__ void WriteOrder(PlocTree t, const int* sortedTri, int32_t* order) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= t.n) return;
  order[t.triFirst[i]] = sortedTri[i];
}

// Blocks for each top-down sweep: a warp for every 32 nodes, at most two blocks of kSweepBlock per SM (or
// TRACER_SWEEP_BLOCKS, for measuring). More warps only wait longer for their nodes; fewer leave a large tree's sweep
// short of warps (docs/PERFORMANCE.md).
int SweepBlocks(size_t nodes) {
  const int cap = knobs::SweepBlocks(2 * Multiprocessors());
  return std::min(static_cast<int>(GridFor(nodes, kSweepBlock)), cap);
}

}  // namespace

void WriteLayouts(const BuildArrays& a, const PlocTree& tree, const BvhBuildOptions& options, cudaStream_t st) {
  const size_t numTris = static_cast<size_t>(tree.n), inner = numTris - 1;
  int *binQueue = a.cNode[0], *wideQueue = a.ids;
  TRACER_CUDA_CHECK(cudaMemsetAsync(binQueue, 0xff, numTris * sizeof(int), st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(wideQueue, 0xff, numTris * sizeof(int), st));
  InitRoot<<<1, 1, 0, st>>>(tree, a.totals, binQueue, wideQueue, a.counters);
  TRACER_CHECK_LAUNCH("InitRoot");
  const int sweepBlocks = SweepBlocks(inner);
  SweepTopDown<<<options.wide ? 2 * sweepBlocks : sweepBlocks, kSweepBlock, 0, st>>>(
      tree, binQueue, wideQueue, a.counters, a.totals, sweepBlocks, a.binOut, a.wideTriSrc, a.status);
  TRACER_CHECK_LAUNCH("SweepTopDown");
  if (options.wide) {
    EncodeWideNodes<<<GridFor(inner / 4 + 1, kBlock), kBlock, 0, st>>>(tree, wideQueue, a.totals, a.wideOut, a.status);
    TRACER_CHECK_LAUNCH("EncodeWideNodes");
  }
  WriteOrder<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(tree, a.sortedTri, a.order);
  TRACER_CHECK_LAUNCH("WriteOrder");
}

}  // namespace tracer::gpu_build
