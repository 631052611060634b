// @file stages.h: each wavefront stage written once, as a body that a backend runs over its queue.
//
// A stage is a small struct of views (WaveView, SceneView, ...) with two members:
//   Count()      the number of items to run, read from the queue counters (device memory on the GPU, host
//                memory on the CPU), so the host never needs the count before launching;
//   operator()(j) the work of item j of the queue.
// The CUDA backend runs a body with StageKernel<Body> (one grid-stride kernel for every stage, see
// cuda/stage_kernel.cuh); the CPU backend runs it with ThreadPool::ParallelFor. A serial stage (one item:
// counter bookkeeping between stages) has only operator()() and runs on one GPU thread or inline.
// Pushing to a queue is PushSlot (core/queue.h): warp-aggregated on the GPU, an atomic add on the CPU, where
// the executor first points a stage's outputs (kPushes) at chunk-local queues and appends them to the shared
// ones with one atomic add per queue per chunk (the host's warp aggregation; see cpu_backend.cpp).
//
// Template parameters select the naive twins: L the memory layout, C the compaction mode, kLdg the
// read-only load path. One shade queue for every material (--single-shade-kernel) is a run-time choice
// (IntersectStage::singleQueue, BounceOptions::singleShadeKernel): as a template parameter it doubled the traversal
// kernels that the GPU build compiles, for one select where a hit is queued.
#pragma once
#include <type_traits>
#include <utility>

#include "tracer/core/integrator.h"
#include "tracer/core/queue.h"
#include "tracer/core/wavefront.h"

namespace tracer {

constexpr int kShadeAllClasses = -1;  // the single shade stage that switches on the material
constexpr int kMaxStatBounces = 64;   // livePerBounce entries

// What a queued stage pushes to (compacted modes): nothing, the hit queues, or the shadow queue and the next
// ray buffer. The CPU executor redirects exactly these outputs to chunk-local queues.
enum class Pushes { kNothing, kHitQueues, kShadowsAndRays };

// Without compaction every stage works in place on buffer 0; with it, rays and paths ping-pong.
template <Compaction C>
TRACER_HD int CurBuffer(int cur) {
  return C == Compaction::kNone ? 0 : cur;
}
template <Compaction C>
constexpr PushMode PushModeOf() {
  return C == Compaction::kPerThreadAtomic ? PushMode::kPerThread : PushMode::kWarpAggregated;
}

// No-compaction mode only: marks every slot dead so that the first generate fills the pool.
template <class L>
struct InitPoolStage {
  static constexpr Pushes kPushes = Pushes::kNothing;
  WaveView<L> w;
  TRACER_HD int Count() const { return w.pool; }
  TRACER_HD void operator()(int i) const {
    Ray dead{};
    dead.tmax = -1.0f;
    L::StoreRay(w.rays[0], i, dead);
    Shadow none{};
    none.ray.tmax = -1.0f;
    L::StoreShadow(w.shadows[0], i, none);
  }
};

// Camera rays for new paths. With compaction, live paths occupy [0, live) and new ones take [live, pool):
// work item nextWork + (i - live) goes to slot i (AdvanceStage then accounts for them). Without, a slot is
// free when its ray is dead.
template <class L, Compaction C>
struct GenerateStage {
  static constexpr Pushes kPushes = Pushes::kNothing;
  WaveView<L> w;
  SceneView s;
  RenderParams rp;
  TRACER_HD int Count() const { return w.pool; }
  TRACER_HD void operator()(int i) const {
    WaveCounters* c = w.counters;
    unsigned long long work;
    if (C != Compaction::kNone) {
      const uint32_t live = c->rayCount[w.cur];
      if (static_cast<uint32_t>(i) < live) return;
      work = c->nextWork + static_cast<unsigned long long>(i - static_cast<int>(live));
      if (work >= c->totalWork) return;
    } else {
      if (L::LoadRay(w.rays[0], i).tmax >= 0.0f) return;
      if (c->nextWork >= c->totalWork) return;
      work = AtomicAddU64(&c->nextWork, 1ull);
      if (work >= c->totalWork) return;
      AtomicAddU32(&c->rayCount[w.cur], 1u);
    }
    Ray r;
    PathState ps;
    GenerateItem(s, rp, work, r, ps);
    r.index = i;
    const int b = CurBuffer<C>(w.cur);
    L::StoreRay(w.rays[b], i, r);
    L::StorePath(w.paths[b], i, ps);
  }
};

// Serial, after a compacting generate: accounts for the slots it filled.
template <class L>
struct AdvanceStage {
  WaveView<L> w;
  TRACER_HD void operator()() const {
    WaveCounters* c = w.counters;
    const unsigned long long live = c->rayCount[w.cur];
    unsigned long long fresh = static_cast<unsigned long long>(w.pool) - live;
    const unsigned long long left = c->totalWork - c->nextWork;
    if (left < fresh) fresh = left;
    c->rayCount[w.cur] = static_cast<uint32_t>(live + fresh);
    c->nextWork += fresh;
  }
};

// Closest-hit traversal (of the BVH that T names, see core/scene_view.h), then the hit is pushed to its material
// class's queue (or the miss queue), so that each shade stage's warps run one BSDF.
//
// The body also comes apart into Begin (load item i, say whether it needs tracing), the traversal, and Finish
// (store and queue the hit), so that the GPU's persistent-threads kernel can trace items a few steps at a time
// and hand idle lanes new ones (PersistentStageKernel, cuda/stage_kernel.cuh); kResumable says whether it may
// (the wide BVH only). operator() is the three in a row. Item j is the ray in slot w.Slot(j): slot j, or, when
// the executor sorted the rays (--sort-rays), the j-th in the sorted order.
template <class L, Compaction C, bool kLdg, class T>
struct IntersectStage {
  static constexpr Pushes kPushes = C == Compaction::kNone ? Pushes::kNothing : Pushes::kHitQueues;
  static constexpr bool kResumable = std::is_same<T, WideBvhTraversal>::value, kAnyHit = false, kLdgLoads = kLdg;
  using Payload = Ray;
  WaveView<L> w;
  SceneView s;
  bool singleQueue;  // every hit to shade queue 0 (--single-shade-kernel), not its class's
  TRACER_HD int Count() const {
    return C != Compaction::kNone ? static_cast<int>(w.counters->rayCount[w.cur]) : w.pool;
  }
  TRACER_HD static const Ray& RayOf(const Ray& r) { return r; }
  TRACER_HD bool Begin(int j, Ray& r) const {
    const int i = w.Slot(j);
    r = L::LoadRay(w.rays[CurBuffer<C>(w.cur)], i);
    if (C == Compaction::kNone && r.tmax < 0.0f) {
      w.hitClass[i] = -2;  // dead slot: no work, but the lane is still launched
      return false;
    }
    return true;
  }
  TRACER_HD void Finish(int j, const Ray&, const HitRecord& h) const {
    const int i = w.Slot(j);
    L::StoreHit(w.hits, i, h);
    const int cls = ClassOfHit<kLdg>(s, h);
    if (C == Compaction::kNone) {
      w.hitClass[i] = static_cast<int8_t>(cls);
      return;
    }
    const int key = cls < 0 ? kMissQueue : (singleQueue ? 0 : cls);
    const uint32_t slot = PushSlotKeyed<PushModeOf<C>()>(w.counters->classCount, key);
    w.classQueue[static_cast<size_t>(key) * w.pool + slot] = i;
  }
  TRACER_HD void operator()(int j) const {
    Ray r;
    if (Begin(j, r)) Finish(j, r, T::template Trace<false, kLdg>(s, r));
  }
};

// Item j of a hit queue (`queue`), or -1 when this lane has nothing to do (no-compaction mode: lanes of
// other classes and dead lanes idle). `want` is what the stage runs: kMissQueue the misses (hitClass -1),
// kShadeAllClasses any hit, else one material class. Dead slots (hitClass -2) are never wanted.
template <class L, Compaction C>
TRACER_HD int QueuedHit(const WaveView<L>& w, int queue, int want, int j) {
  if (C != Compaction::kNone) return w.classQueue[static_cast<size_t>(queue) * w.pool + j];
  const int hc = w.hitClass[j];
  const bool wanted = want == kMissQueue ? hc == -1 : (want == kShadeAllClasses ? hc >= 0 : hc == want);
  return wanted ? j : -1;
}

// Rays that left the scene: the environment.
template <class L, Compaction C>
struct MissStage {
  static constexpr Pushes kPushes = Pushes::kNothing;
  WaveView<L> w;
  SceneView s;
  RenderParams rp;
  FilmView film;
  TRACER_HD int Count() const {
    return C != Compaction::kNone ? static_cast<int>(w.counters->classCount[kMissQueue]) : w.pool;
  }
  TRACER_HD void operator()(int j) const {
    const int i = QueuedHit<L, C>(w, kMissQueue, kMissQueue, j);
    if (i < 0) return;
    const int b = CurBuffer<C>(w.cur);
    const Ray r = L::LoadRay(w.rays[b], i);
    const PathState ps = L::LoadPath(w.paths[b], r.index);
    MissItem(s, rp, film, ps, r);
    RecordFirstHit(film, ps.pixel, ps.sample, ps.depth, HitRecord{0.0f, 0.0f, 0.0f, -1});
    if (C == Compaction::kNone) {
      Ray dead{};
      dead.tmax = -1.0f;
      L::StoreRay(w.rays[0], i, dead);
    }
  }
};

// One material class's hits (or all of them, cls == kShadeAllClasses): emission with MIS, a light sample
// pushed as a shadow ray, and the BSDF sample pushed as the continuation (compacted).
template <class L, Compaction C, bool kLdg>
struct ShadeStage {
  static constexpr Pushes kPushes = C == Compaction::kNone ? Pushes::kNothing : Pushes::kShadowsAndRays;
  WaveView<L> w;
  SceneView s;
  RenderParams rp;
  FilmView film;
  int cls;
  TRACER_HD int Queue() const { return cls == kShadeAllClasses ? 0 : cls; }
  TRACER_HD int Count() const {
    return C != Compaction::kNone ? static_cast<int>(w.counters->classCount[Queue()]) : w.pool;
  }
  TRACER_HD void operator()(int j) const {
    const int i = QueuedHit<L, C>(w, Queue(), cls, j);
    if (i < 0) return;
    if (w.collectStats) CountShadeWarp(i);
    const int b = CurBuffer<C>(w.cur);
    const Ray r = L::LoadRay(w.rays[b], i);
    const HitRecord h = L::LoadHit(w.hits, i);
    const PathState ps = L::LoadPath(w.paths[b], r.index);
    RecordFirstHit(film, ps.pixel, ps.sample, ps.depth, h);
    ShadeOutput out = ShadeItem<kLdg>(s, rp, r, h, ps);
    if (!IsBlack(out.emitted)) FilmAdd(film, rp, ps.pixel, FilmTag(ps.depth, ps.sample), out.emitted);

    if (C == Compaction::kNone) {
      // In place: the slot keeps its shadow ray and its continuation, or dies.
      if (out.hasShadow) {
        L::StoreShadow(w.shadows[0], i, out.shadow);
        PushSlot<PushMode::kWarpAggregated>(&w.counters->shadowCount[0]);  // statistics only
      }
      if (out.continues) {
        out.next.index = i;
        L::StorePath(w.paths[0], i, out.nextState);
        AtomicAddU32(&w.counters->rayCount[1 - w.cur], 1u);  // statistics only
      } else {
        out.next = Ray{};
        out.next.tmax = -1.0f;
      }
      L::StoreRay(w.rays[0], i, out.next);
      return;
    }
    constexpr PushMode kMode = PushModeOf<C>();
    if (out.hasShadow) {
      const uint32_t slot = PushSlot<kMode>(&w.counters->shadowCount[b]);
      L::StoreShadow(w.shadows[b], static_cast<int>(slot), out.shadow);
    }
    if (out.continues) {
      const int nb = 1 - w.cur;
      const int slot = static_cast<int>(PushSlot<kMode>(&w.counters->rayCount[nb]));
      out.next.index = slot;
      L::StoreRay(w.rays[nb], slot, out.next);
      L::StorePath(w.paths[nb], slot, out.nextState);
    }
  }
  // Statistics (GPU): active lanes of the warp, and how many material classes its lanes will run.
  TRACER_HD void CountShadeWarp(int i) const {
#if TRACER_ON_DEVICE
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
#else
    (void)i;
#endif
  }
};

// Any-hit traversal of the bounce's shadow rays (buffer CurBuffer(w.cur)); an unoccluded one adds its light sample to
// the film. Begin and Finish as IntersectStage's, but it is not run on persistent threads (kResumable false): in the
// render, shadow rays end after a few nodes, so a warp refills almost every step and all warps contend for the one
// item counter; persistent shadow stages measured slower (docs/PERFORMANCE.md, design measurements). Long any-hit rays
// (--trace-rays --any-hit on ambient-occlusion files) do gain from persistent threads.
template <class L, Compaction C, bool kLdg, class T>
struct ShadowStage {
  static constexpr Pushes kPushes = Pushes::kNothing;
  static constexpr bool kResumable = false;
  WaveView<L> w;
  SceneView s;
  RenderParams rp;
  FilmView film;
  TRACER_HD int Count() const {
    return C != Compaction::kNone ? static_cast<int>(w.counters->shadowCount[w.cur]) : w.pool;
  }
  TRACER_HD bool Begin(int j, Shadow& sh) const {
    sh = L::LoadShadow(w.shadows[CurBuffer<C>(w.cur)], j);
    if (C == Compaction::kNone) {
      if (sh.ray.tmax < 0.0f) return false;
      Shadow none{};
      none.ray.tmax = -1.0f;
      L::StoreShadow(w.shadows[0], j, none);  // consumed: the slot may not shade next bounce
    }
    return true;
  }
  TRACER_HD void Finish(int, const Shadow& sh, const HitRecord& h) const {
    if (h.tri < 0) FilmAdd(film, rp, static_cast<uint32_t>(sh.ray.index), sh.depth, sh.contribution);
  }
  TRACER_HD void operator()(int j) const {
    Shadow sh;
    if (Begin(j, sh)) Finish(j, sh, T::template Trace<true, kLdg>(s, sh.ray));
  }
};

// Serial, after the shadow stage (on its stream): counts the bounce's shadow rays and empties their buffer, which the
// bounce after next fills again.
template <class L, Compaction C>
struct ShadowsDoneStage {
  WaveView<L> w;
  TRACER_HD void operator()() const {
    WaveCounters* c = w.counters;
    const int b = CurBuffer<C>(w.cur);
    c->shadowRays += c->shadowCount[b];
    c->shadowCount[b] = 0;
  }
};

// Serial, last in each bounce: statistics, then empty the consumed queues for the next bounce.
template <class L>
struct FinishStage {
  WaveView<L> w;
  TRACER_HD void operator()() const {
    WaveCounters* c = w.counters;
    if (w.livePerBounce) w.livePerBounce[w.bounce] += c->rayCount[w.cur];
    c->extensionRays += c->rayCount[w.cur];
    c->rayCount[w.cur] = 0;
    for (int k = 0; k <= kNumMaterialClasses; ++k) c->classCount[k] = 0;
  }
};

// Whether the pass has drained after the bounce whose counters (after FinishStage) are `c`, `cur` being that
// bounce's current ray buffer: no continuation was pushed and no work item is left to generate.
TRACER_HD bool PassDrained(const WaveCounters& c, int cur) {
  return c.rayCount[1 - cur] == 0 && c.nextWork >= c.totalWork;
}

struct BounceOptions {
  bool regenerate = true;  // refill the pool with new paths as old ones end (off: one generation per pass)
  bool singleShadeKernel = false;
  bool timePerBounce = false;       // name intersect "intersect#K" so that each bounce is timed on its own
  bool binaryBvh = false;           // traverse the binary BVH (--bvh binary), not the wide one
  int persistentRefill = 0;         // GPU: persistent threads refill a warp's lanes below this many (0: one per item)
  bool perRayCameraBounce = false;  // GPU: the first bounce one thread per ray even with persistentRefill > 0
  bool sortRays = false;            // GPU, compacted: sort extension rays after the first bounce (core/ray_sort.h)
};

// An executor may sort the rays about to enter intersect (the GPU's --sort-rays) by having a member
// SortRays(w) that returns the order (WaveView::order); the others trace in slot order.
template <class Exec, class W, class = void>
struct SortsRays : std::false_type {};
template <class Exec, class W>
struct SortsRays<Exec, W, std::void_t<decltype(std::declval<Exec&>().SortRays(std::declval<const W&>()))>>
    : std::true_type {};

// An executor may trace a bounce's rays in a mode chosen per bounce (the GPU's persistent threads or one thread per
// ray: member TraceOnePerRay(bool)); the others ignore it.
template <class Exec, class = void>
struct ChoosesTraceMode : std::false_type {};
template <class Exec>
struct ChoosesTraceMode<Exec, std::void_t<decltype(std::declval<Exec&>().TraceOnePerRay(true))>> : std::true_type {};

// An executor may run a bounce's shadow stage beside the next bounce (the GPU's second stream), having members
//   BeginAside() / EndAside(b)   bracket the stages that go aside: the shadow stage of shadow buffer b and its
//                                bookkeeping, which start once everything before them is done;
//   WaitAside(b)                 before the stages that fill buffer b again: they wait for its last shadow stage;
//   JoinAside()                  at the end of the pass: what follows waits for every stage aside;
//   BeginLane(k) / EndLane(k)    bracket a stage that runs beside the others of its bounce (the miss stage and each
//                                class's shade stage: each reads its own queue and pushes by atomics);
//   JoinLanes()                  what follows waits for the lanes' stages.
// The others run every stage in line. Without compaction a bounce's shadow rays sit in its slots, which the next
// bounce shades, and the stages work in place over the whole pool, so they always run in line.
template <class Exec, class = void>
struct RunsAside : std::false_type {};
template <class Exec>
struct RunsAside<Exec, std::void_t<decltype(std::declval<Exec&>().BeginAside())>> : std::true_type {};

// ex.Run(body), on lane k beside the bounce's other lanes where lanes is set (RunsAside), else in line.
template <bool kAside, class Exec, class Body>
void RunInLane(Exec& ex, bool lanes, int k, const Body& body) {
  if constexpr (kAside)
    if (lanes) ex.BeginLane(k);
  ex.Run(body);
  if constexpr (kAside)
    if (lanes) ex.EndLane(k);
}

// An executor may watch the rays about to enter intersect and shadow (the CPU's --dump-rays) by having a
// member DumpRays(w, bounce, shadow, inPlace) (inPlace: no compaction, so the buffer is the whole pool with dead
// slots); executors without one (the GPU's) compile to nothing here.
template <class Exec, class W, class = void>
struct WatchesRays : std::false_type {};
template <class Exec, class W>
struct WatchesRays<Exec, W,
                   std::void_t<decltype(std::declval<Exec&>().DumpRays(std::declval<const W&>(), 0, false, false))>>
    : std::true_type {};
template <Compaction C, class Exec, class W>
void DumpRaysIfWatched(Exec& ex, const W& w, int bounce, bool shadow) {
  if constexpr (WatchesRays<Exec, W>::value) ex.DumpRays(w, bounce, shadow, C == Compaction::kNone);
}

// One pass of bounces: generate -> intersect -> miss -> shade per class -> shadow -> finish, until the pass
// has drained (the shadow stage maybe aside, beside the next bounce: RunsAside). `ex` is a backend's executor:
//   ex.Run(body)        runs a queued stage over body.Count() items;
//   ex.Serial(body)     runs a serial stage;
//   ex.Begin(name, k = -1) / ex.End()  bracket a timed range of stages named name, or "name#k" for k >= 0
//                       (NVTX and CUDA events on the GPU);
//   ex.Drained(iter, cur)       the end test after bounce iter (the GPU tests a snapshot two bounces old).
// `base` holds the pass's buffers; its cur and bounce are set here.
template <class L, Compaction C, bool kLdg, class T, class Exec>
void RunBounces(Exec& ex, const WaveView<L>& base, const SceneView& s, const RenderParams& rp, const FilmView& film,
                const BounceOptions& bo) {
  static const char* kShadeNames[kNumMaterialClasses] = {"shade_diffuse", "shade_glossy", "shade_mirror",
                                                         "shade_dielectric"};
  constexpr bool kAside = RunsAside<Exec>::value && C != Compaction::kNone;
  // Side by side, the miss and shade stages gain where two or more classes shade (the sports car: 3%), and lose a
  // little where one does, to the streams' events (the Cornell box: 0.3%; docs/PERFORMANCE.md).
  const int classes = kNumMaterialClasses - static_cast<int>(Popc(static_cast<uint32_t>(s.absentClasses)));
  const bool lanes = kAside && !bo.singleShadeKernel && classes >= 2;
  int cur = 0;
  for (int iter = 0;; ++iter) {
    WaveView<L> w = base;
    w.cur = cur;
    w.bounce = iter < kMaxStatBounces - 1 ? iter : kMaxStatBounces - 1;
    if (iter == 0 || bo.regenerate) {
      ex.Begin("generate");
      ex.Run(GenerateStage<L, C>{w, s, rp});
      if (C != Compaction::kNone) ex.Serial(AdvanceStage<L>{w});
      ex.End();
    }
    DumpRaysIfWatched<C>(ex, w, iter, false);
    WaveView<L> wi = w;  // intersect's view: maybe a sorted order of the rays
    if constexpr (SortsRays<Exec, WaveView<L>>::value && C != Compaction::kNone) {
      // Not the camera rays: they come in pixel order, coherent already.
      if (bo.sortRays && iter > 0) {
        ex.Begin("sort_rays");
        wi.order = ex.SortRays(w);
        ex.End();
      }
    }
    if constexpr (ChoosesTraceMode<Exec>::value) ex.TraceOnePerRay(bo.perRayCameraBounce && iter == 0);
    ex.Begin("intersect", bo.timePerBounce ? w.bounce : -1);
    ex.Run(IntersectStage<L, C, kLdg, T>{wi, s, bo.singleShadeKernel});
    ex.End();
    ex.Begin("miss");
    RunInLane<kAside>(ex, lanes, kNumMaterialClasses, MissStage<L, C>{w, s, rp, film});
    ex.End();
    if constexpr (kAside) ex.WaitAside(cur);  // shading fills shadow buffer cur, which bounce iter - 2 traced
    if (bo.singleShadeKernel) {
      ex.Begin("shade");
      ex.Run(ShadeStage<L, C, kLdg>{w, s, rp, film, kShadeAllClasses});
      ex.End();
    } else {
      for (int c = 0; c < kNumMaterialClasses; ++c) {
        if (s.absentClasses & (1 << c)) continue;  // an empty queue: not even a launch
        ex.Begin(kShadeNames[c]);
        RunInLane<kAside>(ex, lanes, c, ShadeStage<L, C, kLdg>{w, s, rp, film, c});
        ex.End();
      }
    }
    if constexpr (kAside) ex.JoinLanes();  // the shadow stage reads what shading pushed, finish resets the queues
    DumpRaysIfWatched<C>(ex, w, iter, true);
    ex.Begin("shadow");
    if constexpr (kAside) ex.BeginAside();
    ex.Run(ShadowStage<L, C, kLdg, T>{w, s, rp, film});
    ex.Serial(ShadowsDoneStage<L, C>{w});
    if constexpr (kAside) ex.EndAside(cur);
    ex.End();
    ex.Serial(FinishStage<L>{w});
    cur = 1 - cur;
    if (ex.Drained(iter, 1 - cur)) break;
    if (iter > 100000) ex.Fail("wavefront did not drain (internal error)");
  }
  if constexpr (kAside) ex.JoinAside();
}

}  // namespace tracer
