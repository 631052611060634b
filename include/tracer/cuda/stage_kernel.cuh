// @file stage_kernel.cuh: how the CUDA backend runs the stage bodies of core/stages.h: one grid-stride kernel
// template for every queued stage and a one-thread kernel for serial stages, launched by CudaExecutor.
#pragma once
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <type_traits>
#include <vector>

#include "tracer/core/ray_sort.h"
#include "tracer/core/stages.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/cuda/raii.h"
#include "tracer/cuda/stage_timer.h"

namespace tracer {

constexpr unsigned kStageBlock = 128;  // threads per block of the stage kernels

// Grid-stride loop over the body's queue. Stage kernels are launched with at most as many blocks as the GPU
// holds at once, not one thread per pool slot, so a stage whose queue is short or empty (a material class
// absent from the scene, the tail of a pass) costs little more than its launch. The count is read on the
// device, so the host launches without waiting for the previous stage.
template <class Body>
__global__ void __launch_bounds__(kStageBlock) StageKernel(const Body body) {
  const int n = body.Count();
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x * blockDim.x))
    body(i);
}

// The traversal stages on persistent threads with dynamic fetch (Aila and Laine 2009): each lane takes queue
// items one after another from a shared counter; a warp fetches items for its idle lanes, with one atomic,
// whenever fewer than `refill` of its lanes are still tracing, so that one long ray does not hold 31 idle
// lanes. Bodies with kResumable only (core/stages.h: the wide BVH's intersect stage; kernels/trace_rays.cu).
//
// Registers bound occupancy (64 per thread: 50%), but more warps do not help: capped to 48 registers
// (__launch_bounds__(kStageBlock, 10)) it traced slower, not faster (docs/PERFORMANCE.md, design measurements).
template <class Body>
__global__ void __launch_bounds__(kStageBlock) PersistentStageKernel(const Body body, int* next, int refill) {
  constexpr unsigned kFull = 0xffffffffu;
  const int n = body.Count();
  const unsigned lane = threadIdx.x & 31u;
  WideGroup stack[kWideStackSize];
  WideTraversalState st{};
  typename Body::Payload item{};
  int idx = -1;  // the item this lane traces; -1: none; >= n: none left
  while (true) {
    const unsigned need = __ballot_sync(kFull, idx < 0);
    if (need != 0u) {
      const int leader = __ffs(static_cast<int>(need)) - 1;
      int base = 0;
      if (static_cast<int>(lane) == leader) base = atomicAdd(next, __popc(need));
      base = __shfl_sync(kFull, base, leader);
      if (idx < 0) {
        idx = base + __popc(need & ((1u << lane) - 1u));
        if (idx < n) {
          if (body.Begin(idx, item))
            st = WideBegin(Body::RayOf(item));
          else
            idx = -1;  // nothing to trace: fetch again
        }
      }
    }
    if (__all_sync(kFull, idx >= n)) return;
    while (true) {
      bool working = idx >= 0 && idx < n;
      // Scenes with cut-outs step with the cut-out test (core/scene_view.h), others without it.
      if (working &&
          !(body.s.cutouts
                ? WideStep<Body::kAnyHit, Body::kLdgLoads>(body.s.wide, Body::RayOf(item), st, stack,
                                                           MakeCutoutFilter<Body::kLdgLoads>(body.s, Body::RayOf(item)))
                : WideStep<Body::kAnyHit, Body::kLdgLoads>(body.s.wide, Body::RayOf(item), st, stack))) {
        body.Finish(idx, item, st.hit);
        idx = -1;
        working = false;
      }
      if (__popc(__ballot_sync(kFull, working)) < refill) break;
    }
  }
}

template <class Body, class = void>
struct IsResumable : std::false_type {};
template <class Body>
struct IsResumable<Body, std::enable_if_t<Body::kResumable>> : std::true_type {};

template <class Body>
__global__ void SerialKernel(const Body body) {
  body();
}

// The end-of-pass test without stalling the GPU: after each bounce the counters are copied to one slot of a
// ring of pinned snapshots, and the test reads the snapshot from two bounces ago, so the host never waits on
// the bounce in flight. Bounces issued after the pool drained find every queue empty and cost only launches.
class CounterSnapshots {
 public:
  static constexpr int kRing = 4;
  CounterSnapshots() : snaps_(kRing) {
    for (int i = 0; i < kRing; ++i) events_.emplace_back(cudaEventDisableTiming);
  }
  void Take(int iter, const WaveCounters* dCounters, cudaStream_t s) {
    const int slot = iter % kRing;
    TRACER_CUDA_CHECK(cudaMemcpyAsync(&snaps_.Get()[slot], dCounters, sizeof(WaveCounters), cudaMemcpyDeviceToHost, s));
    events_[slot].Record(s);
  }
  // Counters after bounce iter (waits for them).
  const WaveCounters& Wait(int iter) {
    const int slot = iter % kRing;
    events_[slot].Synchronize();
    return snaps_.Get()[slot];
  }

 private:
  PinnedBuffer<WaveCounters> snaps_;
  std::vector<CudaEvent> events_;
};

// What --sort-rays needs: keys and slot indices before and after CUB's radix sort, its scratch, and the
// scene's bounds for the origin grid (core/ray_sort.h).
struct RaySortBuffers {
  DeviceBuffer<uint32_t> keys[2];
  DeviceBuffer<int32_t> index[2];
  DeviceBuffer<unsigned char> scratch;
  size_t scratchBytes = 0;
  int pool = 0;
  Vec3 lo, invSize;
  RaySortBuffers(int poolSlots, Vec3 boundsMin, Vec3 boundsMax) : pool(poolSlots), lo(boundsMin) {
    const Vec3 size = boundsMax - boundsMin;
    invSize = Vec3(size.x > 0.0f ? 1.0f / size.x : 0.0f, size.y > 0.0f ? 1.0f / size.y : 0.0f,
                   size.z > 0.0f ? 1.0f / size.z : 0.0f);
    for (int b = 0; b < 2; ++b) {
      keys[b].Allocate(pool, "ray sort keys");
      index[b].Allocate(pool, "ray sort indices");
    }
    TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratchBytes, keys[0].Get(), keys[1].Get(),
                                                      index[0].Get(), index[1].Get(), pool, 0, kRaySortKeyBits));
    scratch.Allocate(scratchBytes, "ray sort scratch");
  }
};

// The streams beside the main one (core/stages.h's RunsAside) and the events that order them: one on which a bounce's
// shadow stage runs beside the next bounce, and one for the miss stage and each material class's shade stage, which
// read their own queues and so run side by side. Either way the SMs that one kernel's last warps leave idle take
// another's blocks.
constexpr int kShadeLanes = kNumMaterialClasses + 1;  // each class's shade stage, then the miss stage
struct AsideStream {
  AsideStream(bool shadowsAside, bool shadingInLanes) : shadows(shadowsAside), lanes(shadingInLanes) {
    laneDone.reserve(kShadeLanes);
    for (int k = 0; k < kShadeLanes; ++k) laneDone.emplace_back(cudaEventDisableTiming);
  }
  bool shadows, lanes;  // what runs beside the main stream (--serial-shadows, --serial-shading: not that)
  CudaStream stream;
  CudaEvent ready{cudaEventDisableTiming};                 // the main stream's work before the stages aside
  CudaEvent done[2] = {CudaEvent{cudaEventDisableTiming},  // each shadow buffer's last shadow stage
                       CudaEvent{cudaEventDisableTiming}};
  CudaStream lane[kShadeLanes];
  std::vector<CudaEvent> laneDone;  // each lane's last stage
};

// The executor RunBounces (core/stages.h) drives on the GPU.
class CudaExecutor {
 public:
  // persistentRefill > 0: resumable stages run on persistent threads, whose item counter is dNext; else, and for
  // the bounces TraceOnePerRay asks for, one thread per queue slot: `slotBlocks` blocks (the pool's slots over
  // kStageBlock), so that the hardware hands blocks to SMs as others finish (the grid-stride loop over `blocks`, the
  // resident blocks, leaves SMs idle behind their slowest warps: the render's camera rays traced slower that way than
  // on persistent threads). sort: the buffers of --sort-rays, or null.
  // aside: the streams beside this one, or null: every stage runs in line (as when the stages are timed).
  CudaExecutor(cudaStream_t stream, unsigned blocks, StageTimer& timer, const WaveCounters* dCounters,
               CounterSnapshots& snapshots, int persistentRefill = 0, int* dNext = nullptr,
               RaySortBuffers* sort = nullptr, unsigned slotBlocks = 0, AsideStream* aside = nullptr)
      : stream_(stream),
        main_(stream),
        blocks_(blocks),
        slotBlocks_(slotBlocks > blocks ? slotBlocks : blocks),
        timer_(timer),
        dCounters_(dCounters),
        snapshots_(snapshots),
        refill_(persistentRefill),
        dNext_(dNext),
        sort_(sort),
        aside_(aside) {}
  // --sort-rays: the current rays' slots sorted by RaySortKey, the live ones first. Without buffers, null (slot
  // order).
  template <class L>
  const int32_t* SortRays(const WaveView<L>& w) {
    if (sort_ == nullptr) return nullptr;
    RaySortBuffers& b = *sort_;
    Run(RayKeyStage<L>{w, b.lo, b.invSize, b.keys[0].Get(), b.index[0].Get()});
    TRACER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.scratch.Get(), b.scratchBytes, b.keys[0].Get(), b.keys[1].Get(),
                                                      b.index[0].Get(), b.index[1].Get(), b.pool, 0, kRaySortKeyBits,
                                                      stream_));
    return b.index[1].Get();
  }
  // The next resumable stages one thread per item even with persistent threads (RunBounces: the camera's bounce).
  void TraceOnePerRay(bool onePerRay) { onePerRay_ = onePerRay; }
  template <class Body>
  void Run(const Body& body) {
    if constexpr (IsResumable<Body>::value) {
      if (refill_ > 0 && !onePerRay_) {
        // One item counter: only the intersect stage is resumable, and it runs on the main stream; a resumable stage
        // on a side stream (BeginAside, BeginLane) would need a counter of its own.
        TRACER_CUDA_CHECK(cudaMemsetAsync(dNext_, 0, sizeof(int), stream_));
        PersistentStageKernel<Body><<<blocks_, kStageBlock, 0, stream_>>>(body, dNext_, refill_);
        TRACER_CHECK_LAUNCH("persistent stage");
        return;
      }
      StageKernel<Body><<<slotBlocks_, kStageBlock, 0, stream_>>>(body);
      TRACER_CHECK_LAUNCH("stage");
      return;
    }
    StageKernel<Body><<<blocks_, kStageBlock, 0, stream_>>>(body);
    TRACER_CHECK_LAUNCH("stage");
  }
  template <class Body>
  void Serial(const Body& body) {
    SerialKernel<Body><<<1, 1, 0, stream_>>>(body);
    TRACER_CHECK_LAUNCH("serial stage");
  }
  // RunsAside (core/stages.h): the launches between BeginAside and EndAside go to the shadow stream, those between
  // BeginLane(k) and EndLane(k) to lane k, once the main stream's work so far is done.
  void BeginAside() {
    if (aside_ && aside_->shadows) Divert(aside_->stream.Get());
  }
  void EndAside(int buffer) {
    if (!aside_ || !aside_->shadows) return;
    Return(aside_->done[buffer]);
    last_ = buffer;
  }
  void WaitAside(int buffer) {
    if (aside_ && aside_->shadows) TRACER_CUDA_CHECK(cudaStreamWaitEvent(main_, aside_->done[buffer].Get(), 0));
  }
  void JoinAside() {
    if (last_ >= 0) WaitAside(last_);
  }
  void BeginLane(int k) {
    if (aside_ && aside_->lanes) Divert(aside_->lane[k].Get());
  }
  void EndLane(int k) {
    if (!aside_ || !aside_->lanes) return;
    Return(aside_->laneDone[k]);
    lanesUsed_ |= 1u << k;
  }
  void JoinLanes() {
    for (int k = 0; k < kShadeLanes; ++k)
      if (lanesUsed_ & (1u << k)) TRACER_CUDA_CHECK(cudaStreamWaitEvent(main_, aside_->laneDone[k].Get(), 0));
    lanesUsed_ = 0;
  }
  void Begin(const char* name, int k = -1) {
    timer_.Begin(k < 0 ? std::string(name) : name + ("#" + std::to_string(k)));
  }
  void End() { timer_.End(); }
  bool Drained(int iter, int cur) {
    snapshots_.Take(iter, dCounters_, stream_);
    // cur alternates, so bounce iter - 2 had the same current buffer as bounce iter.
    return iter >= 2 && PassDrained(snapshots_.Wait(iter - 2), cur);
  }
  [[noreturn]] void Fail(const char* message) const { throw std::runtime_error(message); }

 private:
  cudaStream_t stream_;  // where launches go: main_, or a side stream (BeginAside, BeginLane)
  cudaStream_t main_;
  unsigned blocks_, slotBlocks_;
  StageTimer& timer_;
  const WaveCounters* dCounters_;
  CounterSnapshots& snapshots_;
  int refill_;
  bool onePerRay_ = false;
  int* dNext_;
  RaySortBuffers* sort_;
  // Launches go to `side` once the main stream's work so far is done.
  void Divert(cudaStream_t side) {
    aside_->ready.Record(main_);
    TRACER_CUDA_CHECK(cudaStreamWaitEvent(side, aside_->ready.Get(), 0));
    stream_ = side;
  }
  // Back to the main stream; `done` marks the end of the side stream's work so far.
  void Return(CudaEvent& done) {
    done.Record(stream_);
    stream_ = main_;
  }

  AsideStream* aside_;
  int last_ = -1;           // the shadow buffer of the last stage aside
  unsigned lanesUsed_ = 0;  // the lanes used since JoinLanes
};

// RunBounces with the variant chosen at run time (compaction, read-only loads, the BVH): defined
// for each layout in kernels/bounces_<layout>.cu, so the two layouts' kernels compile in parallel.
template <class L>
void RunCudaBounces(CudaExecutor& ex, const WaveView<L>& w, const SceneView& s, const RenderParams& rp,
                    const FilmView& film, const BounceOptions& bo, Compaction compaction, bool ldg);

// The body of RunCudaBounces, for the files that instantiate it.
#define TRACER_DEFINE_CUDA_BOUNCES(L)                                                                         \
  template <>                                                                                                 \
  void RunCudaBounces<L>(CudaExecutor & ex, const WaveView<L>& w, const SceneView& s, const RenderParams& rp, \
                         const FilmView& film, const BounceOptions& bo, Compaction compaction, bool ldg) {    \
    DispatchCompaction(compaction, [&](auto c) {                                                              \
      DispatchBool(ldg, [&](auto l) {                                                                         \
        DispatchBvh(bo.binaryBvh, [&](auto t) {                                                               \
          RunBounces<L, decltype(c)::value, decltype(l)::value, decltype(t)>(ex, w, s, rp, film, bo);         \
        });                                                                                                   \
      });                                                                                                     \
    });                                                                                                       \
  }

}  // namespace tracer
