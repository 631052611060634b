// @file shadow.cu: any-hit traversal of the shadow rays; an unoccluded one adds its light sample to the film.
#include "kernels/kernel_common.cuh"

namespace tracer {

template <class L, Compaction C, bool kLdg>
__global__ void __launch_bounds__(kBlock) ShadowKernel(WaveView<L> w, SceneView s, RenderParams rp, FilmView film) {
  const int n = C != Compaction::kNone ? static_cast<int>(w.counters->shadowCount) : w.pool;
  ForEachItem(n, [&](int j) {
  const Shadow sh = L::LoadShadow(w.shadows, j);
  if (C == Compaction::kNone) {
    if (sh.ray.tmax < 0.0f) return;
    Shadow none{};
    none.ray.tmax = -1.0f;
    L::StoreShadow(w.shadows, j, none);  // consumed: the slot may not shade next bounce
  }
  if (ShadowItemVisible<kLdg>(s, sh)) FilmAdd(film, rp, static_cast<uint32_t>(sh.ray.index), sh.depth, sh.contribution);
  });
}

// One thread, last in each bounce: statistics, then empty the consumed queues for the next bounce.
template <class L>
__global__ void FinishKernel(WaveView<L> w) {
  WaveCounters* c = w.counters;
  if (w.livePerBounce) w.livePerBounce[w.bounce] += c->rayCount[w.cur];
  c->extensionRays += c->rayCount[w.cur];
  c->shadowRays += c->shadowCount;
  c->rayCount[w.cur] = 0;
  for (int k = 0; k <= kNumMaterialClasses; ++k) c->classCount[k] = 0;
  c->shadowCount = 0;
}

template <class L>
void LaunchShadow(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f,
                  const LaunchSettings& ls) {
  DispatchCompaction(ls.compaction, [&](auto c) {
    DispatchBool(ls.ldg, [&](auto ldg) {
      ShadowKernel<L, decltype(c)::value, decltype(ldg)::value><<<Blocks(ls, w.pool), kBlock, 0, ls.stream>>>(
          w, s, rp, f);
    });
  });
  TRACER_CHECK_LAUNCH("shadow");
}

template <class L>
void LaunchFinish(const WaveView<L>& w, const LaunchSettings& ls) {
  FinishKernel<L><<<1, 1, 0, ls.stream>>>(w);
  TRACER_CHECK_LAUNCH("finish");
}

#define TRACER_INSTANTIATE(L)                                                                                 \
  template void LaunchShadow<L>(const WaveView<L>&, const SceneView&, const RenderParams&, const FilmView&, \
                                const LaunchSettings&);                                                     \
  template void LaunchFinish<L>(const WaveView<L>&, const LaunchSettings&);
TRACER_FOR_EACH_LAYOUT(TRACER_INSTANTIATE)

}  // namespace tracer
