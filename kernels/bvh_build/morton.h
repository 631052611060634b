// @file morton.h: the GPU BVH builder's leaves in Morton order (morton.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// The scratch bytes of MortonOrder's sort of n keys (CUB).
size_t MortonSortBytes(int n, cudaStream_t st);
// Each triangle's box (a.triLo, a.triHi) and the centroids' bounds, their Morton codes (TRACER_MORTON_CUBE: cubic
// cells), sorted (CUB, tempBytes of a.temp): a.sortedKeys, and the triangles in that order, a.sortedTri.
// waste: also the sums of the triangles' waste (LaunchSumWaste).
void MortonOrder(const BuildArrays& a, int n, size_t tempBytes, bool waste, cudaStream_t st);
// Sorts n 63-bit keys with their ids (CUB, tempBytes of a.temp) into a.sortedKeys and a.sortedTri.
void SortKeys(const BuildArrays& a, const uint64_t* keys, const int* ids, int n, size_t tempBytes, cudaStream_t st);
// TriangleBoxes's blocks (its grid), each leaving two sums in a.waste, which holds 2 kMaxBoxBlocks + 2 doubles.
constexpr unsigned kMaxBoxBlocks = 4096;
// Sums the blocks' box and ideal half areas in a fixed order into WasteSums(a, n)[0], [1] (TriangleWaste, the
// spatial-split top's gate).
void LaunchSumWaste(const BuildArrays& a, int n, cudaStream_t st);
const double* WasteSums(const BuildArrays& a, int n);
// Leaf i is the triangle at Morton position i and starts as cluster i (a.cNode[0]; PLOC's passes: a.cLo[0], a.cHi[0]).
void LaunchInitLeaves(const BuildArrays& a, const PlocTree& tree, cudaStream_t st);

}  // namespace tracer::gpu_build
