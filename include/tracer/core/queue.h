// @file queue.h: pushing work items to queues: one slot reserved per pushing thread. On the GPU the push is
// warp-aggregated (or the naive per-thread atomic); on the CPU it is one relaxed atomic add.
#pragma once
#include <type_traits>

#include "tracer/core/common.h"
#include "tracer/core/compaction.h"

namespace tracer {

enum class PushMode { kWarpAggregated, kPerThread };

#if TRACER_ON_DEVICE
TRACER_DEVICE unsigned LaneMaskLt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}
#endif

// Reserves one slot of `counter` for each calling lane.
// Warp-aggregated: the lanes that call together (the active mask) are counted with __popc, the lowest
// one does a single atomicAdd for all of them, broadcasts the base with __shfl_sync, and each lane's
// slot is base + the number of active lanes below it. Preconditions: every lane that will push calls
// this at the same time (converged); the result is valid in every calling lane.
// Example: lanes 0, 3, 7 push to a counter at 10 -> one atomicAdd(+3); slots 10, 11, 12.
// On the host there are no warps: both modes are one atomic add.
template <PushMode kMode>
TRACER_HD uint32_t PushSlot(uint32_t* counter) {
#if TRACER_ON_DEVICE
  if (kMode == PushMode::kPerThread) return atomicAdd(counter, 1u);
  const unsigned mask = __activemask();
  const int leader = __ffs(mask) - 1;
  const unsigned rank = __popc(mask & LaneMaskLt());
  uint32_t base = 0;
  if (rank == 0) base = atomicAdd(counter, static_cast<uint32_t>(__popc(mask)));
  base = __shfl_sync(mask, base, leader);
  return base + rank;
#else
  return __atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED);
#endif
}

// Same, when the lanes of a warp push to different queues (`key` picks the queue, counters[key] its
// counter): __match_any_sync groups the lanes with equal keys, and each group aggregates as above.
template <PushMode kMode>
TRACER_HD uint32_t PushSlotKeyed(uint32_t* counters, int key) {
#if TRACER_ON_DEVICE
  if (kMode == PushMode::kPerThread) return atomicAdd(&counters[key], 1u);
  const unsigned active = __activemask();
  const unsigned group = __match_any_sync(active, key);
  const int leader = __ffs(group) - 1;
  const unsigned rank = __popc(group & LaneMaskLt());
  uint32_t base = 0;
  if (rank == 0) base = atomicAdd(&counters[key], static_cast<uint32_t>(__popc(group)));
  base = __shfl_sync(group, base, leader);
  return base + rank;
#else
  return __atomic_fetch_add(&counters[key], 1u, __ATOMIC_RELAXED);
#endif
}

// Calls f(std::integral_constant<Compaction, C>{}) for the run-time compaction mode.
template <typename F>
void DispatchCompaction(Compaction c, F&& f) {
  switch (c) {
    case Compaction::kWarpAggregated:
      f(std::integral_constant<Compaction, Compaction::kWarpAggregated>{});
      break;
    case Compaction::kPerThreadAtomic:
      f(std::integral_constant<Compaction, Compaction::kPerThreadAtomic>{});
      break;
    case Compaction::kNone:
      f(std::integral_constant<Compaction, Compaction::kNone>{});
      break;
  }
}
template <typename F>
void DispatchBool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace tracer
