// @file presplit.cu: the GPU BVH builder's triangle pre-splitting before the Morton sort (Karras and Aila 2013): the
// priorities as integer weights with the gate's sums (one pass over the triangles), and where the gate says so, the
// references: the budget shared out by a prefix sum of the weights (CUB), each triangle's first reference marked and
// a max-scan (CUB) giving every reference its triangle, then one thread a reference making its piece
// (core/presplit.h). A triangle of many pieces is thus spread over many threads, however uneven the priorities.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>

#include "bvh_build/presplit.h"
#include "tracer/core/presplit.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// The split grid: the scene's box, from its ordered bounds.
__device__ PresplitGrid GridOf(const uint32_t* b) {
  return PresplitGrid::Make(Vec3(FloatFromOrdered(b[0]), FloatFromOrdered(b[1]), FloatFromOrdered(b[2])),
                            Vec3(FloatFromOrdered(b[3]), FloatFromOrdered(b[4]), FloatFromOrdered(b[5])));
}

__device__ void LoadTriangle(const float* pos, int t, Vec3* v) {
  const float* p = pos + 9 * static_cast<size_t>(t);
  for (int k = 0; k < 3; ++k) v[k] = Vec3(p[3 * k], p[3 * k + 1], p[3 * k + 2]);
}

__device__ unsigned long long WarpSum(unsigned long long v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Each triangle's weight, and the gate's sums: one atomic a warp for each (integers: the same sums in any order).
__global__ void Weights(const float* pos, int n, const uint32_t* scene, int scale, uint64_t* weights,
                        unsigned long long* gate) {
  const PresplitGrid g = GridOf(scene);
  unsigned long long excessSum = 0, boxSum = 0, weightSum = 0;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    Vec3 v[3];
    LoadTriangle(pos, t, v);
    PresplitPlane plane;
    const double excess = PresplitExcess(v, g, &plane);
    const uint64_t w = PresplitWeight(PresplitPriorityOf(excess, plane), scale);
    weights[t] = w;
    excessSum += PresplitFixed(excess);
    boxSum += PresplitFixed(PresplitHalfArea(Min(v[0], Min(v[1], v[2])), Max(v[0], Max(v[1], v[2]))) * g.invHalfArea);
    weightSum += w;
  }
  excessSum = WarpSum(excessSum), boxSum = WarpSum(boxSum), weightSum = WarpSum(weightSum);
  if ((threadIdx.x & 31) == 0)
    atomicAdd(&gate[0], excessSum), atomicAdd(&gate[1], boxSum), atomicAdd(&gate[2], weightSum);
}

// Where triangle t's references start (t plus the extras of the triangles before it) and how many it has.
__device__ void Allotment(const uint64_t* prefix, int t, uint64_t total, uint32_t extra, int& first, int& count) {
  const uint32_t before = t > 0 ? PresplitExtrasUpTo(prefix[t - 1], total, extra) : 0u;
  const uint32_t upto = PresplitExtrasUpTo(prefix[t], total, extra);
  first = t + static_cast<int>(before);
  count = 1 + static_cast<int>(upto - before);
}

// Marks where each triangle's references start with its number (heads: zeros); a max-scan then fills them in.
__global__ void Heads(const uint64_t* prefix, int n, uint32_t extra, int* heads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int first, count;
  Allotment(prefix, t, prefix[n - 1], extra, first, count);
  heads[first] = t;
}

// Reference r: piece r - first of its triangle's count (the triangle's own box when it is not split), and the bounds
// of the references' centres (one atomic a warp).
__global__ void Pieces(const float* pos, const uint64_t* prefix, int numTris, uint32_t extra, const int* refTri,
                       const Float4* triLo, const Float4* triHi, const uint32_t* scene, int refs, Float4* refLo,
                       Float4* refHi, uint32_t* bounds) {
  const PresplitGrid g = GridOf(scene);
  const uint64_t total = prefix[numTris - 1];
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < refs; r += gridDim.x * blockDim.x) {
    const int t = refTri[r];
    int first, count;
    Allotment(prefix, t, total, extra, first, count);
    Float4 lo = triLo[t], hi = triHi[t];
    if (count > 1) {
      Vec3 v[3];
      LoadTriangle(pos, t, v);
      const PresplitPieceBox p = PresplitPiece(v, g, count, r - first);
      lo = Float4{p.lo.x, p.lo.y, p.lo.z, 0.0f}, hi = Float4{p.hi.x, p.hi.y, p.hi.z, 0.0f};
    }
    refLo[r] = lo, refHi[r] = hi;
    const float c[3] = {lo.x * 0.5f + hi.x * 0.5f, lo.y * 0.5f + hi.y * 0.5f, lo.z * 0.5f + hi.z * 0.5f};
    for (int a = 0; a < 3; ++a)
      cmin[a] = min(cmin[a], OrderedFromFloat(c[a])), cmax[a] = max(cmax[a], OrderedFromFloat(c[a]));
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
  }
}

}  // namespace

size_t PresplitScanBytes(int numTris, int refs, cudaStream_t st) {
  size_t sum = 0, max = 0;
  TRACER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, sum, static_cast<const uint64_t*>(nullptr),
                                                  static_cast<uint64_t*>(nullptr), numTris, st));
  TRACER_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, max, static_cast<const int*>(nullptr),
                                                   static_cast<int*>(nullptr), cuda::maximum<>{}, refs, st));
  return std::max(sum, max);
}

void PresplitWeights(const BuildArrays& a, int numTris, cudaStream_t st) {
  TRACER_CUDA_CHECK(cudaMemsetAsync(a.gate, 0, sizeof(PresplitGate), st));
  const size_t n = static_cast<size_t>(numTris);
  Weights<<<std::min(GridFor(n, kBlock), 4096u), kBlock, 0, st>>>(
      a.pos, numTris, a.sceneBounds, PresplitWeightScale(static_cast<uint32_t>(numTris)), a.weights, a.gate);
  TRACER_CHECK_LAUNCH("PresplitWeights");
}

void PresplitReferences(const BuildArrays& a, int numTris, uint32_t extra, size_t tempBytes, cudaStream_t st) {
  const size_t tris = static_cast<size_t>(numTris), refs = tris + extra;
  const uint64_t* weights = a.weights;
  uint64_t* prefix = a.keys;  // free until the Morton codes
  int* heads = a.ids;
  size_t bytes = tempBytes;
  TRACER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(a.temp, bytes, weights, prefix, numTris, st));
  TRACER_CUDA_CHECK(cudaMemsetAsync(heads, 0, refs * sizeof(int), st));
  Heads<<<GridFor(tris, kBlock), kBlock, 0, st>>>(prefix, numTris, extra, heads);
  TRACER_CHECK_LAUNCH("PresplitHeads");
  bytes = tempBytes;
  TRACER_CUDA_CHECK(
      cub::DeviceScan::InclusiveScan(a.temp, bytes, heads, a.refTri, cuda::maximum<>{}, static_cast<int>(refs), st));
  const uint32_t initBounds[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.bounds, initBounds, sizeof initBounds, cudaMemcpyHostToDevice, st));
  Pieces<<<std::min(GridFor(refs, kBlock), 4096u), kBlock, 0, st>>>(a.pos, prefix, numTris, extra, a.refTri, a.triLo,
                                                                    a.triHi, a.sceneBounds, static_cast<int>(refs),
                                                                    a.refLo, a.refHi, a.bounds);
  TRACER_CHECK_LAUNCH("PresplitPieces");
}

}  // namespace tracer::gpu_build
