// @file bvh_build_gpu.h: BVH construction on the GPU (the driver src/cuda/bvh_build_gpu.cu, the stages'
// kernels in kernels/bvh_build/), the default builder of the GPU backend (--bvh-builder gpu).
//
// Triangles sorted by the Morton code of their centroid (CUB radix sort) start as clusters, and clusters merge with
// their nearest neighbours (the smallest box around both) among the kPlocRadius on either side in that order: PLOC,
// parallel locally-ordered clustering (Meister and Bittner 2018, "Parallel Locally-Ordered Clustering for Bounding
// Volume Hierarchy Construction", IEEE TVCG 24(3)). The default, BuildBvhsOnGpu, clusters hierarchically in one
// launch (H-PLOC, Benthin et al. 2024): warps climb the Morton order's implicit LBVH bottom-up and run PLOC within a
// warp on each subtree's clusters. Its naive twin, BuildBvhsOnGpuInPasses (--bvh-builder ploc), runs PLOC's global
// passes, each a few launches (nearest neighbours, flags, a CUB scan, merge), until one cluster is left. Each new node
// makes, as it is merged, the bottom-up choices of both layouts from its children's: the binary BVH's SAH
// leaf-or-split and the wide BVH's dynamic programming (core/wide_collapse.h, the host collapse's own arithmetic).
// Two top-down sweeps, together in one launch, then place the binary BVH's nodes and triangles (leaves of at most
// options.maxLeafSize triangles, depth-first order) and the compressed wide BVH's, and one parallel pass encodes the
// wide nodes: byte for byte what CollapseToWideBvh makes of the same binary tree (without the split top below).
//
// Where the triangles' waste passes its gate (long thin triangles), the wide BVH comes from the spatial-split top
// instead (options.splitTop, on by default, kept where its SAH cost is the lower; kernels/bvh_build/split_top.h):
// references of split triangles, so a triangle may stand in several leaves. options.spatialSplits off
// (--no-spatial-splits) or TRACER_SPLIT_TOP=0 turns it off. From 2^20 triangles
// the clustering stops at subtrees of 32 triangles and the tree above them is built by binned SAH on the GPU (the SAH
// top): nearer the host's trees on a heightfield (and on the sports car), worse on the conference room, and about
// twice as slow to build (docs/PERFORMANCE.md). TRACER_SAH_TOP=1 or 0 (a measuring knob) turns it on or off at any
// size.
#pragma once
#include <cstddef>
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer {

// Clusters on either side of a cluster, in Morton order, among which PLOC looks for its nearest neighbour.
constexpr int kPlocRadius = 16;

// A BvhBuilderFn: builds on the current CUDA device. Falls back to the host builders (and says why in the report's
// note) for fewer than two triangles and when the tree would be deeper than the traversals' stacks allow.
BvhBuildReport BuildBvhsOnGpu(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                              WideBvh& wide);
// The same with PLOC's global passes (the naive twin; report.iterations: the passes).
BvhBuildReport BuildBvhsOnGpuInPasses(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                                      WideBvh& wide);

// --bvh-builder auto on the GPU backend. Below kAutoCompareBelow triangles it builds both the GPU's tree and the host's
// (binned SAH with spatial splits: tens of milliseconds there) and keeps the wide BVH with the lower SAH cost
// (WideSahCost); the report says which, both costs and the other build's time (report.method). Should the host build
// fail, the GPU's tree is kept and report.note says why. On small scenes either tree can be the cheaper and the faster
// to render (docs/PERFORMANCE.md). From that size on, or without the wide BVH, it is BuildBvhsOnGpu.
constexpr size_t kAutoCompareBelow = size_t(1) << 14;
BvhBuildReport BuildBvhsAuto(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                             WideBvh& wide);

}  // namespace tracer
