// @file presplit.h: the GPU BVH builder's triangle pre-splitting (presplit.cu; what is done to each triangle and each
// piece is core/presplit.h's).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "bvh_build/build_arrays.h"

namespace tracer::gpu_build {

// What the gate reads back (a.gate): the sums over the triangles of their excesses and of their boxes' half areas
// (fixed point, PresplitFixed: the waste is their ratio) and of their weights (PresplitWeight; 0: nothing to split).
struct PresplitGate {
  unsigned long long excess, box, weight;
};

// The scratch bytes of the pre-split's scans, over numTris weights and refs references (CUB).
size_t PresplitScanBytes(int numTris, int refs, cudaStream_t st);
// Each triangle's priority as a weight (a.weights) and the gate's sums (a.gate, zeroed here), on the grid of the
// scene's box (a.sceneBounds, from LaunchTriangleBoxes).
void PresplitWeights(const BuildArrays& a, int numTris, cudaStream_t st);
// The references, numTris + extra of them, extra shared out over the triangles by the weights' prefix sum (in
// a.keys; a.ids holds where each triangle's references start): each triangle's pieces in triangle order, its first
// its primary (a.refTri, a.refLo, a.refHi), and the bounds of their centres (a.bounds, for the Morton codes). Uses
// tempBytes of a.temp.
void PresplitReferences(const BuildArrays& a, int numTris, uint32_t extra, size_t tempBytes, cudaStream_t st);

}  // namespace tracer::gpu_build
