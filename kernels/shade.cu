// @file shade.cu: one shade kernel per material class, fed by that class's queue: emission with MIS,
// a light sample pushed as a shadow ray, and the BSDF sample pushed as the continuation (compacted).
// The naive twin (--single-shade-kernel) runs every hit through one kernel that switches on the material.
#include "kernels/kernel_common.cuh"

namespace tracer {

template <class L, Compaction C, bool kLdg>
__global__ void __launch_bounds__(kBlock) ShadeKernel(WaveView<L> w, SceneView s, RenderParams rp, FilmView film,
                                                      int cls) {
  const int queue = cls == kShadeAllClasses ? 0 : cls;
  const int n = C != Compaction::kNone ? static_cast<int>(w.counters->classCount[queue]) : w.pool;
  ForEachItem(n, [&](int j) {
  int i;
  if (C != Compaction::kNone) {
    i = w.classQueue[static_cast<size_t>(queue) * w.pool + j];
  } else {
    const int hc = w.hitClass[j];
    if (cls == kShadeAllClasses ? hc < 0 : hc != cls) return;  // lanes of other classes and dead lanes idle
    i = j;
  }
  if (w.collectStats) {
    // Statistics: active lanes, and how many material classes the warp's lanes will run.
    const unsigned mask = __activemask();
    const int hitCls = ClassOfHit<kLdg>(s, L::LoadHit(w.hits, i));
    const unsigned same = __match_any_sync(mask, hitCls);
    const bool classLeader = (threadIdx.x & 31) == static_cast<unsigned>(__ffs(same) - 1);
    const unsigned leaders = __ballot_sync(mask, classLeader);
    if ((threadIdx.x & 31) == static_cast<unsigned>(__ffs(mask) - 1)) {
      atomicAdd(&w.counters->shadeLanes, static_cast<unsigned long long>(__popc(mask)));
      atomicAdd(&w.counters->shadeWarps, 1ull);
      atomicAdd(&w.counters->shadeClasses, static_cast<unsigned long long>(__popc(leaders)));
    }
  }
  const int b = CurBuffer<C>(w.cur);
  const Ray r = L::LoadRay(w.rays[b], i);
  const HitRecord h = L::LoadHit(w.hits, i);
  const PathState ps = L::LoadPath(w.paths[b], r.index);
  ShadeOutput out = ShadeItem<kLdg>(s, rp, r, h, ps);
  if (!IsBlack(out.emitted)) FilmAdd(film, rp, ps.pixel, ps.depth, out.emitted);

  if (C == Compaction::kNone) {
    // In place: the slot keeps its shadow ray and its continuation, or dies.
    if (out.hasShadow) {
      L::StoreShadow(w.shadows, i, out.shadow);
      PushSlot<PushMode::kWarpAggregated>(&w.counters->shadowCount);  // statistics only
    }
    if (out.continues) {
      out.next.index = i;
      L::StorePath(w.paths[0], i, out.nextState);
      atomicAdd(&w.counters->rayCount[1 - w.cur], 1u);  // statistics only
    } else {
      out.next = Ray{};
      out.next.tmax = -1.0f;
    }
    L::StoreRay(w.rays[0], i, out.next);
    return;
  }
  constexpr PushMode kMode = PushModeOf<C>();
  if (out.hasShadow) {
    const uint32_t slot = PushSlot<kMode>(&w.counters->shadowCount);
    L::StoreShadow(w.shadows, static_cast<int>(slot), out.shadow);
  }
  if (out.continues) {
    const int nb = 1 - w.cur;
    const int slot = static_cast<int>(PushSlot<kMode>(&w.counters->rayCount[nb]));
    out.next.index = slot;
    L::StoreRay(w.rays[nb], slot, out.next);
    L::StorePath(w.paths[nb], slot, out.nextState);
  }
  });
}

template <class L, Compaction C>
__global__ void MissKernel(WaveView<L> w, SceneView s, RenderParams rp, FilmView film) {
  const int n = C != Compaction::kNone ? static_cast<int>(w.counters->classCount[kMissQueue]) : w.pool;
  ForEachItem(n, [&](int j) {
  int i;
  if (C != Compaction::kNone) {
    i = w.classQueue[static_cast<size_t>(kMissQueue) * w.pool + j];
  } else {
    if (w.hitClass[j] != -1) return;
    i = j;
  }
  const int b = CurBuffer<C>(w.cur);
  const Ray r = L::LoadRay(w.rays[b], i);
  MissItem(s, rp, film, L::LoadPath(w.paths[b], r.index));
  if (C == Compaction::kNone) {
    Ray dead{};
    dead.tmax = -1.0f;
    L::StoreRay(w.rays[0], i, dead);
  }
  });
}

template <class L>
void LaunchShade(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f, int cls,
                 const LaunchSettings& ls) {
  DispatchCompaction(ls.compaction, [&](auto c) {
    DispatchBool(ls.ldg, [&](auto ldg) {
      ShadeKernel<L, decltype(c)::value, decltype(ldg)::value><<<Blocks(ls, w.pool), kBlock, 0, ls.stream>>>(
          w, s, rp, f, cls);
    });
  });
  TRACER_CHECK_LAUNCH("shade");
}

template <class L>
void LaunchMiss(const WaveView<L>& w, const SceneView& s, const RenderParams& rp, const FilmView& f,
                const LaunchSettings& ls) {
  DispatchCompaction(ls.compaction, [&](auto c) {
    MissKernel<L, decltype(c)::value><<<Blocks(ls, w.pool), kBlock, 0, ls.stream>>>(w, s, rp, f);
  });
  TRACER_CHECK_LAUNCH("miss");
}

#define TRACER_INSTANTIATE(L)                                                                                   \
  template void LaunchShade<L>(const WaveView<L>&, const SceneView&, const RenderParams&, const FilmView&, int, \
                               const LaunchSettings&);                                                         \
  template void LaunchMiss<L>(const WaveView<L>&, const SceneView&, const RenderParams&, const FilmView&,      \
                              const LaunchSettings&);
TRACER_FOR_EACH_LAYOUT(TRACER_INSTANTIATE)

}  // namespace tracer
