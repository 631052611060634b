// @file morton.cu: the GPU BVH builder's leaves in Morton order: each triangle's box and the centroids' bounds, 63-bit
// Morton codes, their sort (CUB), and the leaves in sorted order.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "bvh_build/morton.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// Each triangle's box, and the box of the centroids (bounds: ordered min x, y, z, then max x, y, z).
__global__ void TriangleBoxes(const float* pos, int n, Float4* triLo, Float4* triHi, uint32_t* bounds) {
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
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
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
  }
}

// 21 bits spread to every third bit of 63.
__device__ uint64_t Spread3(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | x << 32) & 0x001f00000000ffffull;
  x = (x | x << 16) & 0x001f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

// 63-bit Morton codes of the triangles' box centres, 21 bits an axis over the scene's bounds: each axis's extent in
// 2^21 cells (cells stretched to the bounds' shape), or with `cube` (TRACER_MORTON_CUBE, for measuring) the longest
// extent on every axis (cubic cells). Cubic cells traced some scenes faster and others slower, and built a few percent
// slower: mixed, so the default stays (docs/PERFORMANCE.md).
__global__ void MortonCodes(const Float4* triLo, const Float4* triHi, int n, const uint32_t* bounds, uint64_t* keys,
                            int* ids, bool cube) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const float c[3] = {triLo[t].x * 0.5f + triHi[t].x * 0.5f, triLo[t].y * 0.5f + triHi[t].y * 0.5f,
                      triLo[t].z * 0.5f + triHi[t].z * 0.5f};
  float longest = 0.0f;
  if (cube)
    for (int a = 0; a < 3; ++a) longest = Fmaxf(longest, FloatFromOrdered(bounds[3 + a]) - FloatFromOrdered(bounds[a]));
  uint64_t key = 0;
  for (int a = 0; a < 3; ++a) {
    const float lo = FloatFromOrdered(bounds[a]), extent = cube ? longest : FloatFromOrdered(bounds[3 + a]) - lo;
    const float u = extent > 0.0f ? (c[a] - lo) / extent : 0.0f;
    const uint32_t q = static_cast<uint32_t>(Fminf(Fmaxf(u * 2097152.0f, 0.0f), 2097151.0f));
    key |= Spread3(q) << a;
  }
  keys[t] = key;
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

}  // namespace

size_t MortonSortBytes(int n, cudaStream_t st) {
  size_t bytes = 0;
  TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                                    static_cast<uint64_t*>(nullptr), static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), n, 0, 63, st));
  return bytes;
}

void MortonOrder(const BuildArrays& a, int n, size_t tempBytes, cudaStream_t st) {
  const size_t numTris = static_cast<size_t>(n);
  const uint32_t initBounds[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.bounds, initBounds, sizeof initBounds, cudaMemcpyHostToDevice, st));
  TriangleBoxes<<<std::min(GridFor(numTris, kBlock), 4096u), kBlock, 0, st>>>(a.pos, n, a.triLo, a.triHi, a.bounds);
  TRACER_CHECK_LAUNCH("TriangleBoxes");
  MortonCodes<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(a.triLo, a.triHi, n, a.bounds, a.keys, a.ids,
                                                           knobs::MortonCube());
  TRACER_CHECK_LAUNCH("MortonCodes");
  size_t bytes = tempBytes;
  TRACER_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(a.temp, bytes, a.keys, a.sortedKeys, a.ids, a.sortedTri, n, 0, 63, st));
}

void LaunchInitLeaves(const BuildArrays& a, const PlocTree& tree, cudaStream_t st) {
  const size_t numTris = static_cast<size_t>(tree.n);
  InitLeaves<<<GridFor(numTris, kBlock), kBlock, 0, st>>>(tree, a.sortedTri, a.triLo, a.triHi, a.cNode[0], a.cLo[0],
                                                          a.cHi[0]);
  TRACER_CHECK_LAUNCH("InitLeaves");
}

}  // namespace tracer::gpu_build
