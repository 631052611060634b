// @file build_arrays.h: the GPU BVH build's arrays in device memory besides the tree's (BuildArrays), which the driver
// (src/cuda/bvh_build_gpu.cu) carves from one allocation and hands to every stage, and the device's size.
#pragma once
#include <algorithm>
#include <cstdint>

#include "bvh_build/sah_top.cuh"
#include "tracer/cuda/cuda_check.h"

namespace tracer::gpu_build {

// The build's arrays besides the tree's (carved by the driver's Carve). Those of the other clustering are empty.
struct BuildArrays {
  float* pos;
  Float4 *triLo, *triHi;
  uint32_t* bounds;
  double* waste;  // TriangleBoxes's blocks' sums, then the scene's (morton.h)
  uint64_t *keys, *sortedKeys;
  int *ids, *sortedTri;
  unsigned char* temp;
  int* cNode[2];  // H-PLOC uses the first only
  int *bound, *counter;
  unsigned long long *flags, *scanned;  // PLOC passes
  Float4 *cLo[2], *cHi[2];
  int* nn;
  PassState* state;
  int* passes;
  int *totals, *status, *counters;
  // The SAH top (empty without it). Its list and buffers, parents and arrivals live in arrays the clustering is done
  // with (PrepareTop).
  TopState* topState;
  uint32_t* topBounds;
  TopQueues topQueues;
  TopWide topWide;
  BvhNode* binOut;
  WideNode* wideOut;
  int* wideTriSrc;
  int32_t* order;
};

// Multiprocessors of the current device.
inline int Multiprocessors() {
  int device = 0, sms = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::max(sms, 1);
}

}  // namespace tracer::gpu_build
