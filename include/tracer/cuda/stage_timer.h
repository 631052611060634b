// @file stage_timer.h: names ranges of GPU work for Nsight (NVTX) and, when enabled, times them with CUDA
// events, summing the milliseconds per name.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <map>
#include <string>
#include <vector>

#include "tracer/cuda/raii.h"

namespace tracer {

class StageTimer {
 public:
  StageTimer(bool enabled, cudaStream_t s) : enabled_(enabled), stream_(s) {}
  void Begin(const std::string& name) {
    nvtxRangePushA(name.c_str());
    if (!enabled_) return;
    pending_.push_back({name, Record()});
  }
  void End() {
    nvtxRangePop();
    if (!enabled_) return;
    pending_.back().stop = Record();
  }
  // Call when the stream is idle: adds the pending intervals to the totals.
  void Collect() {
    for (auto& p : pending_) totals_[p.name] += events_[p.stop].MsSince(events_[p.start]);
    pending_.clear();
    used_ = 0;
  }
  const std::map<std::string, double>& Totals() const { return totals_; }

 private:
  struct Interval {
    std::string name;
    size_t start, stop = 0;
  };
  size_t Record() {
    if (used_ == events_.size()) events_.emplace_back();
    events_[used_].Record(stream_);
    return used_++;
  }
  bool enabled_;
  cudaStream_t stream_;
  std::vector<CudaEvent> events_;
  size_t used_ = 0;
  std::vector<Interval> pending_;
  std::map<std::string, double> totals_;
};

}  // namespace tracer
