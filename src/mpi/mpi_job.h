// @file mpi_job.h: MpiJob, the ranks of an MPI job as a Job: the communicators, the checks that every rank runs the
// same inputs, the scene shared from rank 0, the film sum's groups, and the report of the render per rank.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "film_sum.h"
#include "tracer/host/job.h"
#include "tracer/host/timing.h"

namespace tracer::mpi {

// One rank's line of the report.
struct RankSummary {
  int32_t passes = 0, spp = 0;
  double busySeconds = 0.0;
  double sceneSeconds = 0.0;   // from the end of rank 0's load: when this rank had the scene (rank 0: had sent it)
  double offerSeconds = -1.0;  // when rank 0 offered its device scene, and this rank received the offer; -1: none
  double startSeconds = 0.0;   // and when it began to render
  double renderSeconds = 0.0;  // from then to the end of its render
  double setupSeconds = 0.0, allocateSeconds = 0.0;  // RenderStats's
  char backend[96] = {};
};

// The ranks of the MPI job (MPI is initialised; more than one rank).
class MpiJob final : public Job {
 public:
  MpiJob();
  ~MpiJob() override;

  int Rank() const override { return rank_; }
  int Ranks() const override { return ranks_; }
  int LocalRank() const override { return localRank_; }
  std::string Who(int rank) const;
  std::vector<std::string> Names() const;

  int Agree(int code) override;
  void ShareInts(std::vector<int>& values) override;
  int CheckSameInputs(const std::string& scenePath, int argc, char** argv) override;

  // Rank 0 returns as soon as it starts sending, and renders while its thread sends (SceneSent waits for it).
  // With `deviceScene`, a rank on rank 0's node that can take rank 0's device scene returns once rank 0 offered
  // it (OfferDeviceScene), and receives `data` on a thread meanwhile (WaitForScene waits for it).
  int ShareScene(const std::function<int()>& load, SceneData& data, bool deviceScene) override;
  void OfferDeviceScene(DeviceSceneOffer offer) override;
  const std::vector<unsigned char>& RootDeviceScene() const override { return offer_; }
  void WaitForScene() override {
    if (receiver_.joinable()) receiver_.join();
  }
  void SceneSent() override;
  void PrepareFilm(int width, int height) override;
  // The film sum PrepareFilm made, for a film of `values` values (the render's: nothing changes its size after).
  FilmSum& Film(size_t values);
  // Seconds since rank 0 finished loading (every rank's clock starts as the ranks agree that it did).
  double FrameSeconds() const { return frameClock_.Seconds(); }
  double SceneSeconds() const { return sceneSeconds_; }
  double OfferSeconds() const { return offerSeconds_; }

  std::unique_ptr<PassSchedule> MakeSchedule(const RenderOptions& options, const ProgressFn& bar,
                                             const std::function<int()>& signal) override;
  int Signal() const override { return record.signal; }

  void Report(double writeSeconds) override;
  void ReportThroughput(double samplesPerSecond) override;
  int FinalCode(int code) override;
  [[noreturn]] void Abort(const std::string& message) override;

  // Shared with the schedule: the communicators, and what the last render left for Signal and Report.
  MPI_Comm work = MPI_COMM_NULL, together = MPI_COMM_NULL;
  struct RenderRecord {
    int signal = 0;
    double renderSeconds = 0.0, readSeconds = 0.0, reduceSeconds = 0.0, frameSeconds = 0.0;
    size_t filmBytes = 0;
    std::vector<RankSummary> ranks;  // rank 0 only
  } record;

 private:
  static constexpr int kHostBytes = 64;
  static std::string Bytes(size_t n);
  void SayWhereBoundToOneCore();
  // The scene's transfer (rank 0's sending, or a rank's receiving while it renders) on a thread: its bytes and
  // when it ended; an error ends the job.
  template <typename Transfer>
  std::thread TransferThread(const char* what, Transfer transfer);
  // Rank 0's words on its device scene's offer, for Report.
  std::string OfferNote() const;

  int rank_ = 0, ranks_ = 1, localRank_ = 0;
  MPI_Comm filmNode_ = MPI_COMM_NULL, filmLeaders_ = MPI_COMM_NULL;
  std::unique_ptr<FilmSum> filmSum_;
  std::vector<std::string> hosts_;
  std::unique_ptr<std::streambuf> prefix_;  // a rank's name before each line of std::cerr
  std::streambuf* savedCerr_ = nullptr;
  MPI_Comm scene_ = MPI_COMM_NULL;
  std::thread sender_;     // rank 0: sends the scene
  std::thread receiver_;   // a rank that took rank 0's device scene: receives `data` meanwhile
  bool rootNode_ = false;  // on rank 0's node
  // The device scene: rank 0's takers, whether it offered it, and what keeps it alive; the others' copy of the offer.
  std::vector<int> takers_;
  bool offered_ = true;
  std::shared_ptr<const void> offerKeep_;
  std::vector<unsigned char> offer_;
  double offerSeconds_ = -1.0;  // when rank 0 offered (or this rank received) a device scene; -1: none
  Stopwatch frameClock_;
  double loadSeconds_ = 0.0, sceneSeconds_ = 0.0;
  size_t sceneBytes_ = 0;
  long long pixels_ = 0;
  bool quiet_ = false;
};

}  // namespace tracer::mpi
