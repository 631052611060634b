// @file dispatcher.cpp: Dispatcher (dispatcher.h): the request loop, the passes handed out in order, the steps all
// ranks take together, the tail of the frame split among the ranks, and the watchdog.
#include "dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <utility>

#include "mpi_calls.h"

namespace tracer::mpi {

Dispatcher::Dispatcher(MPI_Comm comm, std::vector<std::string> names, DispatchPlan plan,
                       std::function<void(const std::string&)> abort)
    : comm_(comm),
      names_(std::move(names)),
      plan_(std::move(plan)),
      abort_(std::move(abort)),
      ranks_(static_cast<int>(names_.size())),
      state_(names_.size()),
      sppHanded_(plan_.startSpp),
      sppFinished_(plan_.startSpp) {}

void Dispatcher::Run() {
  try {
    while (!finished_) {
      WorkRequest in;
      MPI_Request request;
      MPI_Status status;
      TRACER_MPI_CHECK(MPI_Irecv(&in, sizeof in, MPI_BYTE, MPI_ANY_SOURCE, kRequestTag, comm_, &request));
      int done = 0;
      for (int polls = 0;; ++polls) {
        TRACER_MPI_CHECK(MPI_Test(&request, &done, &status));
        if (done) break;
        Watch();
        // Every 50 us for the first 4000 polls (0.2-0.4 s with the timer's slack: a rendering rank asks at every
        // pass, and each wait delays its next pass), then every millisecond.
        std::this_thread::sleep_for(std::chrono::microseconds(polls < 4000 ? 50 : 1000));
      }
      Handle(status.MPI_SOURCE, in);
    }
  } catch (const std::exception& e) {
    abort_(std::string("the dispatcher: ") + e.what());
  }
}

void Dispatcher::Handle(int rank, const WorkRequest& r) {
  const double now = clock_.Seconds();
  RankState& s = state_[static_cast<size_t>(rank)];
  s.extensionRays = r.extensionRays;
  s.shadowRays = r.shadowRays;
  if (r.signal != 0 && signal_ == 0) signal_ = r.signal;
  if (r.signal != 0 || (plan_.checkNan && r.firstBad != NonFiniteSample::kNone)) stop_ = true;
  if (r.spp > 0) {
    s.busy = false;
    longestPass_ = std::max(longestPass_, now - s.since);
    sppFinished_ += r.spp;
    RenderStats total;
    for (const RankState& x : state_) {
      total.extensionRays += x.extensionRays;
      total.shadowRays += x.shadowRays;
    }
    total.seconds = now;
    // As for one process: the bar (which also says whether rank 0 was signalled), then --time; a checkpoint
    // when one is due.
    if (plan_.bar && !plan_.bar(sppFinished_, plan_.spp, total)) stop_ = true;
    if (plan_.timeLimit > 0.0 && now >= plan_.timeLimit) stop_ = true;
    if (plan_.checkpoint && !stop_ && !pending_ && now - lastCheckpoint_ >= plan_.checkpointSeconds) {
      pending_ = PassStep::Kind::kCheckpoint;
      lastCheckpoint_ = now;
    }
  }
  waiting_.push_back(rank);
  Advance(now);
}

void Dispatcher::Advance(double now) {
  while (!waiting_.empty()) {
    if (!pending_) {
      if (stop_ || sppHanded_ >= plan_.spp) {
        pending_ = PassStep::Kind::kFinish;
      } else if (plan_.tileGuide && IsTileRefreshPass(pass_) && refreshedPass_ != pass_) {
        pending_ = PassStep::Kind::kRefreshGuide;
        refreshedPass_ = pass_;
      } else {
        HandOut(waiting_.front(), now);
        waiting_.pop_front();
        continue;
      }
    }
    if (static_cast<int>(waiting_.size()) < ranks_) return;  // a rank still renders
    WorkReply reply;
    reply.kind = static_cast<int32_t>(*pending_);
    if (*pending_ == PassStep::Kind::kRefreshGuide) reply.refresh = refreshes_++;
    reply.sppDone = sppHanded_;
    reply.signal = signal_;
    for (int r = 0; r < ranks_; ++r) Send(r, reply);
    waiting_.clear();
    finished_ = *pending_ == PassStep::Kind::kFinish;
    pending_.reset();
  }
}

void Dispatcher::HandOut(int rank, double now) {
  WorkReply reply;
  reply.kind = static_cast<int32_t>(PassStep::Kind::kPass);
  reply.sampleBase = static_cast<uint32_t>(sppHanded_);
  reply.spp = TailSplit(SamplesPerPass(plan_.pixels, std::min(plan_.pool, kSteadyPassPool), plan_.spp - sppHanded_),
                        plan_.spp - sppHanded_);
  sppHanded_ += reply.spp;
  RankState& s = state_[static_cast<size_t>(rank)];
  s.busy = true;
  s.since = now;
  s.pass = pass_++;
  Send(rank, reply);
}

// The tail of the frame: once the samples left would not give every rank a full pass, they are split evenly
// (at least 1 spp a pass), so that the ranks finish together instead of the film reduction waiting most of a
// pass for the last one (docs/PERFORMANCE.md). Samples are keyed by their index, so the image does not change.
// Not with the tile guide, whose refreshes come before fixed pass numbers: its passes stay those of one process.
int Dispatcher::TailSplit(int full, int remaining) const {
  if (plan_.tileGuide || remaining >= full * ranks_) return full;
  return std::max(1, std::min(full, (remaining + ranks_ - 1) / ranks_));
}

void Dispatcher::Send(int rank, const WorkReply& reply) {
  TRACER_MPI_CHECK(MPI_Send(&reply, sizeof reply, MPI_BYTE, rank, kReplyTag, comm_));
}

// A rank that takes far longer over a pass than any pass took (a hung GPU, a stopped process) ends the job.
void Dispatcher::Watch() {
  if (plan_.watchdogSeconds <= 0.0) return;
  const double now = clock_.Seconds(), limit = std::max(plan_.watchdogSeconds, 20.0 * longestPass_);
  for (int r = 0; r < ranks_; ++r) {
    const RankState& s = state_[static_cast<size_t>(r)];
    if (!s.busy || now - s.since <= limit) continue;
    char text[256];
    std::snprintf(text, sizeof text,
                  "%s has not finished pass %d after %.0f s (the longest pass took %.2f s; the watchdog allows "
                  "%.0f s, TRACER_MPI_WATCHDOG_SECONDS); ending the job",
                  names_[static_cast<size_t>(r)].c_str(), s.pass, now - s.since, longestPass_, limit);
    abort_(text);
  }
}

}  // namespace tracer::mpi
