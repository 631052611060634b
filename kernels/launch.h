// @file launch.h: host launchers of the wavefront kernels, one per stage, each defined beside its kernel
// and instantiated for both memory layouts. The renderer calls only these.
#pragma once
#include <cuda_runtime.h>

#include "tracer/render_host.h"
#include "tracer/wavefront.h"

namespace tracer {

constexpr int kShadeAllClasses = -1;
constexpr unsigned kStageBlock = 128;  // threads per block of the stage kernels  // the single shade kernel that switches on the material

struct LaunchSettings {
  Compaction compaction;
  bool ldg;               // read-only path for BVH and scene loads
  bool singleShadeQueue;  // intersect pushes every hit to queue 0 for the single shade kernel
  cudaStream_t stream;
  unsigned maxBlocks;     // resident blocks of kBlock threads on the whole GPU: the grid of the stage kernels
};

template <class L> void LaunchInitPool(const WaveView<L>& w, const LaunchSettings& ls);
template <class L> void LaunchGenerate(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const LaunchSettings& ls);
template <class L> void LaunchAdvance(const WaveView<L>& w, const LaunchSettings& ls);
template <class L> void LaunchIntersect(const WaveView<L>& w, const SceneView& s, const LaunchSettings& ls);
template <class L> void LaunchMiss(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f, const LaunchSettings& ls);
template <class L> void LaunchShade(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f, int cls, const LaunchSettings& ls);
template <class L> void LaunchShadow(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f, const LaunchSettings& ls);
template <class L> void LaunchFinish(const WaveView<L>& w, const LaunchSettings& ls);

// Applies X to both layouts, for explicit instantiation of the launchers.
#define TRACER_FOR_EACH_LAYOUT(X) X(AlignedLayout) X(NaiveLayout)

}  // namespace tracer
