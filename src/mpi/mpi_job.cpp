// @file mpi_job.cpp: MpiJob (mpi_job.h): the communicators and the film sum's groups, the ranks' agreement on
// their inputs, the scene shared from rank 0 (the broadcast on a thread, the device scene's offer), the report.
#include "mpi_job.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "mpi_calls.h"
#include "mpi_pass_schedule.h"
#include "scene_broadcast.h"
#include "tracer/host/hasher.h"
#include "tracer/host/knobs.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/version.h"

namespace tracer::mpi {
namespace {

// Rank 0's device scene to the ranks that take it, on the scene communicator.
constexpr int kOfferTag = 3;

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

}  // namespace

MpiJob::MpiJob() {
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

MpiJob::~MpiJob() {
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
// (rank 0's scene sender, a receiver's hashing, the film sum, the CPU renderer) then share that core, which delays
// the ranks' first passes (docs/PERFORMANCE.md). Rank 0 says so once, with the way out.
void MpiJob::SayWhereBoundToOneCore() {
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

std::string MpiJob::Who(int rank) const {
  return "rank " + std::to_string(rank) + " (" + hosts_[static_cast<size_t>(rank)] + ")";
}

std::vector<std::string> MpiJob::Names() const {
  std::vector<std::string> names;
  for (int r = 0; r < ranks_; ++r) names.push_back(Who(r));
  return names;
}

void MpiJob::ShareInts(std::vector<int>& values) {
  TRACER_MPI_CHECK(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_INT, 0, together));
}

int MpiJob::Agree(int code) {
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

int MpiJob::CheckSameInputs(const std::string& scenePath, int argc, char** argv) {
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

template <typename Transfer>
std::thread MpiJob::TransferThread(const char* what, Transfer transfer) {
  return std::thread([this, what, transfer] {
    try {
      sceneBytes_ = transfer();
      sceneSeconds_ = frameClock_.Seconds();
    } catch (const std::exception& e) {
      Abort(std::string(what) + ": " + e.what());
    }
  });
}

int MpiJob::ShareScene(const std::function<int()>& load, SceneData& data, bool deviceScene) {
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

void MpiJob::OfferDeviceScene(DeviceSceneOffer offer) {
  if (!IsRoot() || offered_) return;
  offered_ = true;
  for (int r : takers_)
    TRACER_MPI_CHECK(
        MPI_Send(offer.bytes.data(), static_cast<int>(offer.bytes.size()), MPI_BYTE, r, kOfferTag, scene_));
  if (!takers_.empty() && !offer.bytes.empty()) offerSeconds_ = frameClock_.Seconds();
  offerKeep_ = std::move(offer.keepAlive);
}

void MpiJob::SceneSent() {
  OfferDeviceScene({});  // (the takers wait for an offer, empty if rank 0 made none)
  if (sender_.joinable()) sender_.join();
  offerKeep_.reset();  // every rank has its copy: they took it before their first pass
  WaitForScene();
}

void MpiJob::PrepareFilm(int width, int height) {
  filmSum_ = std::make_unique<FilmSum>(filmNode_, filmLeaders_, static_cast<size_t>(width) * height * 3);
}

FilmSum& MpiJob::Film(size_t values) {
  if (!filmSum_ || filmSum_->Values() != values)
    throw std::logic_error("an MPI render's film sum was not prepared for its film (Job::PrepareFilm)");
  return *filmSum_;
}

std::unique_ptr<PassSchedule> MpiJob::MakeSchedule(const RenderOptions& options, const ProgressFn& bar,
                                                   const std::function<int()>& signal) {
  pixels_ = static_cast<long long>(options.width) * options.height;
  quiet_ = options.quiet;
  return std::make_unique<MpiPassSchedule>(*this, options, bar, signal);
}

void MpiJob::Report(double writeSeconds) {
  if (!IsRoot() || quiet_) return;
  int passes = 0, spp = 0;
  for (const RankSummary& s : record.ranks) passes += s.passes, spp += s.spp;
  std::fprintf(stderr,
               "mpi: %d ranks: rank 0 loaded and built in %.2fs; scene broadcast %.3fs (%s, rank 0 rendering "
               "meanwhile)%s; render %.2fs (%d passes, %d spp); film readback %.3fs, reduction %.3fs (%s, %s); frame "
               "%.3fs (from the end of the build to the summed film); write %.3fs\n",
               ranks_, loadSeconds_, sceneSeconds_, Bytes(sceneBytes_).c_str(), OfferNote().c_str(),
               record.renderSeconds, passes, spp, record.readSeconds, record.reduceSeconds,
               Bytes(record.filmBytes).c_str(),
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

std::string MpiJob::OfferNote() const {
  if (offerSeconds_ < 0.0) return "";
  char text[128];
  std::snprintf(text, sizeof text, ", its device scene offered at %.3fs to %zu rank%s of its node", offerSeconds_,
                takers_.size(), takers_.size() == 1 ? "" : "s");
  return text;
}

void MpiJob::ReportThroughput(double samplesPerSecond) {
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

int MpiJob::FinalCode(int code) { return BcastInt(code, together); }

void MpiJob::Abort(const std::string& message) {
  std::fprintf(stderr, "tracer: error: %s: %s\n", Who(rank_).c_str(), message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

std::string MpiJob::Bytes(size_t n) {
  char text[32];
  if (n < 10u << 10)
    std::snprintf(text, sizeof text, "%zu B", n);
  else if (n < 10u << 20)
    std::snprintf(text, sizeof text, "%.1f KiB", n / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", n / 1048576.0);
  return text;
}

}  // namespace tracer::mpi
