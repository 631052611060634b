// @file wavefront.h: the device-side state of one wavefront bounce, as the kernels see it.
#pragma once
#include "tracer/core/integrator.h"

namespace tracer {

// Queue counters. They live on the device; the host reads them only for statistics and the end test.
struct alignas(16) WaveCounters {
  uint32_t rayCount[2];                          // rays in each ray buffer (current / next)
  uint32_t classCount[kNumMaterialClasses + 1];  // the last one counts misses: keyed pushes index it
  uint32_t shadowCount[2];                       // shadow rays in each shadow buffer (WaveView::shadows)
  unsigned long long nextWork;                   // next work item of the pass
  unsigned long long totalWork;                  // work items in the pass
  // Running totals, kept across passes:
  unsigned long long shadeLanes;    // sum of active lanes over shade warps (statistics)
  unsigned long long shadeWarps;    // shade warps counted (statistics)
  unsigned long long shadeClasses;  // sum over shade warps of the distinct material classes in the warp
  unsigned long long dropped;       // non-finite samples dropped
  unsigned long long firstBad;      // see FilmView::firstBad
  unsigned long long extensionRays;
  unsigned long long shadowRays;
};

// Counters for a new pass of totalWork work items: empty queues, the running totals kept.
inline void StartPass(WaveCounters& c, unsigned long long totalWork) {
  for (uint32_t& n : c.rayCount) n = 0;
  for (uint32_t& n : c.classCount) n = 0;
  for (uint32_t& n : c.shadowCount) n = 0;
  c.nextWork = 0;
  c.totalWork = totalWork;
}

constexpr int kMissQueue = kNumMaterialClasses;

// Buffers of one bounce. `cur` is the index of the current ray buffer; rays[1-cur] receives continuations.
template <class L>
struct WaveView {
  typename L::RayT* rays[2];
  typename L::PathBuffers paths[2];
  typename L::HitT* hits;
  // Shadow rays: a bounce pushes to shadows[CurBuffer(cur)] (stages.h; buffer 0 without compaction), so that one
  // bounce's shadow stage may still run (the GPU traces it beside the next bounce) while the next bounce's shade stage
  // fills the other buffer. Backends that finish a bounce's shadow stage before the next bounce begins point both at
  // one buffer.
  typename L::ShadowT* shadows[2];
  int32_t* classQueue;  // kNumMaterialClasses + 1 queues of `pool` entries each; the last holds misses
  int8_t* hitClass;     // no-compaction mode: class of each slot's hit, -1 miss, -2 dead
  WaveCounters* counters;
  unsigned long long* livePerBounce;  // statistics, may be null
  int32_t pool;
  int32_t cur;
  int32_t bounce;
  int32_t collectStats;
  // Intersect only: item j traces the ray in slot order[j] (the GPU's --sort-rays); null: slot j.
  const int32_t* order = nullptr;
  TRACER_HD int Slot(int j) const { return order ? order[j] : j; }
};

}  // namespace tracer
