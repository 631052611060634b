// @file mpi_pass_schedule.cpp: MpiPassSchedule (mpi_pass_schedule.h): rank 0's dispatcher thread, each rank's
// requests for its next step, the tile guide's statistics shared out, the film and the statistics summed on rank 0.
#include "mpi_pass_schedule.h"

#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include "mpi_calls.h"
#include "mpi_job.h"
#include "tracer/host/film.h"
#include "tracer/host/mpi_driver.h"

namespace tracer::mpi {

MpiPassSchedule::~MpiPassSchedule() {
  // Unwinding from an error (which ends in Abort) may leave the dispatcher waiting for requests: not joined.
  if (thread_.joinable()) {
    if (finished_)
      thread_.join();
    else
      thread_.detach();
  }
}

// Rank 0 starts the dispatcher before its backend allocates, since the other ranks have often allocated already and
// ask for work (docs/PERFORMANCE.md). A backend that runs out of memory while allocating hands over to another (the
// CPU), which renders passes of the first one's size then: the dispatcher is started once. The passes' size decides
// how the work is cut; it changes the image only with the tile guide, whose refreshes come before fixed pass numbers
// (the image is then unbiased, but not one process's CPU image).
void MpiPassSchedule::Prepare(const Backend& backend, long long pool) {
  if (!job_.IsRoot() || dispatcher_) return;
  DispatchPlan plan;
  plan.spp = opt_.spp;
  plan.startSpp = opt_.resume ? opt_.resume->sppDone : 0;
  plan.pixels = static_cast<long long>(opt_.width) * opt_.height;
  plan.pool = pool;
  plan.tileGuide = backend.HasTileGuide();
  plan.checkNan = opt_.checkNan;
  plan.checkpoint = static_cast<bool>(opt_.checkpoint);
  plan.timeLimit = opt_.timeLimit;
  plan.checkpointSeconds = opt_.checkpointSeconds;
  plan.watchdogSeconds = WatchdogSeconds();
  plan.bar = bar_;
  dispatcher_ = std::make_unique<Dispatcher>(job_.work, job_.Names(), plan,
                                             [this](const std::string& message) { job_.Abort(message); });
  thread_ = std::thread([this] { dispatcher_->Run(); });
}

void MpiPassSchedule::Begin(const Backend& backend, long long pool) {
  // A second render on one schedule (a GPU out of memory mid-render handing over to the CPU) would render passes
  // the dispatcher already counted as handed out: an error, which ends the job.
  if (begun_) throw std::logic_error("an MPI rank cannot restart its render on another backend");
  begun_ = true;
  backendName_ = backend.Name();
  startSeconds_ = job_.FrameSeconds();
  renderClock_.Restart();
  Prepare(backend, pool);  // (a caller that did not)
}

PassStep MpiPassSchedule::Next(const PassReport& last) {
  if (last.spp > 0) {
    busySeconds_ += passClock_.Seconds();
    ++passes_;
    spp_ += last.spp;
  }
  WorkRequest request;
  request.spp = last.spp;
  request.signal = signal_ ? signal_() : 0;
  request.extensionRays = last.stats->extensionRays;
  request.shadowRays = last.stats->shadowRays;
  request.firstBad = last.firstBad;
  TRACER_MPI_CHECK(MPI_Send(&request, sizeof request, MPI_BYTE, 0, kRequestTag, job_.work));
  WorkReply reply;
  MPI_Request pending;
  TRACER_MPI_CHECK(MPI_Irecv(&reply, sizeof reply, MPI_BYTE, 0, kReplyTag, job_.work, &pending));
  WaitPolitely(pending);

  PassStep step;
  step.kind = static_cast<PassStep::Kind>(reply.kind);
  step.refresh = reply.refresh;
  step.sampleBase = reply.sampleBase;
  step.spp = reply.spp;
  if (step.kind == PassStep::Kind::kCheckpoint || step.kind == PassStep::Kind::kFinish) sppDone_ = reply.sppDone;
  if (step.kind == PassStep::Kind::kPass) passClock_.Restart();
  if (step.kind == PassStep::Kind::kFinish) {
    job_.record.signal = reply.signal;
    job_.record.renderSeconds = renderClock_.Seconds();
    if (thread_.joinable()) thread_.join();  // rank 0: the dispatcher has told every rank
    finished_ = true;
  }
  return step;
}

TileStatsShare MpiPassSchedule::GuideShare() {
  TileStatsShare share;
  share.part = job_.Rank();
  share.parts = job_.Ranks();
  MPI_Comm comm = job_.together;
  share.combine = [comm](std::vector<float>& values) {
    TRACER_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_FLOAT, MPI_SUM, comm));
  };
  return share;
}

bool MpiPassSchedule::CombineFilm(Backend& backend, HostFilm& film) {
  const bool root = job_.IsRoot();
  FilmSum& sum = job_.Film(film.sum.size());
  sum.Ready();
  Stopwatch clock;
  backend.ReadFilm(sum.Mine());
  job_.record.readSeconds = clock.Seconds();
  clock.Restart();
  sum.Sum(film.sum.data(), root);
  if (!film.odd.empty()) {  // --denoise's odd samples, through the same window (every rank sized it alike)
    backend.ReadOddFilm(sum.Mine());
    sum.Sum(film.odd.data(), root);
  }
  ReduceSum(&film.dropped, 1, root, job_.together);
  film.sppDone = sppDone_;
  job_.record.reduceSeconds = clock.Seconds();
  job_.record.frameSeconds = job_.FrameSeconds();
  job_.record.filmBytes = film.sum.size() * sizeof(film.sum[0]);
  return root;
}

void MpiPassSchedule::CombineStats(RenderStats& st, unsigned long long& firstBad) {
  const bool root = job_.IsRoot();
  job_.WaitForScene();  // (the report says when the host copy arrived; rank 0's sender does not need this rank)
  unsigned long long sums[4] = {st.extensionRays, st.shadowRays, st.primaryRays, st.droppedSamples};
  ReduceSum(sums, 4, root, job_.together);
  TRACER_MPI_CHECK(
      MPI_Reduce(root ? MPI_IN_PLACE : &firstBad, &firstBad, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, 0, job_.together));
  RankSummary mine;
  mine.passes = passes_;
  mine.spp = spp_;
  mine.busySeconds = busySeconds_;
  mine.sceneSeconds = job_.SceneSeconds();
  mine.offerSeconds = job_.OfferSeconds();
  mine.startSeconds = startSeconds_;
  mine.renderSeconds = job_.record.renderSeconds;
  mine.setupSeconds = st.setupSeconds;
  mine.allocateSeconds = st.allocateSeconds;
  std::snprintf(mine.backend, sizeof mine.backend, "%s", backendName_.c_str());
  std::vector<RankSummary> all(root ? static_cast<size_t>(job_.Ranks()) : 1);
  TRACER_MPI_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, job_.together));
  if (!root) return;
  st.extensionRays = sums[0];
  st.shadowRays = sums[1];
  st.primaryRays = sums[2];
  st.droppedSamples = sums[3];
  job_.record.ranks = all;
}

}  // namespace tracer::mpi
