// @file morton.cu: the GPU BVH builder's leaves in Morton order: each triangle's box and the centroids' bounds, 63-bit
// Morton codes of the references (the triangles, or their pre-split pieces), their sort (CUB), and the leaves in sorted
// order.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "bvh_build/morton.h"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {
namespace {

// Each triangle's box, and the box of the centroids (bounds: ordered min x, y, z, then max x, y, z); with scene (not
// null), the box of the triangles too (pre-splitting's grid), in the same order.
__global__ void TriangleBoxes(const float* pos, int n, Float4* triLo, Float4* triHi, uint32_t* bounds,
                              uint32_t* scene) {
  uint32_t cmin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, cmax[3] = {0u, 0u, 0u};
  uint32_t smin[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, smax[3] = {0u, 0u, 0u};
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    const float* p = pos + 9 * static_cast<size_t>(t);
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = Fminf(Fminf(p[a], p[3 + a]), p[6 + a]);
      hi[a] = Fmaxf(Fmaxf(p[a], p[3 + a]), p[6 + a]);
      const uint32_t c = OrderedFromFloat(lo[a] * 0.5f + hi[a] * 0.5f);
      cmin[a] = min(cmin[a], c), cmax[a] = max(cmax[a], c);
      smin[a] = min(smin[a], OrderedFromFloat(lo[a])), smax[a] = max(smax[a], OrderedFromFloat(hi[a]));
    }
    triLo[t] = Float4{lo[0], lo[1], lo[2], 0.0f};
    triHi[t] = Float4{hi[0], hi[1], hi[2], 0.0f};
  }
  for (int a = 0; a < 3; ++a) {
    const uint32_t mn = WarpMin(cmin[a]), mx = WarpMax(cmax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&bounds[a], mn), atomicMax(&bounds[3 + a], mx);
    if (!scene) continue;
    const uint32_t smn = WarpMin(smin[a]), smx = WarpMax(smax[a]);
    if ((threadIdx.x & 31) == 0) atomicMin(&scene[a], smn), atomicMax(&scene[3 + a], smx);
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

// 63-bit Morton codes of the references' box centres, 21 bits an axis over the scene's bounds: each axis's extent in
// 2^21 cells (cells stretched to the bounds' shape), or with `cube` (TRACER_MORTON_CUBE, for measuring) the longest
// extent on every axis (cubic cells). Cubic cells traced some scenes faster and others slower, and built a few percent
// slower: mixed, so the default stays (docs/PERFORMANCE.md).
__global__ void MortonCodes(const Float4* refLo, const Float4* refHi, int n, const uint32_t* bounds, uint64_t* keys,
                            int* ids, bool cube) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const float c[3] = {refLo[t].x * 0.5f + refHi[t].x * 0.5f, refLo[t].y * 0.5f + refHi[t].y * 0.5f,
                      refLo[t].z * 0.5f + refHi[t].z * 0.5f};
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

// Leaf i is the reference at Morton position i; it starts as cluster i (cLo, cHi: PLOC passes' boxes, or null).
// Pre-split (refTri not null): its binary view too, the whole triangle's box where it is its triangle's primary
// reference (the first of its pieces), nothing where it is not.
__global__ void InitLeaves(PlocTree t, BinaryView v, const int* sortedRef, const Float4* refLo, const Float4* refHi,
                           const int* refTri, const Float4* triLo, const Float4* triHi, int* cNode, Float4* cLo,
                           Float4* cHi) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= t.n) return;
  const int ref = sortedRef[i];
  t.lo[i] = refLo[ref];
  t.hi[i] = refHi[ref];
  if (cLo) cLo[i] = refLo[ref], cHi[i] = refHi[ref];
  cNode[i] = i;
  if (!refTri) return;
  const int tri = refTri[ref];
  const bool primary = ref == 0 || refTri[ref - 1] != tri;
  v.tris[i] = primary ? 1 : 0;
  v.rep[i] = primary ? i : -1;
  v.lo[i] = primary ? triLo[tri] : Float4{kInf, kInf, kInf, 0.0f};
  v.hi[i] = primary ? triHi[tri] : Float4{-kInf, -kInf, -kInf, 0.0f};
}

}  // namespace

size_t MortonSortBytes(int n, cudaStream_t st) {
  size_t bytes = 0;
  TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                                    static_cast<uint64_t*>(nullptr), static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), n, 0, 63, st));
  return bytes;
}

void LaunchTriangleBoxes(const BuildArrays& a, int numTris, cudaStream_t st) {
  const uint32_t initBounds[12] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u,
                                   0xffffffffu, 0xffffffffu, 0xffffffffu, 0u, 0u, 0u};
  TRACER_CUDA_CHECK(cudaMemcpyAsync(a.bounds, initBounds, 6 * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
  if (a.sceneBounds)
    TRACER_CUDA_CHECK(cudaMemcpyAsync(a.sceneBounds, initBounds + 6, 6 * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
  const size_t n = static_cast<size_t>(numTris);
  TriangleBoxes<<<std::min(GridFor(n, kBlock), 4096u), kBlock, 0, st>>>(a.pos, numTris, a.triLo, a.triHi, a.bounds,
                                                                        a.sceneBounds);
  TRACER_CHECK_LAUNCH("TriangleBoxes");
}

void MortonOrder(const BuildArrays& a, int n, size_t tempBytes, cudaStream_t st) {
  const size_t refs = static_cast<size_t>(n);
  MortonCodes<<<GridFor(refs, kBlock), kBlock, 0, st>>>(a.refLo, a.refHi, n, a.bounds, a.keys, a.ids,
                                                        knobs::MortonCube());
  TRACER_CHECK_LAUNCH("MortonCodes");
  size_t bytes = tempBytes;
  TRACER_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(a.temp, bytes, a.keys, a.sortedKeys, a.ids, a.sortedTri, n, 0, 63, st));
}

void LaunchInitLeaves(const BuildArrays& a, const PlocTree& tree, cudaStream_t st) {
  const size_t refs = static_cast<size_t>(tree.n);
  InitLeaves<<<GridFor(refs, kBlock), kBlock, 0, st>>>(tree, a.binary, a.sortedTri, a.refLo, a.refHi,
                                                       a.binary.tris ? a.refTri : nullptr, a.triLo, a.triHi, a.cNode[0],
                                                       a.cLo[0], a.cHi[0]);
  TRACER_CHECK_LAUNCH("InitLeaves");
}

}  // namespace tracer::gpu_build
