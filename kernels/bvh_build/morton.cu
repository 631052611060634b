// @file morton.cu: the GPU BVH builder's leaves in Morton order: each triangle's box and the centroids' bounds, 63-bit
// Morton codes, their sort (CUB), and the leaves in sorted order.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "bvh_build/morton.h"
#include "bvh_build/morton_key.cuh"
#include "tracer/core/spatial_split.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// The block's sums of box and ideal half areas, added in a fixed order (a warp's by shuffles, the warps' by thread 0),
// so that the gate's sum is the same every run: waste[2 block] and waste[2 block + 1].
__device__ void BlockWasteSums(double box, double ideal, double* waste) {
  __shared__ double sums[kBlock / 32][2];
  for (int o = 16; o > 0; o /= 2)
    box += __shfl_down_sync(kFullMask, box, o), ideal += __shfl_down_sync(kFullMask, ideal, o);
  if ((threadIdx.x & 31) == 0) sums[threadIdx.x / 32][0] = box, sums[threadIdx.x / 32][1] = ideal;
  __syncthreads();
  if (threadIdx.x == 0) {
    double b = 0.0, i = 0.0;
    for (int w = 0; w < kBlock / 32; ++w) b += sums[w][0], i += sums[w][1];
    waste[2 * blockIdx.x] = b, waste[2 * blockIdx.x + 1] = i;
  }
}

// Each triangle's box (bounds: ordered min x, y, z, then max x, y, z); per block, the
// sums of the triangles' box half areas and ideal half areas (TriangleWaste) in waste[2 block], [2 block + 1] (kWaste;
// without, the kernel is what it was before the waste).
template <bool kWaste>
__global__ void TriangleBoxes(const float* pos, int n, Float4* triLo, Float4* triHi, uint32_t* bounds, double* waste) {
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
  double boxSum = 0.0, idealSum = 0.0;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    const float* p = pos + 9 * static_cast<size_t>(t);
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = Fminf(Fminf(p[a], p[3 + a]), p[6 + a]);
      hi[a] = Fmaxf(Fmaxf(p[a], p[3 + a]), p[6 + a]);
      const uint32_t c = OrderedFromFloat(lo[a] * 0.5f + hi[a] * 0.5f);
      cmin[a] = min(cmin[a], c), cmax[a] = max(cmax[a], c);
    }
    triLo[t] = Float4{lo[0], lo[1], lo[2], 0.0f};
    triHi[t] = Float4{hi[0], hi[1], hi[2], 0.0f};
    if (kWaste) {
      const Vec3 v[3] = {Vec3(p[0], p[1], p[2]), Vec3(p[3], p[4], p[5]), Vec3(p[6], p[7], p[8])};
      const TriangleWaste w = MeasureWaste(v);
      boxSum += w.box, idealSum += w.ideal;
    }
  }
  if (kWaste) BlockWasteSums(boxSum, idealSum, waste);
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
  }
}

// 63-bit Morton codes of the triangles' box centres (MortonKey, morton_key.cuh).
__global__ void MortonCodes(const Float4* triLo, const Float4* triHi, int n, const uint32_t* bounds, uint64_t* keys,
                            int* ids, bool cube) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  keys[t] = MortonKey(triLo[t], triHi[t], bounds, cube);
  ids[t] = t;
}

// Leaf i is the triangle at Morton position i; it starts as cluster i (cLo, cHi: PLOC passes' boxes, or null).
__global__ void InitLeaves(PlocTree t, const int* sortedTri, const Float4* triLo, const Float4* triHi, int* cNode,
                           Float4* cLo, Float4* cHi) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= t.n) return;
  const int tri = sortedTri[i];
  t.lo[i] = triLo[tri];
  t.hi[i] = triHi[tri];
  if (cLo) cLo[i] = triLo[tri], cHi[i] = triHi[tri];
  cNode[i] = i;
}

// The scene's waste from TriangleBoxes's blocks' sums, in a fixed order: waste[2 blocks], [2 blocks + 1]. One block
// of kBlock threads: thread k adds blocks k, k + kBlock, ..., then BlockWasteSums the threads' sums.
__global__ void __launch_bounds__(kBlock) SumWaste(double* waste, int blocks) {
  double b = 0.0, i = 0.0;
  for (int k = static_cast<int>(threadIdx.x); k < blocks; k += kBlock) b += waste[2 * k], i += waste[2 * k + 1];
  BlockWasteSums(b, i, waste + 2 * blocks);
}

unsigned BoxBlocks(size_t numTris) { return std::min(GridFor(numTris, kBlock), kMaxBoxBlocks); }

}  // namespace

void LaunchSumWaste(const BuildArrays& a, int n, cudaStream_t st) {
  SumWaste<<<1, kBlock, 0, st>>>(a.waste, static_cast<int>(BoxBlocks(static_cast<size_t>(n))));
  TRACER_CHECK_LAUNCH("SumWaste");
}

const double* WasteSums(const BuildArrays& a, int n) { return a.waste + 2 * BoxBlocks(static_cast<size_t>(n)); }

size_t MortonSortBytes(int n, cudaStream_t st) {
  size_t bytes = 0;
  TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                                    static_cast<uint64_t*>(nullptr), static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), n, 0, 63, st));
  return bytes;
}

void MortonOrder(const BuildArrays& a, int n, size_t tempBytes, bool waste, cudaStream_t st) {
  const size_t numTris = static_cast<size_t>(n);
  const uint32_t initBounds[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.bounds, initBounds, sizeof initBounds, cudaMemcpyHostToDevice, st));
  auto boxes = waste ? TriangleBoxes<true> : TriangleBoxes<false>;
  boxes<<<BoxBlocks(numTris), kBlock, 0, st>>>(a.pos, n, a.triLo, a.triHi, a.bounds, a.waste);
  TRACER_CHECK_LAUNCH("TriangleBoxes");
  MortonCodes<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(a.triLo, a.triHi, n, a.bounds, a.keys, a.ids,
                                                           knobs::MortonCube());
  TRACER_CHECK_LAUNCH("MortonCodes");
  SortKeys(a, a.keys, a.ids, n, tempBytes, st);
}

void SortKeys(const BuildArrays& a, const uint64_t* keys, const int* ids, int n, size_t tempBytes, cudaStream_t st) {
  size_t bytes = tempBytes;
  TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(a.temp, bytes, keys, a.sortedKeys, ids, a.sortedTri, n, 0, 63, st));
}

void LaunchInitLeaves(const BuildArrays& a, const PlocTree& tree, cudaStream_t st) {
  const size_t numTris = static_cast<size_t>(tree.n);
  InitLeaves<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(tree, a.sortedTri, a.triLo, a.triHi, a.cNode[0], a.cLo[0],
                                                          a.cHi[0]);
  TRACER_CHECK_LAUNCH("InitLeaves");
}

}  // namespace tracer::gpu_build
