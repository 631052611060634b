// @file intersect.cu: closest-hit BVH traversal for every ray of the bounce, and sorting of the hits into
// one queue per material class (plus the miss queue) so that each shade kernel's warps run one BSDF.
#include "kernels/kernel_common.cuh"

namespace tracer {

template <class L, Compaction C, bool kLdg, bool kSingleQueue>
__global__ void __launch_bounds__(kBlock) IntersectKernel(WaveView<L> w, SceneView s) {
  const int b = CurBuffer<C>(w.cur);
  const int n = C != Compaction::kNone ? static_cast<int>(w.counters->rayCount[w.cur]) : w.pool;
  ForEachItem(n, [&](int i) {
  const Ray r = L::LoadRay(w.rays[b], i);
  if (C == Compaction::kNone && r.tmax < 0.0f) {
    w.hitClass[i] = -2;  // dead slot: no work, but the lane is still launched
    return;
  }
  const HitRecord h = TraverseBvh<false, kLdg>(s.bvh, r);
  L::StoreHit(w.hits, i, h);
  int cls = ClassOfHit<kLdg>(s, h);
  if (C == Compaction::kNone) {
    w.hitClass[i] = static_cast<int8_t>(cls);
    return;
  }
  const int key = cls < 0 ? kMissQueue : (kSingleQueue ? 0 : cls);
  const uint32_t slot = PushSlotKeyed<PushModeOf<C>()>(w.counters->classCount, key);
  w.classQueue[static_cast<size_t>(key) * w.pool + slot] = i;
  });
}

template <class L>
void LaunchIntersect(const WaveView<L>& w, const SceneView& s, const LaunchSettings& ls) {
  DispatchCompaction(ls.compaction, [&](auto c) {
    DispatchBool(ls.ldg, [&](auto ldg) {
      DispatchBool(ls.singleShadeQueue, [&](auto single) {
        IntersectKernel<L, decltype(c)::value, decltype(ldg)::value, decltype(single)::value>
            <<<Blocks(ls, w.pool), kBlock, 0, ls.stream>>>(w, s);
      });
    });
  });
  TRACER_CHECK_LAUNCH("intersect");
}

#define TRACER_INSTANTIATE(L) \
  template void LaunchIntersect<L>(const WaveView<L>&, const SceneView&, const LaunchSettings&);
TRACER_FOR_EACH_LAYOUT(TRACER_INSTANTIATE)

}  // namespace tracer
