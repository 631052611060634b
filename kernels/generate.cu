// @file generate.cu: camera rays for new paths, filling the free slots of the pool (path regeneration).
#include "kernels/kernel_common.cuh"

namespace tracer {

// Marks every slot dead (no-compaction mode) so that the first generate fills the pool.
template <class L>
__global__ void InitPoolKernel(WaveView<L> w) {
  int i = ThreadIndex();
  if (i >= w.pool) return;
  Ray dead{};
  dead.tmax = -1.0f;
  L::StoreRay(w.rays[0], i, dead);
  Shadow none{};
  none.ray.tmax = -1.0f;
  L::StoreShadow(w.shadows, i, none);
}

// With compaction, live paths occupy [0, live) and new ones take [live, pool): work item
// nextWork + (i - live) goes to slot i. Without, a slot is free when its ray is dead.
template <class L, Compaction C>
__global__ void GenerateKernel(WaveView<L> w, SceneView s, RenderParams rp) {
  WaveCounters* c = w.counters;
  ForEachItem(w.pool, [&](int i) {
  unsigned long long work;
  if (C != Compaction::kNone) {
    const uint32_t live = c->rayCount[w.cur];
    if (static_cast<uint32_t>(i) < live) return;
    work = c->nextWork + static_cast<unsigned long long>(i - static_cast<int>(live));
    if (work >= c->totalWork) return;
  } else {
    if (L::LoadRay(w.rays[0], i).tmax >= 0.0f) return;
    if (c->nextWork >= c->totalWork) return;
    work = atomicAdd(&c->nextWork, 1ull);
    if (work >= c->totalWork) return;
    atomicAdd(&c->rayCount[w.cur], 1u);
  }
  Ray r;
  PathState ps;
  GenerateItem(s, rp, work, r, ps);
  r.index = i;
  const int b = CurBuffer<C>(w.cur);
  L::StoreRay(w.rays[b], i, r);
  L::StorePath(w.paths[b], i, ps);
  });
}

// One thread: after a compacting generate, account for the slots it filled.
template <class L>
__global__ void AdvanceKernel(WaveView<L> w) {
  WaveCounters* c = w.counters;
  const unsigned long long live = c->rayCount[w.cur];
  unsigned long long fresh = static_cast<unsigned long long>(w.pool) - live;
  const unsigned long long left = c->totalWork - c->nextWork;
  if (left < fresh) fresh = left;
  c->rayCount[w.cur] = static_cast<uint32_t>(live + fresh);
  c->nextWork += fresh;
}

template <class L>
void LaunchInitPool(const WaveView<L>& w, const LaunchSettings& ls) {
  InitPoolKernel<L><<<GridFor(w.pool, kBlock), kBlock, 0, ls.stream>>>(w);
  TRACER_CHECK_LAUNCH("init_pool");
}

template <class L>
void LaunchGenerate(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const LaunchSettings& ls) {
  DispatchCompaction(ls.compaction, [&](auto c) {
    GenerateKernel<L, decltype(c)::value><<<Blocks(ls, w.pool), kBlock, 0, ls.stream>>>(w, s, rp);
  });
  TRACER_CHECK_LAUNCH("generate");
}

template <class L>
void LaunchAdvance(const WaveView<L>& w, const LaunchSettings& ls) {
  if (ls.compaction == Compaction::kNone) return;
  AdvanceKernel<L><<<1, 1, 0, ls.stream>>>(w);
  TRACER_CHECK_LAUNCH("advance");
}

#define TRACER_INSTANTIATE(L)                                                                        \
  template void LaunchInitPool<L>(const WaveView<L>&, const LaunchSettings&);                         \
  template void LaunchGenerate<L>(const WaveView<L>&, const SceneView&, const RenderParams&, const LaunchSettings&); \
  template void LaunchAdvance<L>(const WaveView<L>&, const LaunchSettings&);
TRACER_FOR_EACH_LAYOUT(TRACER_INSTANTIATE)
}  // namespace tracer
