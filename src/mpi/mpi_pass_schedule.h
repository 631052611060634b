// @file mpi_pass_schedule.h: MpiPassSchedule, one rank's schedule of the passes of an MPI render: the steps that
// rank 0's dispatcher hands out, the steps all ranks take together, the film and the statistics summed on rank 0.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "dispatcher.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/render_options.h"
#include "tracer/host/timing.h"

namespace tracer::mpi {

class MpiJob;

// Each rank's schedule: asks rank 0's dispatcher for every step (rank 0's main thread too, through its own
// dispatcher thread), takes part in the steps all ranks take together, and sums the films on rank 0.
class MpiPassSchedule final : public PassSchedule {
 public:
  MpiPassSchedule(MpiJob& job, const RenderOptions& opt, ProgressFn bar, std::function<int()> signal)
      : job_(job), opt_(opt), bar_(std::move(bar)), signal_(std::move(signal)) {}
  ~MpiPassSchedule() override;
  void Prepare(const Backend& backend, long long pool) override;
  void Begin(const Backend& backend, long long pool) override;
  PassStep Next(const PassReport& last) override;
  TileStatsShare GuideShare() override;
  bool CombineFilm(Backend& backend, HostFilm& film) override;
  void CombineStats(RenderStats& stats, unsigned long long& firstBad) override;

 private:
  MpiJob& job_;
  const RenderOptions& opt_;
  ProgressFn bar_;
  std::function<int()> signal_;
  std::string backendName_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::thread thread_;
  bool begun_ = false, finished_ = false;
  Stopwatch renderClock_, passClock_;
  int sppDone_ = 0, passes_ = 0, spp_ = 0;
  double busySeconds_ = 0.0, startSeconds_ = 0.0;
};

}  // namespace tracer::mpi
