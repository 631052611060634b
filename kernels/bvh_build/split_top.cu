// @file split_top.cu: the GPU BVH builder's spatial-split top (split_top.h), a level at a time: the references of
// every node still to split binned on all three axes (BinRefs: object bins by centre, spatial bins by part), the
// cheapest split of each (ChooseSplits, the budget shared out in node order), each reference's sides (SideFlags)
// and their places by one scan (CUB), the children (PlanChildren), and the references moved there, straddling ones
// clipped in two (Scatter). Places come from the scan, not from atomics, so the references' order, and with it the
// tree, is the same every run.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <new>
#include <stdexcept>
#include <vector>

#include "bvh_build/morton_key.cuh"
#include "bvh_build/split_top.h"
#include "tracer/core/spatial_split.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/host/knobs.h"

namespace tracer::gpu_build {
namespace {

constexpr int kNB = kSpatialBins;
constexpr int kNodeBlocks = 64;  // the most blocks a node's references get in BinRefs, SideFlags and Scatter

// A node of the top, on the device and the host. Its references are [begin, begin + count) of the level's array.
struct SplitNode {
  int begin, count;
  uint32_t path;  // its turns from the root, the last in bit 0 (left 0, right 1)
  int depth;
  int choice;     // its entry in the level's choices, or -1 (not split at this level)
  int done;       // 1: no split was found for it (it stays a group)
  Float4 lo, hi;  // the box its bins span (from the parent's bins: around its references, up to clipping's rounding)
};

// One node's bins, boxes as ordered floats (OrderedFromFloat) for atomicMin and atomicMax: [0] the object bins (each
// reference's box in the bin of its centre), [1] the spatial bins (each reference's part in each bin it spans).
struct SplitBins {
  uint32_t count[3][kNB];                // object: references whose centre lies in the bin
  uint32_t enter[3][kNB], exit[3][kNB];  // spatial: references whose first, last bin it is
  uint32_t lo[2][3][kNB][3], hi[2][3][kNB][3];
};
constexpr int kCountWords = 9 * kNB, kLoWords = 18 * kNB, kBinWords = kCountWords + 2 * kLoWords;
static_assert(sizeof(SplitBins) == 4 * kBinWords, "SplitBins: counts, then the minima, then the maxima");

// The cheapest split of one kind: cost (the children's half areas times their references), axis, bin (the first on
// the right), the references on either side and the children's boxes.
struct Candidate {
  double cost;
  int axis, bin, leftCount, rightCount;
  Float4 leftLo, leftHi, rightLo, rightHi;
};
struct SplitChoice {
  Candidate object, spatial;
  int kind;  // 0: none (the node stays a group), 1: object, 2: spatial
};

__device__ void ClearBins(uint32_t* w, int tid, int stride) {
  for (int k = tid; k < kBinWords; k += stride) w[k] = k < kCountWords ? 0u : k < kCountWords + kLoWords ? ~0u : 0u;
}

__device__ Aabb BoxOf(Float4 lo, Float4 hi) { return Aabb{Vec3(lo.x, lo.y, lo.z), Vec3(hi.x, hi.y, hi.z)}; }
__device__ Float4 F4(Vec3 v) { return Float4{v.x, v.y, v.z, 0.0f}; }

__device__ Aabb BinBox(const uint32_t* lo, const uint32_t* hi) {
  if (lo[0] == ~0u) return Aabb{};
  return Aabb{Vec3(FloatFromOrdered(lo[0]), FloatFromOrdered(lo[1]), FloatFromOrdered(lo[2])),
              Vec3(FloatFromOrdered(hi[0]), FloatFromOrdered(hi[1]), FloatFromOrdered(hi[2]))};
}

__device__ void Triangle(const float* pos, int tri, Vec3* v) {
  const float* p = pos + 9 * static_cast<size_t>(tri);
  for (int k = 0; k < 3; ++k) v[k] = Vec3(p[3 * k], p[3 * k + 1], p[3 * k + 2]);
}

// The three axes' planes of a node's box, built once a block in shared memory.
struct NodePlanes {
  alignas(SpatialPlanes) unsigned char mem[3][sizeof(SpatialPlanes)];
  __device__ const SpatialPlanes& operator[](int a) const { return *reinterpret_cast<const SpatialPlanes*>(mem[a]); }
};
__device__ void MakePlanes(NodePlanes& p, const SplitNode& node) {
  if (threadIdx.x < 3) new (p.mem[threadIdx.x]) SpatialPlanes(BoxOf(node.lo, node.hi), static_cast<int>(threadIdx.x));
}

// Blocks (x) of the node active[blockIdx.y] bin its references in shared memory, then add them to its bins.
__global__ void BinRefs(const int* tri, const Float4* lo, const Float4* hi, const float* pos, const SplitNode* nodes,
                        const int* active, SplitBins* bins) {
  __shared__ SplitBins sb;
  __shared__ NodePlanes planes;
  const SplitNode node = nodes[active[blockIdx.y]];
  ClearBins(&sb.count[0][0], threadIdx.x, blockDim.x);
  MakePlanes(planes, node);
  __syncthreads();
  for (int i = node.begin + blockIdx.x * blockDim.x + threadIdx.x; i < node.begin + node.count;
       i += gridDim.x * blockDim.x) {
    const Aabb box = BoxOf(lo[i], hi[i]);
    const Vec3 c = box.Centre();
    for (int a = 0; a < 3; ++a) {
      const SpatialPlanes& p = planes[a];
      if (!p.Valid()) continue;
      const int ob = p.First(Axis(c, a));
      atomicAdd(&sb.count[a][ob], 1u);
      GrowOrderedBox(sb.lo[0][a][ob], sb.hi[0][a][ob], box.lo, box.hi);
      const int first = p.First(Axis(box.lo, a)), last = p.Last(Axis(box.hi, a), first);
      atomicAdd(&sb.enter[a][first], 1u);
      atomicAdd(&sb.exit[a][last], 1u);
      if (first == last) {
        GrowOrderedBox(sb.lo[1][a][first], sb.hi[1][a][first], box.lo, box.hi);
        continue;
      }
      Vec3 v[3];
      Triangle(pos, tri[i], v);
      ForEachBinPart(v, box, a, p, first, last, [&](int b, const Aabb& part) {
        GrowOrderedBox(sb.lo[1][a][b], sb.hi[1][a][b], part.lo, part.hi);
      });
    }
  }
  __syncthreads();
  uint32_t* out = &bins[blockIdx.y].count[0][0];
  const uint32_t* in = &sb.count[0][0];
  for (int k = threadIdx.x; k < kBinWords; k += blockDim.x) {
    const uint32_t w = in[k];
    if (k < kCountWords && w)
      atomicAdd(out + k, w);
    else if (k >= kCountWords && k < kCountWords + kLoWords && w != ~0u)
      atomicMin(out + k, w);
    else if (k >= kCountWords + kLoWords && w)
      atomicMax(out + k, w);
  }
}

// The cheapest split on any axis over bins whose boxes box(kind, a, b) and counts left(a, b) (references on the left
// of a plane: the sum over the bins below it) and right(a, b) (on the right: the sum over the bins from it up) are
// given; cost infinite where none has references on both sides.
template <typename BoxFn, typename LeftFn, typename RightFn>
__device__ Candidate Cheapest(const SplitNode& node, BoxFn box, LeftFn left, RightFn right) {
  Candidate best{kInf, -1, -1, 0, 0, {}, {}, {}, {}};
  for (int a = 0; a < 3; ++a) {
    if (!SpatialPlanes(BoxOf(node.lo, node.hi), a).Valid()) continue;
    Aabb rightBox[kNB];
    int rightCount[kNB];
    Aabb acc;
    int count = 0;
    for (int k = kNB - 1; k > 0; --k)
      acc.Grow(box(a, k)), count += right(a, k), rightBox[k] = acc, rightCount[k] = count;
    acc = Aabb{}, count = 0;
    for (int k = 1; k < kNB; ++k) {
      acc.Grow(box(a, k - 1)), count += left(a, k - 1);
      if (count == 0 || rightCount[k] == 0) continue;
      const double cost = acc.HalfArea() * count + rightBox[k].HalfArea() * rightCount[k];
      if (cost < best.cost)
        best =
            Candidate{cost, a, k, count, rightCount[k], F4(acc.lo), F4(acc.hi), F4(rightBox[k].lo), F4(rightBox[k].hi)};
    }
  }
  return best;
}

// A thread a node: the cheapest object and spatial splits; then thread 0, in node order, takes the spatial split
// where it is the cheaper and its new references fit the budget left (extra), else the object split.
__global__ void ChooseSplits(const SplitBins* bins, const SplitNode* nodes, const int* active, int numActive,
                             SplitChoice* choices, int* extra) {
  for (int j = threadIdx.x; j < numActive; j += blockDim.x) {
    const SplitBins& b = bins[j];
    const SplitNode node = nodes[active[j]];
    SplitChoice c;
    c.object = Cheapest(
        node, [&](int a, int k) { return BinBox(b.lo[0][a][k], b.hi[0][a][k]); },
        [&](int a, int k) { return static_cast<int>(b.count[a][k]); },
        [&](int a, int k) { return static_cast<int>(b.count[a][k]); });
    c.spatial = Cheapest(
        node, [&](int a, int k) { return BinBox(b.lo[1][a][k], b.hi[1][a][k]); },
        [&](int a, int k) { return static_cast<int>(b.enter[a][k]); },
        [&](int a, int k) { return static_cast<int>(b.exit[a][k]); });
    c.kind = 0;
    choices[j] = c;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int j = 0; j < numActive; ++j) {
    SplitChoice& c = choices[j];
    const int added = c.spatial.leftCount + c.spatial.rightCount - nodes[active[j]].count;
    if (c.spatial.axis >= 0 && c.spatial.cost < c.object.cost && added <= *extra) {
      c.kind = 2;
      *extra -= added;
    } else if (c.object.axis >= 0) {
      c.kind = 1;
    }
  }
}

// Which sides reference i of a node goes to under the node's choice: bit 1 left, bit 0 right (a node not split at
// this level keeps it: left).
__device__ int Sides(const SplitChoice* choices, const SplitNode& node, const NodePlanes& planes, Float4 lo,
                     Float4 hi) {
  if (node.choice < 0 || choices[node.choice].kind == 0) return 2;
  const SplitChoice& c = choices[node.choice];
  const Aabb box = BoxOf(lo, hi);
  if (c.kind == 1) {
    const SpatialPlanes& p = planes[c.object.axis];
    return p.First(Axis(box.Centre(), c.object.axis)) < c.object.bin ? 2 : 1;
  }
  const int a = c.spatial.axis;
  const SpatialPlanes& p = planes[a];
  const int first = p.First(Axis(box.lo, a)), last = p.Last(Axis(box.hi, a), first);
  return (first < c.spatial.bin ? 2 : 0) | (last >= c.spatial.bin ? 1 : 0);
}

// flags[i]: 2^32 where reference i goes left, + 1 where it goes right (scanned, the places on each side).
__global__ void SideFlags(const Float4* lo, const Float4* hi, const SplitNode* nodes, const SplitChoice* choices,
                          unsigned long long* flags) {
  __shared__ NodePlanes planes;
  const SplitNode node = nodes[blockIdx.y];
  MakePlanes(planes, node);
  __syncthreads();
  for (int i = node.begin + blockIdx.x * blockDim.x + threadIdx.x; i < node.begin + node.count;
       i += gridDim.x * blockDim.x) {
    const int s = Sides(choices, node, planes, lo[i], hi[i]);
    flags[i] = (s & 2 ? 1ull << 32 : 0ull) + (s & 1 ? 1ull : 0ull);
  }
}

// One thread: the next level's nodes from this level's (numNodes) and the scanned flags, and each node's places
// (dest: the left side's first, the right side's first). header: [0] the next level's nodes, [1] references, [2] 1
// where a side came out empty or its count differs from the bins' (a bug: the caller gives up the top), [3] the
// spatial splits.
__global__ void PlanChildren(const SplitNode* nodes, int numNodes, const SplitChoice* choices,
                             const unsigned long long* scan, SplitNode* next, int2* dest, int* header) {
  int at = 0, made = 0, bad = 0, spatial = 0;
  for (int k = 0; k < numNodes; ++k) {
    SplitNode node = nodes[k];
    const unsigned long long first = scan[node.begin], end = scan[node.begin + node.count];
    const int left = static_cast<int>((end >> 32) - (first >> 32)),
              right = static_cast<int>((end & 0xffffffffull) - (first & 0xffffffffull));
    const int kind = node.choice >= 0 ? choices[node.choice].kind : 0;
    if (kind == 0) {
      dest[k] = int2{at, at};
      node.done = node.done || node.choice >= 0;
      node.begin = at, node.choice = -1;
      next[made++] = node;
      at += node.count;
      continue;
    }
    const Candidate& c = kind == 1 ? choices[node.choice].object : choices[node.choice].spatial;
    spatial += kind == 2;
    bad |= left == 0 || right == 0 || left != c.leftCount || right != c.rightCount;
    dest[k] = int2{at, at + left};
    next[made++] = SplitNode{at, left, node.path << 1, node.depth + 1, -1, 0, c.leftLo, c.leftHi};
    next[made++] = SplitNode{at + left, right, node.path << 1 | 1u, node.depth + 1, -1, 0, c.rightLo, c.rightHi};
    at += left + right;
  }
  header[0] = made, header[1] = at, header[2] = bad, header[3] = spatial;
}

// Moves each reference to its places on the next level (dest, the scan), a straddling one clipped into its parts on
// either side of the plane (SplitReference; a side that clipping rounded away gets the box's side of the plane); none
// where PlanChildren found the counts wrong (header[2]).
__global__ void Scatter(const int* tri, const Float4* lo, const Float4* hi, const float* pos, const SplitNode* nodes,
                        const SplitChoice* choices, const unsigned long long* scan, const int2* dest, const int* header,
                        int* outTri, Float4* outLo, Float4* outHi) {
  if (header[2]) return;  // counts that disagree with the bins could place references past the arrays: nothing moves
  __shared__ NodePlanes planes;
  const SplitNode node = nodes[blockIdx.y];
  const int2 d = dest[blockIdx.y];
  MakePlanes(planes, node);
  __syncthreads();
  const unsigned long long base = scan[node.begin];
  for (int i = node.begin + blockIdx.x * blockDim.x + threadIdx.x; i < node.begin + node.count;
       i += gridDim.x * blockDim.x) {
    const unsigned long long s = scan[i] - base, f = scan[i + 1] - scan[i];
    const int l = d.x + static_cast<int>(s >> 32), r = d.y + static_cast<int>(s & 0xffffffffull);
    const bool goesLeft = (f >> 32) != 0, goesRight = (f & 0xffffffffull) != 0;
    if (!(goesLeft && goesRight)) {
      const int o = goesLeft ? l : r;
      outTri[o] = tri[i], outLo[o] = lo[i], outHi[o] = hi[i];
      continue;
    }
    const int a = choices[node.choice].spatial.axis;
    const float plane = planes[a].Plane(choices[node.choice].spatial.bin);
    const Aabb whole = BoxOf(lo[i], hi[i]);
    Vec3 v[3];
    Triangle(pos, tri[i], v);
    Aabb below, above;
    SplitReference(v, whole, a, plane, below, above);
    if (below.Empty()) below = whole, (a == 0 ? below.hi.x : a == 1 ? below.hi.y : below.hi.z) = plane;
    if (above.Empty()) above = whole, (a == 0 ? above.lo.x : a == 1 ? above.lo.y : above.lo.z) = plane;
    outTri[l] = tri[i], outLo[l] = F4(below.lo), outHi[l] = F4(below.hi);
    outTri[r] = tri[i], outLo[r] = F4(above.lo), outHi[r] = F4(above.hi);
  }
}

// Every triangle a reference with its box (from the positions: the SAH top reuses the triangles' boxes as scratch),
// and the box of them all in rootBox (ordered floats).
__global__ void FirstReferences(const float* pos, int n, int* tri, Float4* lo, Float4* hi, uint32_t* rootBox) {
  uint32_t mn[3] = {~0u, ~0u, ~0u}, mx[3] = {0u, 0u, 0u};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    Vec3 v[3];
    Triangle(pos, i, v);
    const Vec3 l = Min(v[0], Min(v[1], v[2])), h = Max(v[0], Max(v[1], v[2]));
    tri[i] = i, lo[i] = F4(l), hi[i] = F4(h);
    for (int a = 0; a < 3; ++a)
      mn[a] = min(mn[a], OrderedFromFloat(Axis(l, a))), mx[a] = max(mx[a], OrderedFromFloat(Axis(h, a)));
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t x = WarpMin(mn[a]), y = WarpMax(mx[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&rootBox[a], x), atomicMax(&rootBox[3 + a], y);
  }
}

__global__ void GroupKeys(const Float4* lo, const Float4* hi, const SplitNode* groups, int depthBits,
                          const uint32_t* bounds, bool cube, uint64_t* keys, int* ids) {
  const SplitNode g = groups[blockIdx.y];
  const uint64_t prefix = static_cast<uint64_t>(g.path) << (depthBits - g.depth) << (63 - depthBits);
  for (int i = g.begin + blockIdx.x * blockDim.x + threadIdx.x; i < g.begin + g.count; i += gridDim.x * blockDim.x) {
    keys[i] = prefix | MortonKey(lo[i], hi[i], bounds, cube) >> depthBits;
    ids[i] = i;
  }
}

__global__ void InitBins(SplitBins* bins) { ClearBins(&bins[blockIdx.x].count[0][0], threadIdx.x, blockDim.x); }

__global__ void InverseOrder(const int32_t* order, int n, int* inv) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) inv[order[p]] = p;
}

__global__ void MapSources(const int* inv, const int* refTri, const int32_t* refOrder, int refs, int* wideSrc) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w < refs) wideSrc[w] = inv[refTri[refOrder[wideSrc[w]]]];
}

dim3 NodeGrid(int numNodes) { return dim3(kNodeBlocks, static_cast<unsigned>(numNodes)); }

// The references of a level (two sets: one read, one written) and the levels' other device arrays.
struct Levels {
  DeviceBuffer<int> tri[2];
  DeviceBuffer<Float4> lo[2], hi[2];
  DeviceBuffer<SplitNode> nodes, next;
  DeviceBuffer<int> active, extra, header;
  DeviceBuffer<SplitBins> bins;
  DeviceBuffer<SplitChoice> choices;
  DeviceBuffer<unsigned long long> flags, scan;
  DeviceBuffer<int2> dest;
  DeviceBuffer<unsigned char> temp;
  size_t tempBytes = 0;
  int maxNodes = 0, maxActive = 0;

  Levels(int cap, int minRefs, cudaStream_t st) {
    for (int h = 0; h < 2; ++h) {
      tri[h].Allocate(static_cast<size_t>(cap), "the split top's references");
      lo[h].Allocate(static_cast<size_t>(cap), "the split top's references");
      hi[h].Allocate(static_cast<size_t>(cap), "the split top's references");
    }
    maxActive = std::min(cap / minRefs + 1, 1 << (kSplitTopMaxDepth - 1));
    maxNodes = 1 << kSplitTopMaxDepth;
    nodes.Allocate(static_cast<size_t>(maxNodes), "the split top's nodes");
    next.Allocate(static_cast<size_t>(maxNodes), "the split top's nodes");
    dest.Allocate(static_cast<size_t>(maxNodes), "the split top's nodes");
    active.Allocate(static_cast<size_t>(maxActive), "the split top's nodes");
    extra.Allocate(1), header.Allocate(4);
    bins.Allocate(static_cast<size_t>(maxActive), "the split top's bins");
    choices.Allocate(static_cast<size_t>(maxActive), "the split top's bins");
    flags.Allocate(static_cast<size_t>(cap) + 1, "the split top's scan");
    scan.Allocate(static_cast<size_t>(cap) + 1, "the split top's scan");
    TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, flags.Get(), scan.Get(), cap + 1, st));
    temp.Allocate(tempBytes, "the split top's scan");
  }
};

// The root: every triangle a reference (its box), and the box of them all (waits for it).
SplitNode FirstLevel(const BuildArrays& a, int n, Levels& L, cudaStream_t st) {
  DeviceBuffer<uint32_t> rootBox(6, "the split top's root box");
  const uint32_t init[6] = {~0u, ~0u, ~0u, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(rootBox.Get(), init, sizeof init, cudaMemcpyHostToDevice, st));
  FirstReferences<<<std::min(GridFor(static_cast<size_t>(n), kBlock), 1024u), kBlock, 0, st>>>(
      a.pos, n, L.tri[0].Get(), L.lo[0].Get(), L.hi[0].Get(), rootBox.Get());
  TRACER_CHECK_LAUNCH("FirstReferences");
  uint32_t box[6];
  TRACER_CUDA_CHECK(cudaMemcpyAsync(box, rootBox.Get(), sizeof box, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  auto f = [&](int k) { return FloatFromOrdered(box[k]); };
  return SplitNode{0, n, 0u, 0, -1, 0, Float4{f(0), f(1), f(2), 0.0f}, Float4{f(3), f(4), f(5), 0.0f}};
}

// One level: splits the nodes marked active (their choice set, numActive of them) of `nodes` (total references in
// set h) into set 1 - h. Returns false where the counts disagreed (PlanChildren's check); else nodes and total are
// the next level's, and spatial counts the spatial splits taken.
bool SplitLevel(const BuildArrays& a, Levels& L, int h, std::vector<SplitNode>& nodes, int numActive, int& total,
                int& spatial, cudaStream_t st) {
  const int numNodes = static_cast<int>(nodes.size());
  std::vector<int> active;
  for (int k = 0; k < numNodes; ++k)
    if (nodes[k].choice >= 0) active.push_back(k);
  L.nodes.Upload(nodes.data(), nodes.size(), st);
  L.active.Upload(active.data(), active.size(), st);
  InitBins<<<numActive, kBlock, 0, st>>>(L.bins.Get());
  BinRefs<<<NodeGrid(numActive), kBlock, 0, st>>>(L.tri[h].Get(), L.lo[h].Get(), L.hi[h].Get(), a.pos, L.nodes.Get(),
                                                  L.active.Get(), L.bins.Get());
  TRACER_CHECK_LAUNCH("BinRefs");
  ChooseSplits<<<1, 128, 0, st>>>(L.bins.Get(), L.nodes.Get(), L.active.Get(), numActive, L.choices.Get(),
                                  L.extra.Get());
  TRACER_CHECK_LAUNCH("ChooseSplits");
  TRACER_CUDA_CHECK(cudaMemsetAsync(L.flags.Get() + total, 0, sizeof(unsigned long long), st));
  SideFlags<<<NodeGrid(numNodes), kBlock, 0, st>>>(L.lo[h].Get(), L.hi[h].Get(), L.nodes.Get(), L.choices.Get(),
                                                   L.flags.Get());
  TRACER_CHECK_LAUNCH("SideFlags");
  size_t bytes = L.tempBytes;
  TRACER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(L.temp.Get(), bytes, L.flags.Get(), L.scan.Get(), total + 1, st));
  PlanChildren<<<1, 1, 0, st>>>(L.nodes.Get(), numNodes, L.choices.Get(), L.scan.Get(), L.next.Get(), L.dest.Get(),
                                L.header.Get());
  TRACER_CHECK_LAUNCH("PlanChildren");
  Scatter<<<NodeGrid(numNodes), kBlock, 0, st>>>(L.tri[h].Get(), L.lo[h].Get(), L.hi[h].Get(), a.pos, L.nodes.Get(),
                                                 L.choices.Get(), L.scan.Get(), L.dest.Get(), L.header.Get(),
                                                 L.tri[1 - h].Get(), L.lo[1 - h].Get(), L.hi[1 - h].Get());
  TRACER_CHECK_LAUNCH("Scatter");
  int header[4];
  const int maxNext = std::min(2 * numNodes, L.maxNodes);
  nodes.resize(static_cast<size_t>(maxNext));
  TRACER_CUDA_CHECK(cudaMemcpyAsync(header, L.header.Get(), sizeof header, cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(
      cudaMemcpyAsync(nodes.data(), L.next.Get(), nodes.size() * sizeof(SplitNode), cudaMemcpyDeviceToHost, st));
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));
  if (header[2]) return false;
  nodes.resize(static_cast<size_t>(header[0]));
  total = header[1];
  spatial += header[3];
  return true;
}

// Marks the nodes the next level splits (their choice: their place among them) and returns how many: those of at
// least minRefs references, less than kSplitTopMaxDepth deep, not yet found unsplittable, as many as the level's
// arrays hold (the rest stay groups).
int MarkActive(std::vector<SplitNode>& nodes, int minRefs, const Levels& L) {
  int numActive = 0;
  const int room = L.maxNodes - static_cast<int>(nodes.size());
  for (SplitNode& node : nodes) {
    const bool split = node.count >= minRefs && !node.done && node.depth < kSplitTopMaxDepth &&
                       numActive < std::min(L.maxActive, room);
    node.choice = split ? numActive++ : -1;
  }
  return numActive;
}

}  // namespace

SplitTop BuildSplitTop(const BuildArrays& a, int n, int minRefs, cudaStream_t st) {
  SplitTop top;
  if (n < 2 || n < minRefs || kSplitTopBudget * n > static_cast<double>(1 << 30)) return top;  // (the build's limit)
  const int cap = static_cast<int>(kSplitTopBudget * n);
  Levels L(cap, minRefs, st);
  const int extra = cap - n;
  L.extra.Upload(&extra, 1, st);
  std::vector<SplitNode> nodes{FirstLevel(a, n, L, st)};
  int total = n, h = 0, spatial = 0;
  for (int numActive; (numActive = MarkActive(nodes, minRefs, L)) > 0; h = 1 - h)
    if (!SplitLevel(a, L, h, nodes, numActive, total, spatial, st)) return top;  // a bug: no top (the report says)
  if (nodes.size() < 2) return top;
  int depth = 0;
  for (const SplitNode& g : nodes) depth = std::max(depth, g.depth);
  top.refs = total, top.groups = static_cast<int>(nodes.size()), top.depth = depth, top.spatialSplits = spatial;
  top.tri = std::move(L.tri[h]), top.lo = std::move(L.lo[h]), top.hi = std::move(L.hi[h]);
  top.keys.Allocate(static_cast<size_t>(total), "the split top's keys");
  top.ids.Allocate(static_cast<size_t>(total), "the split top's keys");
  L.nodes.Upload(nodes.data(), nodes.size(), st);
  GroupKeys<<<NodeGrid(top.groups), kBlock, 0, st>>>(top.lo.Get(), top.hi.Get(), L.nodes.Get(), depth, a.bounds,
                                                     knobs::MortonCube(), top.keys.Get(), top.ids.Get());
  TRACER_CHECK_LAUNCH("GroupKeys");
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));  // before L's arrays go
  return top;
}

void MapWideSources(const SplitTop& top, const int32_t* order, int n, const int32_t* refOrder, int* wideSrc,
                    cudaStream_t st) {
  DeviceBuffer<int> inv(static_cast<size_t>(n), "the split top's sources");
  InverseOrder<<<GridFor(static_cast<size_t>(n), kBlock), kBlock, 0, st>>>(order, n, inv.Get());
  TRACER_CHECK_LAUNCH("InverseOrder");
  MapSources<<<GridFor(static_cast<size_t>(top.refs), kBlock), kBlock, 0, st>>>(inv.Get(), top.tri.Get(), refOrder,
                                                                                top.refs, wideSrc);
  TRACER_CHECK_LAUNCH("MapSources");
  TRACER_CUDA_CHECK(cudaStreamSynchronize(st));  // before inv goes
}

uint64_t GroupMask(const SplitTop& top) {
  return top.depth > 0 ? ((uint64_t(1) << top.depth) - 1) << (63 - top.depth) : 0;
}

}  // namespace tracer::gpu_build
