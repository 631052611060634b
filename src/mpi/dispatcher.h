// @file dispatcher.h: rank 0's dispatcher, which hands out the passes of a frame one at a time as the ranks ask
// for work, and the messages of the work communicator between it and the ranks.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracer/host/pass_driver.h"
#include "tracer/host/render_result.h"
#include "tracer/host/timing.h"

namespace tracer::mpi {

constexpr int kRequestTag = 1, kReplyTag = 2;

// A rank to the dispatcher, after each step: what it did and what it saw.
struct WorkRequest {
  int32_t spp = 0;     // samples per pixel of the pass just rendered; 0 after any other step
  int32_t signal = 0;  // a signal this rank received (0: none)
  uint64_t extensionRays = 0, shadowRays = 0;
  unsigned long long firstBad = NonFiniteSample::kNone;
};

// The dispatcher to a rank: its next step.
struct WorkReply {
  int32_t kind = 0;  // PassStep::Kind
  int32_t refresh = 0;
  uint32_t sampleBase = 0;
  int32_t spp = 0;
  int32_t sppDone = 0;  // checkpoint and finish: the samples per pixel that the ranks' films hold together
  int32_t signal = 0;   // finish: the signal that stopped the job (0: none)
};

// What rank 0's dispatcher needs to know of the render.
struct DispatchPlan {
  int spp = 0, startSpp = 0;
  long long pixels = 0, pool = 1;  // rank 0's pool decides the passes, as for one process with its backend
  bool tileGuide = false, checkNan = false, checkpoint = false;
  double timeLimit = 0.0, checkpointSeconds = 0.0, watchdogSeconds = 0.0;
  ProgressFn bar;
};

// Rank 0's thread: hands out passes in order, one per request, so each rank takes work as it finishes the last.
// Steps that every rank takes together (a guide refresh, a checkpoint, the end) wait until every rank asked,
// that is until no rank renders; no pass is handed out meanwhile.
class Dispatcher {
 public:
  Dispatcher(MPI_Comm comm, std::vector<std::string> names, DispatchPlan plan,
             std::function<void(const std::string&)> abort);
  void Run();

 private:
  struct RankState {
    bool busy = false;  // renders the pass it was given
    double since = 0.0;
    int pass = 0;
    uint64_t extensionRays = 0, shadowRays = 0;
  };

  void Handle(int rank, const WorkRequest& r);
  void Advance(double now);
  void HandOut(int rank, double now);
  int TailSplit(int full, int remaining) const;
  void Send(int rank, const WorkReply& reply);
  void Watch();

  MPI_Comm comm_;
  std::vector<std::string> names_;
  DispatchPlan plan_;
  std::function<void(const std::string&)> abort_;
  int ranks_;
  std::vector<RankState> state_;
  std::deque<int> waiting_;  // ranks whose request is not answered yet, in the order they asked
  std::optional<PassStep::Kind> pending_;
  Stopwatch clock_;
  int sppHanded_, sppFinished_, pass_ = 0, refreshes_ = 0, refreshedPass_ = -1, signal_ = 0;
  bool stop_ = false, finished_ = false;
  double lastCheckpoint_ = 0.0, longestPass_ = 0.0;
};

}  // namespace tracer::mpi
