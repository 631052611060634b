// @file mpi_driver.cpp: MpiJob: input checks across ranks, the scene broadcast, the rank-0 dispatcher, each rank's
// pass schedule, the film reduction and the per-rank report.
#include "tracer/host/mpi_driver.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher.h"
#include "film_sum.h"
#include "mpi_calls.h"
#include "scene_broadcast.h"
#include "tracer/host/hasher.h"
#include "tracer/host/knobs.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"
#include "tracer/host/version.h"

namespace tracer {
using namespace mpi;  // (the parts of tracer_mpi that have files of their own)
namespace {

// ---- the inputs each rank sees --------------------------------------------------------------------------------
struct Fingerprint {
  uint64_t scene = 0;  // HashBytes of the scene file, where this rank can read it
  int32_t sceneReadable = 0;
  int32_t pad = 0;
  uint64_t args = 0;    // of the command line
  char build[64] = {};  // git describe of the build
};

bool HashFile(const std::string& path, uint64_t& hash) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  Hasher h;
  std::vector<char> buffer(size_t(1) << 20);
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) h.Update(buffer.data(), n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  hash = h.Digest();
  return ok;
}

// Starts each line written to the stream with the rank's name, so that a message of rank 3 says so.
class LinePrefixBuffer : public std::streambuf {
 public:
  LinePrefixBuffer(std::streambuf* out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    if (lineStart_ && out_->sputn(prefix_.data(), static_cast<std::streamsize>(prefix_.size())) < 0)
      return traits_type::eof();
    lineStart_ = c == '\n';
    return out_->sputc(static_cast<char>(c));
  }
  int sync() override { return out_->pubsync(); }

 private:
  std::streambuf* out_;
  std::string prefix_;
  bool lineStart_ = true;
};

// Rank 0's device scene to the ranks that take it, on the scene communicator.
constexpr int kOfferTag = 3;

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

}  // namespace

double WatchdogSeconds() { return knobs::MpiWatchdogSeconds(); }

namespace {

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

// The ranks of the MPI job (MPI is initialised; more than one rank).
class MpiJob final : public Job {
 public:
  MpiJob() {
    TRACER_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    TRACER_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks_));
    // Requests and replies go through `work` (rank 0's dispatcher thread and every main thread), the steps
    // all ranks take together through `together` (main threads only), the scene through `scene` (rank 0's
    // sending thread, the other ranks' main threads), so that none matches another's messages.
    TRACER_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &work));
    TRACER_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &together));
    TRACER_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &scene_));
    MPI_Comm node;
    TRACER_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    TRACER_MPI_CHECK(MPI_Comm_rank(node, &localRank_));
    // The film sum's groups (FilmSum): the nodes; under TRACER_MPI_SHARED_FILM=K, groups of K consecutive ranks
    // of a node (0 or 1: every rank alone), rank 0's setting, so that every rank makes the same calls. And the
    // groups' first ranks, world rank 0 first.
    const int group = BcastInt(knobs::MpiSharedFilm(), MPI_COMM_WORLD);
    if (group == 0)
      TRACER_MPI_CHECK(MPI_Comm_dup(node, &filmNode_));
    else
      TRACER_MPI_CHECK(MPI_Comm_split(node, localRank_ / group, rank_, &filmNode_));
    int lowest = rank_;  // the node's lowest world rank: 0 on rank 0's node
    TRACER_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node));
    rootNode_ = lowest == 0;
    TRACER_MPI_CHECK(MPI_Comm_free(&node));
    int filmRank = 0;
    TRACER_MPI_CHECK(MPI_Comm_rank(filmNode_, &filmRank));
    TRACER_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, filmRank == 0 ? 0 : MPI_UNDEFINED, rank_, &filmLeaders_));
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    TRACER_MPI_CHECK(MPI_Get_processor_name(host, &length));
    std::vector<char> hosts(static_cast<size_t>(ranks_) * kHostBytes, 0);
    std::snprintf(&hosts[static_cast<size_t>(rank_) * kHostBytes], kHostBytes, "%s", host);
    TRACER_MPI_CHECK(
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, hosts.data(), kHostBytes, MPI_CHAR, MPI_COMM_WORLD));
    for (int r = 0; r < ranks_; ++r) hosts_.emplace_back(&hosts[static_cast<size_t>(r) * kHostBytes]);
    SayWhereBoundToOneCore();
    if (rank_ != 0) {
      prefix_ = std::make_unique<LinePrefixBuffer>(std::cerr.rdbuf(), Who(rank_) + ": ");
      savedCerr_ = std::cerr.rdbuf(prefix_.get());
    }
  }
  ~MpiJob() override {
    SceneSent();  // (the commands wait for it while the scene exists; this is for a path that did not)
    if (savedCerr_) std::cerr.rdbuf(savedCerr_);
    if (filmSum_) filmSum_->Free();  // (every rank comes here, unless MPI_Abort ended the job)
    filmSum_.reset();
    MPI_Comm_free(&filmNode_);
    if (filmLeaders_ != MPI_COMM_NULL) MPI_Comm_free(&filmLeaders_);
    MPI_Comm_free(&work);
    MPI_Comm_free(&together);
    MPI_Comm_free(&scene_);
    MPI_Finalize();
  }

  // Open MPI binds each rank to one core when it starts two (its default for up to 2 ranks): the threads of a rank
  // (rank 0's scene sender, a receiver's hashing, the film sum, the CPU renderer) then share that core, and 2 GPUs
  // started their passes 0.03 s later on 4x H100. Rank 0 says so once, with the way out.
  void SayWhereBoundToOneCore() {
    const int cores = ThreadPool::CoresAvailable();
    std::vector<int> all(IsRoot() ? static_cast<size_t>(ranks_) : 1);
    TRACER_MPI_CHECK(MPI_Gather(&cores, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (!IsRoot() || std::thread::hardware_concurrency() <= 1) return;
    std::string bound;
    int count = 0;
    for (int r = 0; r < ranks_; ++r)
      if (all[static_cast<size_t>(r)] == 1) bound += (count++ ? ", " : "") + std::to_string(r);
    if (count)
      std::fprintf(stderr,
                   "tracer: note: mpirun bound %s %s to one core each, which all of a rank's threads share; start it "
                   "with --bind-to none (or give each rank several cores: --map-by slot:PE=N)\n",
                   count == 1 ? "rank" : "ranks", bound.c_str());
  }

  int Rank() const override { return rank_; }
  int Ranks() const override { return ranks_; }
  int LocalRank() const override { return localRank_; }
  std::string Who(int rank) const {
    return "rank " + std::to_string(rank) + " (" + hosts_[static_cast<size_t>(rank)] + ")";
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (int r = 0; r < ranks_; ++r) names.push_back(Who(r));
    return names;
  }

  int Agree(int code) override {
    std::vector<int> codes(IsRoot() ? static_cast<size_t>(ranks_) : 1);
    TRACER_MPI_CHECK(MPI_Gather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, 0, together));
    int verdict = code;
    if (IsRoot() && code == kContinue)
      for (int r = 1; r < ranks_; ++r)
        if (codes[static_cast<size_t>(r)] != kContinue) {
          std::fprintf(stderr, "tracer: error: %s cannot go on (exit code %d)\n", Who(r).c_str(),
                       codes[static_cast<size_t>(r)]);
          verdict = codes[static_cast<size_t>(r)];
          break;
        }
    return BcastInt(verdict, together);
  }

  int CheckSameInputs(const std::string& scenePath, int argc, char** argv) override {
    Fingerprint mine;
    mine.sceneReadable = HashFile(scenePath, mine.scene) ? 1 : 0;
    Hasher args;
    for (int i = 0; i < argc; ++i) args.Update(argv[i], std::strlen(argv[i]) + 1);
    mine.args = args.Digest();
    std::snprintf(mine.build, sizeof mine.build, "%s", VersionString().c_str());
    std::vector<Fingerprint> all(IsRoot() ? static_cast<size_t>(ranks_) : 1);
    TRACER_MPI_CHECK(MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, together));
    int verdict = kContinue;
    for (int r = 1; IsRoot() && r < ranks_; ++r) {
      const Fingerprint& f = all[static_cast<size_t>(r)];
      const std::string who = Who(r);
      if (std::strncmp(f.build, mine.build, sizeof f.build) != 0)
        std::fprintf(stderr,
                     "tracer: error: %s runs another tracer build (%s) than rank 0 (%s); install one build "
                     "on every node\n",
                     who.c_str(), f.build, mine.build);
      else if (f.args != mine.args)
        std::fprintf(stderr,
                     "tracer: error: %s was started with other arguments than rank 0; give every rank the "
                     "same command line\n",
                     who.c_str());
      else if (f.sceneReadable && mine.sceneReadable && f.scene != mine.scene)
        std::fprintf(stderr,
                     "tracer: error: %s reads another %s than rank 0 (content hash %016llx, rank 0's %016llx); "
                     "give every node the same file, or none (rank 0 sends the scene to the others)\n",
                     who.c_str(), scenePath.c_str(), static_cast<unsigned long long>(f.scene),
                     static_cast<unsigned long long>(mine.scene));
      else
        continue;
      verdict = 1;
    }
    return BcastInt(verdict, together);
  }

  // Rank 0 returns as soon as it starts sending, and renders while its thread sends (SceneSent waits for it).
  // With `deviceScene`, a rank on rank 0's node that can take rank 0's device scene returns once rank 0 offered
  // it (OfferDeviceScene), and receives `data` on a thread meanwhile (WaitForScene waits for it).
  int ShareScene(const std::function<int()>& load, SceneData& data, bool deviceScene) override {
    int code = kContinue;
    if (IsRoot()) {
      const Stopwatch clock;
      try {
        code = load();
      } catch (const std::exception& e) {
        std::cerr << "tracer: error: " << e.what() << "\n";
        code = 1;
      }
      loadSeconds_ = clock.Seconds();
    }
    code = BcastInt(code, together);
    if (code != kContinue) return code;
    // Who offers its device scene (rank 0's flag) and who takes it (the others').
    // TRACER_MPI_DEVICE_SCENE=0 (rank 0's): every rank receives the scene from the host (the naive twin).
    const bool allowed = !IsRoot() || !knobs::MpiDeviceSceneOff();
    const int mine = deviceScene && rootNode_ && allowed ? 1 : 0;
    std::vector<int> flags(static_cast<size_t>(ranks_));
    TRACER_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, together));
    frameClock_.Restart();
    if (IsRoot()) {
      for (int r = 1; r < ranks_; ++r)
        if (flags[0] && flags[static_cast<size_t>(r)]) takers_.push_back(r);
      offered_ = false;
      sender_ = TransferThread("sending the scene", [this, &data] { return SendScene(data, scene_); });
      return kContinue;
    }
    if (!flags[0] || !mine) {
      sceneBytes_ = ReceiveScene(data, scene_);
      sceneSeconds_ = frameClock_.Seconds();
      return kContinue;
    }
    receiver_ = TransferThread("receiving the scene", [this, &data] { return ReceiveScene(data, scene_); });
    try {  // (not unwinding past `data`, which the thread fills)
      MPI_Message message;
      MPI_Status status;
      TRACER_MPI_CHECK(MPI_Mprobe(0, kOfferTag, scene_, &message, &status));
      int bytes = 0;
      TRACER_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
      offer_.resize(static_cast<size_t>(bytes));
      TRACER_MPI_CHECK(MPI_Mrecv(offer_.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE));
    } catch (const std::exception& e) {
      Abort(std::string("receiving rank 0's device scene: ") + e.what());
    }
    if (offer_.empty())
      WaitForScene();  // rank 0 renders without a device scene
    else
      offerSeconds_ = frameClock_.Seconds();
    return kContinue;
  }
  // The scene's transfer (rank 0's sending, or a rank's receiving while it renders) on a thread: its bytes and
  // when it ended; an error ends the job.
  template <typename Transfer>
  std::thread TransferThread(const char* what, Transfer transfer) {
    return std::thread([this, what, transfer] {
      try {
        sceneBytes_ = transfer();
        sceneSeconds_ = frameClock_.Seconds();
      } catch (const std::exception& e) {
        Abort(std::string(what) + ": " + e.what());
      }
    });
  }
  void OfferDeviceScene(DeviceSceneOffer offer) override {
    if (!IsRoot() || offered_) return;
    offered_ = true;
    for (int r : takers_)
      TRACER_MPI_CHECK(
          MPI_Send(offer.bytes.data(), static_cast<int>(offer.bytes.size()), MPI_BYTE, r, kOfferTag, scene_));
    if (!takers_.empty() && !offer.bytes.empty()) offerSeconds_ = frameClock_.Seconds();
    offerKeep_ = std::move(offer.keepAlive);
  }
  const std::vector<unsigned char>& RootDeviceScene() const override { return offer_; }
  void WaitForScene() override {
    if (receiver_.joinable()) receiver_.join();
  }
  void SceneSent() override {
    OfferDeviceScene({});  // (the takers wait for an offer, empty if rank 0 made none)
    if (sender_.joinable()) sender_.join();
    offerKeep_.reset();  // every rank has its copy: they took it before their first pass
    WaitForScene();
  }
  void PrepareFilm(int width, int height) override {
    filmSum_ = std::make_unique<FilmSum>(filmNode_, filmLeaders_, static_cast<size_t>(width) * height * 3);
  }
  // The film sum PrepareFilm made, for a film of `values` values (the render's: nothing changes its size after).
  FilmSum& Film(size_t values) {
    if (!filmSum_ || filmSum_->Values() != values)
      throw std::logic_error("an MPI render's film sum was not prepared for its film (Job::PrepareFilm)");
    return *filmSum_;
  }
  // Seconds since rank 0 finished loading (every rank's clock starts as the ranks agree that it did).
  double FrameSeconds() const { return frameClock_.Seconds(); }
  double SceneSeconds() const { return sceneSeconds_; }
  double OfferSeconds() const { return offerSeconds_; }

  std::unique_ptr<PassSchedule> MakeSchedule(const RenderOptions& options, const ProgressFn& bar,
                                             const std::function<int()>& signal) override {
    pixels_ = static_cast<long long>(options.width) * options.height;
    quiet_ = options.quiet;
    return std::make_unique<MpiPassSchedule>(*this, options, bar, signal);
  }
  int Signal() const override { return record.signal; }

  void Report(double writeSeconds) override {
    if (!IsRoot() || quiet_) return;
    int passes = 0, spp = 0;
    for (const RankSummary& s : record.ranks) passes += s.passes, spp += s.spp;
    std::fprintf(
        stderr,
        "mpi: %d ranks: rank 0 loaded and built in %.2fs; scene broadcast %.3fs (%s, rank 0 rendering "
        "meanwhile)%s; render %.2fs (%d passes, %d spp); film readback %.3fs, reduction %.3fs (%s, %s); frame "
        "%.3fs (from the end of the build to the summed film); write %.3fs\n",
        ranks_, loadSeconds_, sceneSeconds_, Bytes(sceneBytes_).c_str(), OfferNote().c_str(), record.renderSeconds,
        passes, spp, record.readSeconds, record.reduceSeconds, Bytes(record.filmBytes).c_str(),
        filmSum_ && filmSum_->Ranks() > 1 ? "summed in shared memory on each node" : "MPI_Reduce over the ranks",
        record.frameSeconds, writeSeconds);
    for (int r = 0; r < static_cast<int>(record.ranks.size()); ++r) {
      const RankSummary& s = record.ranks[static_cast<size_t>(r)];
      char scene[128] = "";
      if (r > 0 && s.offerSeconds >= 0.0)
        std::snprintf(scene, sizeof scene, " (rank 0's device scene offered at %.3fs, host copy received at %.3fs)",
                      s.offerSeconds, s.sceneSeconds);
      else if (r > 0)
        std::snprintf(scene, sizeof scene, " (scene received at %.3fs)", s.sceneSeconds);
      std::fprintf(stderr,
                   "  %s, %s: rendering from %.3fs%s (set-up %.3fs, path pool and film %.3fs), %d passes, %d spp, "
                   "busy %.2fs (%.0f%%), %.2f M samples/s\n",
                   Who(r).c_str(), s.backend, s.startSeconds, scene, s.setupSeconds, s.allocateSeconds, s.passes, s.spp,
                   s.busySeconds, 100.0 * s.busySeconds / std::max(s.renderSeconds, 1e-9),
                   static_cast<double>(pixels_) * s.spp / std::max(s.busySeconds, 1e-9) / 1e6);
    }
  }

  // Rank 0's words on its device scene's offer, for Report.
  std::string OfferNote() const {
    if (offerSeconds_ < 0.0) return "";
    char text[128];
    std::snprintf(text, sizeof text, ", its device scene offered at %.3fs to %zu rank%s of its node", offerSeconds_,
                  takers_.size(), takers_.size() == 1 ? "" : "s");
    return text;
  }

  void ReportThroughput(double samplesPerSecond) override {
    std::vector<double> all(IsRoot() ? static_cast<size_t>(ranks_) : 1);
    TRACER_MPI_CHECK(MPI_Gather(&samplesPerSecond, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, together));
    if (!IsRoot()) return;
    double total = 0.0;
    std::printf("\nscene broadcast %.3fs (%s), before the measurement\n", sceneSeconds_, Bytes(sceneBytes_).c_str());
    std::printf(
        "per rank (every rank ran the whole measurement at the same time; ranks that share a device slow each "
        "other down):\n");
    for (int r = 0; r < ranks_; ++r) {
      std::printf("  %-40s %10.1f M samples/s\n", Who(r).c_str(), all[static_cast<size_t>(r)] / 1e6);
      total += all[static_cast<size_t>(r)];
    }
    std::printf("  %-40s %10.1f M samples/s\n", "total", total / 1e6);
  }

  int FinalCode(int code) override { return BcastInt(code, together); }

  [[noreturn]] void Abort(const std::string& message) override {
    std::fprintf(stderr, "tracer: error: %s: %s\n", Who(rank_).c_str(), message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

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
  static std::string Bytes(size_t n) {
    char text[32];
    if (n < 10u << 10)
      std::snprintf(text, sizeof text, "%zu B", n);
    else if (n < 10u << 20)
      std::snprintf(text, sizeof text, "%.1f KiB", n / 1024.0);
    else
      std::snprintf(text, sizeof text, "%.1f MiB", n / 1048576.0);
    return text;
  }

  int rank_ = 0, ranks_ = 1, localRank_ = 0;
  MPI_Comm filmNode_ = MPI_COMM_NULL, filmLeaders_ = MPI_COMM_NULL;
  std::unique_ptr<FilmSum> filmSum_;
  std::vector<std::string> hosts_;
  std::unique_ptr<LinePrefixBuffer> prefix_;
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

MpiPassSchedule::~MpiPassSchedule() {
  // Unwinding from an error (which ends in Abort) may leave the dispatcher waiting for requests: not joined.
  if (thread_.joinable()) {
    if (finished_)
      thread_.join();
    else
      thread_.detach();
  }
}

// Rank 0 starts the dispatcher before its backend allocates (the other ranks have often allocated already and
// ask for work: on 4x H100 they waited 0.02 s for rank 0's allocation). A backend that runs out of memory while
// allocating hands over to another (the CPU), which renders passes of the first one's size then: the dispatcher
// is started once. The passes' size decides how the work is cut; it changes the image only with the tile guide,
// whose refreshes come before fixed pass numbers (the image is then unbiased, but not one process's CPU image).
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

// One rank alone under mpirun: renders as without it, and finalises MPI at the end.
class SingleRankJob final : public Job {
 public:
  ~SingleRankJob() override { MPI_Finalize(); }
};

}  // namespace

std::unique_ptr<Job> StartMpiJob(int& argc, char**& argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "tracer: error: MPI_Init_thread failed\n");
    return nullptr;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks == 1) return std::make_unique<SingleRankJob>();
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::fprintf(stderr,
                   "tracer: error: this MPI library provides thread level %d, not MPI_THREAD_MULTIPLE, which the "
                   "dispatcher thread of rank 0 needs\n",
                   provided);
    MPI_Finalize();
    return nullptr;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  try {
    return std::make_unique<MpiJob>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tracer: error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return nullptr;
  }
}

}  // namespace tracer
