// @file mpi_test.cpp: one frame over MPI ranks, from the outside: `mpirun -np N tracer` on the CPU backend against one
// process (byte for byte, also with tile-guided light selection), the stop conditions (--time, signals, checkpoints and
// resume), faults (a rank killed, failing or stopped) and inputs that differ between ranks. Built only when CMake
// found MPI and its launcher (TRACER_MPIEXEC); the launcher flags are Open MPI's, as CI installs it.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_util.h"
#include "test_util.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/image_io.h"

namespace tracer {
namespace {

using test::CommandResult;
using test::Contains;
using test::Count;
using test::FileExists;
using test::Launcher;
using test::MakeTempDir;
using test::Mpi;
using test::Mpmd;
using test::ReadFile;
using test::RunJob;
using test::Scene;
using test::Seconds;
using test::Spawned;
using test::SppFromMessage;

// The ranks of the job that the launcher `launcher` started: rank -> pid, from each child's environment.
std::map<int, pid_t> RankPids(pid_t launcher) {
  std::map<int, pid_t> ranks;
  DIR* proc = opendir("/proc");
  if (!proc) return ranks;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    pid_t parent = 0;
    if (!(fields >> state >> parent) || parent != launcher) continue;
    const std::string env = ReadFile("/proc/" + std::to_string(pid) + "/environ");
    const std::string key = std::string("OMPI_COMM_WORLD_RANK=");
    for (size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
      if (env.compare(at, key.size(), key) == 0) ranks[std::atoi(env.c_str() + at + key.size())] = pid;
      if (env.find('\0', at) == std::string::npos) break;
    }
  }
  closedir(proc);
  return ranks;
}

// Waits until the launcher has started `count` ranks; empty after `seconds`.
std::map<int, pid_t> WaitForRanks(pid_t launcher, size_t count, double seconds) {
  const auto t0 = test::Clock::now();
  while (Seconds(t0) < seconds) {
    std::map<int, pid_t> ranks = RankPids(launcher);
    if (ranks.size() == count) return ranks;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

// Three ranks rendering the Cornell box for ever (10^8 spp) into `out`, with the launcher's `options` and the
// tracer's `more` flags, half a second into the render; `ranks` is empty when they did not start.
struct LongJob {
  Spawned process;
  std::map<int, pid_t> ranks;
};
LongJob StartLongJob(const std::string& options, const std::string& out, const std::string& more = "") {
  LongJob job;
  job.process = test::SpawnCommand(Launcher() + " " + options + " -np 3 " + TRACER_EXE + " " + Scene("cornell.obj") +
                                       " --backend cpu --width 32 --height 32 --spp 100000000 -o " + out + more,
                                   out + ".log");
  if (job.process.WaitForLog("rendering " + Scene("cornell.obj"), 30)) job.ranks = WaitForRanks(job.process.pid, 3, 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return job;
}

// A small Cornell box in 8 passes (a pool of 1024 paths: 2 spp per pass at 64x48), so that the ranks share them.
const char kCornellArgs[] = " --backend cpu --width 64 --height 48 --spp 16 --seed 7 --paths-in-flight 1024";

// ================================ one image, byte for byte ================================

TEST(Mpi, TwoAndThreeRanksRenderTheImageOfOneProcessByteForByte) {
  const std::string dir = MakeTempDir(), base = Scene("cornell.obj") + kCornellArgs;
  CommandResult one = test::RunTracer(base + " -o " + dir + "/one.pfm");
  ASSERT_EQ(one.exitCode, 0) << one.output;
  for (int ranks : {2, 3}) {
    const std::string out = dir + "/mpi" + std::to_string(ranks) + ".pfm";
    CommandResult r = RunJob(Mpi(ranks, base + " -o " + out));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(ReadFile(out), ReadFile(dir + "/one.pfm")) << ranks << " ranks";
    // Rank 0 reports the job, with a line per rank; one summary, one image.
    EXPECT_TRUE(Contains(r.output, "mpi: " + std::to_string(ranks) + " ranks: ")) << r.output;
    // Seven passes of 2 spp, then the tail split so the ranks finish together: the last 2 spp as two 1-spp passes
    // (the split does not change the image: samples are keyed by index).
    EXPECT_TRUE(Contains(r.output, "render ") && Contains(r.output, "(9 passes, 16 spp)")) << r.output;
    for (int k = 0; k < ranks; ++k) EXPECT_TRUE(Contains(r.output, "  rank " + std::to_string(k) + " (")) << r.output;
    EXPECT_EQ(Count(r.output, "rendered on " + std::to_string(ranks) + " MPI ranks: 16 spp"), 1u) << r.output;
  }
  // The PNG (tone-mapped from the same film) too.
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/one.png").exitCode, 0);
  ASSERT_EQ(RunJob(Mpi(3, base + " -o " + dir + "/mpi.png")).exitCode, 0);
  EXPECT_EQ(ReadFile(dir + "/mpi.png"), ReadFile(dir + "/one.png"));
  // The comparison sees a different seed, and one pass (2 spp) fewer.
  ASSERT_EQ(test::RunTracer(base + " --seed 8 -o " + dir + "/seed8.pfm").exitCode, 0);
  ASSERT_EQ(test::RunTracer(base + " --spp 14 -o " + dir + "/spp14.pfm").exitCode, 0);
  EXPECT_NE(ReadFile(dir + "/mpi2.pfm"), ReadFile(dir + "/seed8.pfm"));
  EXPECT_NE(ReadFile(dir + "/mpi2.pfm"), ReadFile(dir + "/spp14.pfm"));
}

// --denoise sums the odd samples' half-buffer over the ranks too: the denoised image (and the raw one beside it) is
// one process's, byte for byte, also when the ranks sum through MPI_Reduce alone (TRACER_MPI_SHARED_FILM=0).
TEST(Mpi, DenoisedImageIsOneProcessesByteForByte) {
  const std::string dir = MakeTempDir(), base = Scene("cornell.obj") + kCornellArgs + " --denoise --aov noisy";
  CommandResult one = test::RunTracer(base + " -o " + dir + "/one.pfm");
  ASSERT_EQ(one.exitCode, 0) << one.output;
  for (const char* env : {"", "env TRACER_MPI_SHARED_FILM=0 "}) {
    const std::string out = dir + "/mpi" + (env[0] ? "-reduce" : "") + ".pfm";
    CommandResult r = RunJob(std::string(env) + Mpi(2, base + " -o " + out));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(ReadFile(out), ReadFile(dir + "/one.pfm")) << env;
    EXPECT_EQ(ReadFile(dir + "/mpi" + (env[0] ? "-reduce" : "") + ".noisy.pfm"), ReadFile(dir + "/one.noisy.pfm"));
  }
  test::RemoveTree(dir);
}

// The ranks of a node sum their films in shared memory, each rank one slice of the film (a 321x241 film is 232,083
// values: slices of 116,041 and 116,042, or 77,361 each, so the slices' rounding is tested); between nodes the sums
// go through MPI_Reduce 128K values (1 MiB) at a time, a full chunk and a part here. TRACER_MPI_SHARED_FILM=0 makes
// every rank a node of its own, so that the second way runs on one machine too, and =2 with 5 ranks makes groups
// {0, 1}, {2, 3}, {4}: both ways in one job, as on several nodes of several ranks.
// A pbrt-v4 scene's render settings are rank 0's to read: every rank renders the size and samples its file asks
// for, and the image is one process's.
TEST(Mpi, PbrtSceneDefaultsReachEveryRank) {
  const std::string dir = MakeTempDir(), scene = dir + "/sky.pbrt";
  {
    std::ofstream f(scene);
    f << "LookAt 0 2 6  0 0 0  0 1 0\nCamera \"perspective\" \"float fov\" [40]\n"
         "Film \"rgb\" \"integer xresolution\" [40] \"integer yresolution\" [30]\n"
         "Sampler \"independent\" \"integer pixelsamples\" [4]\nWorldBegin\n"
         "LightSource \"infinite\" \"rgb L\" [0.5 0.6 0.7]\n"
         "Shape \"trianglemesh\" \"point3 P\" [-5 0 -5  5 0 -5  5 0 5  -5 0 5] \"integer indices\" [0 1 2 0 2 3]\n";
  }
  const std::string base = "'" + scene + "' --backend cpu -q";
  CommandResult one = test::RunTracer(base + " -o " + dir + "/one.pfm");
  ASSERT_EQ(one.exitCode, 0) << one.output;
  CommandResult r = RunJob(Mpi(2, base + " -o " + dir + "/two.pfm"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(ReadFile(dir + "/two.pfm"), ReadFile(dir + "/one.pfm"));
  int w = 0, h = 0;
  ReadPfm(dir + "/two.pfm", w, h);
  EXPECT_EQ(w, 40);
  EXPECT_EQ(h, 30);
  test::RemoveTree(dir);
}

// The environment's portals travel with the scene: the hall of make_skyhall.py (15 portal quads) under a constant sky,
// sampled through them (the default), on two ranks is one process's image byte for byte; a rank without the portals
// would sample the sky its own way and add other samples.
TEST(Mpi, PortalsReachEveryRank) {
  const std::string dir = MakeTempDir();
  const std::string base = Scene("skyhall.obj") +
                           " --backend cpu -q --width 32 --height 18 --spp 8 --seed 3 "
                           "--paths-in-flight 1024 --max-depth 4 --env 1,1,1";
  CommandResult one = test::RunTracer(base + " -o " + dir + "/one.pfm");
  ASSERT_EQ(one.exitCode, 0) << one.output;
  CommandResult r = RunJob(Mpi(2, base + " -o " + dir + "/two.pfm"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(ReadFile(dir + "/two.pfm") == ReadFile(dir + "/one.pfm")) << "two ranks' image is not one process's";
  // and the sampling differs from the portals' naive twin's, so the comparison above can tell
  ASSERT_EQ(test::RunTracer(base + " --env-sampling importance -o " + dir + "/importance.pfm").exitCode, 0);
  EXPECT_FALSE(ReadFile(dir + "/importance.pfm") == ReadFile(dir + "/one.pfm"));
  test::RemoveTree(dir);
}

TEST(Mpi, FilmsAreSummedByteForByteInSharedMemoryAndAcrossNodes) {
  const std::string dir = MakeTempDir();
  const std::string base =
      Scene("cornell.obj") + " --backend cpu --width 321 --height 241 --spp 4 --seed 5 --paths-in-flight 20000";
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/one.pfm").exitCode, 0);
  const std::vector<std::pair<std::string, int>> jobs = {{"", 2}, {"", 3}, {"0", 2}, {"0", 3}, {"2", 5}};
  for (const auto& [shared, ranks] : jobs) {
    const std::string out = dir + "/mpi" + std::to_string(ranks) + shared + ".pfm";
    CommandResult r = RunJob("env TRACER_MPI_SHARED_FILM=" + shared + " " + Mpi(ranks, base + " -q -o " + out));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_TRUE(ReadFile(out) == ReadFile(dir + "/one.pfm"))
        << ranks << " ranks, TRACER_MPI_SHARED_FILM=" << shared;  // (not the 900-KB files)
  }
  // The report says which way the films went.
  for (const std::string shared : {"", "0"}) {
    CommandResult r = RunJob("env TRACER_MPI_SHARED_FILM=" + shared + " " + Mpi(2, base + " -o " + dir + "/said.pfm"));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_TRUE(
        Contains(r.output, shared.empty() ? "summed in shared memory on each node" : "MPI_Reduce over the ranks"))
        << r.output;
  }
}

// A job that ends before it renders (a bad checkpoint on rank 0) exits 1 with the reason, writes nothing and does not
// crash: the film sum's window, made before loading, was freed under the thread faulting in its pages (SIGSEGV, 4
// runs of 4 at 1920x1080, found by review).
TEST(Mpi, JobThatFailsWhileLoadingExitsCleanly) {
  const std::string dir = MakeTempDir();
  {
    std::ofstream bad(dir + "/bad.ckpt", std::ios::binary);
    bad << "TRACERCK";  // 8 bytes: too short to be a checkpoint
  }
  for (int ranks : {2, 3}) {
    CommandResult r = RunJob(Mpi(ranks, Scene("cornell.obj") + " --backend cpu --width 1920 --height 1080 --resume " +
                                            dir + "/bad.ckpt -o " + dir + "/x.png"));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_TRUE(Contains(r.output, "bad.ckpt")) << r.output;
    EXPECT_FALSE(FileExists(dir + "/x.png"));
  }
}

// Tile-guided light selection: each rank computes the statistics of its share of the tiles, combined with
// MPI_Allreduce at every refresh, and the refreshes come at the same passes as for one process. The image is
// deterministic for a fixed number of ranks; it is even the image of one process (whose unbiasedness
// light_tiles_test.cpp tests).
TEST(Mpi, TilesUnderMpiAreDeterministicAndTheImageOfOneProcess) {
  const std::string dir = MakeTempDir();
  const std::string base = Scene("manylights.obj") +
                           " --backend cpu --width 64 --height 48 --spp 16 --paths-in-flight 1024 --tile-size 8"
                           " --light-clusters 16";
  ASSERT_EQ(test::RunTracer(base + " --light-sampling tiles -o " + dir + "/one.pfm").exitCode, 0);
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/power.pfm").exitCode, 0);
  const std::string one = ReadFile(dir + "/one.pfm");
  EXPECT_NE(one, ReadFile(dir + "/power.pfm")) << "the guide must change the image";
  for (const char* run : {"a", "b"}) {
    const std::string out = dir + "/three" + run + ".pfm";
    CommandResult r = RunJob(Mpi(3, base + " --light-sampling tiles -o " + out));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(ReadFile(out), one) << "run " << run;
  }
  CommandResult two = RunJob(Mpi(2, base + " --light-sampling tiles -o " + dir + "/two.pfm"));
  ASSERT_EQ(two.exitCode, 0) << two.output;
  EXPECT_EQ(ReadFile(dir + "/two.pfm"), one);
}

// ================================ long renders ================================

TEST(Mpi, TimeLimitStopsEveryRankAndTheCheckpointHoldsTheSamples) {
  const std::string dir = MakeTempDir();
  const auto t0 = test::Clock::now();
  CommandResult r =
      RunJob(Mpi(3, Scene("cornell.obj") + " --backend cpu --width 32 --height 32 --spp 100000000 --time 1 -o " + dir +
                        "/t.pfm --checkpoint " + dir + "/t.ckpt"),
             60);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_LT(Seconds(t0), 30.0);
  const int spp = SppFromMessage(r.output, "stopped by --time after");
  ASSERT_GT(spp, 0) << r.output;
  Checkpoint c = LoadCheckpoint(dir + "/t.ckpt");
  EXPECT_EQ(c.film.sppDone, spp);
  int w, h;
  std::vector<float> img = ReadPfm(dir + "/t.pfm", w, h), film = c.film.Resolve();
  ASSERT_EQ(img.size(), film.size());
  EXPECT_EQ(0, std::memcmp(img.data(), film.data(), img.size() * sizeof(float)));
}

TEST(Mpi, CheckpointOfOneJobResumesOnAnyNumberOfRanks) {
  const std::string dir = MakeTempDir();
  const std::string base = Scene("cornell.obj") + " --backend cpu --width 32 --height 24 --seed 3 --spp 24";
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/whole.pfm").exitCode, 0);
  // --time stops the two ranks after their first passes; the checkpoint holds their combined film.
  CommandResult part = RunJob(Mpi(2, base + " --time 1e-9 -o " + dir + "/part.pfm --checkpoint " + dir + "/c.ckpt"));
  ASSERT_EQ(part.exitCode, 0) << part.output;
  const int spp = SppFromMessage(part.output, "stopped by --time after");
  ASSERT_GT(spp, 0) << part.output;
  ASSERT_LT(spp, 24) << part.output;
  EXPECT_EQ(LoadCheckpoint(dir + "/c.ckpt").film.sppDone, spp);
  CommandResult three = RunJob(Mpi(3, base + " --resume " + dir + "/c.ckpt -o " + dir + "/three.pfm"));
  ASSERT_EQ(three.exitCode, 0) << three.output;
  EXPECT_TRUE(Contains(three.output, "(" + std::to_string(spp) + " from the checkpoint)")) << three.output;
  EXPECT_EQ(ReadFile(dir + "/three.pfm"), ReadFile(dir + "/whole.pfm"));
  CommandResult alone = test::RunTracer(base + " --resume " + dir + "/c.ckpt -o " + dir + "/alone.pfm");
  ASSERT_EQ(alone.exitCode, 0) << alone.output;
  EXPECT_EQ(ReadFile(dir + "/alone.pfm"), ReadFile(dir + "/whole.pfm"));
}

// --denoise's checkpoint keeps the odd samples' sums summed over the ranks, and continues on another number of ranks
// (rank 0's film starts from them, the others' from zero) to one uninterrupted process's images byte for byte.
TEST(Mpi, DenoiseCheckpointResumesOnAnyNumberOfRanks) {
  const std::string dir = MakeTempDir();
  const std::string base =
      Scene("cornell.obj") + " --backend cpu --width 32 --height 24 --seed 3 --spp 24 --denoise --aov noisy,halves";
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/whole.pfm").exitCode, 0);
  CommandResult part = RunJob(Mpi(2, base + " --time 1e-9 -o " + dir + "/part.pfm --checkpoint " + dir + "/c.ckpt"));
  ASSERT_EQ(part.exitCode, 0) << part.output;
  const Checkpoint c = LoadCheckpoint(dir + "/c.ckpt");
  ASSERT_GT(c.film.sppDone, 0);
  ASSERT_LT(c.film.sppDone, 24);
  EXPECT_EQ(c.film.odd.size(), c.film.sum.size());
  CommandResult three = RunJob(Mpi(3, base + " --resume " + dir + "/c.ckpt -o " + dir + "/three.pfm"));
  ASSERT_EQ(three.exitCode, 0) << three.output;
  for (const char* suffix : {".pfm", ".noisy.pfm", ".halfA.pfm", ".halfB.pfm"}) {
    ASSERT_TRUE(FileExists(dir + "/three" + suffix) && FileExists(dir + "/whole" + suffix)) << suffix;
    EXPECT_TRUE(ReadFile(dir + "/three" + suffix) == ReadFile(dir + "/whole" + suffix)) << suffix;
  }
  test::RemoveTree(dir);
}

// A signal to one rank (as a batch system may send it) stops every rank at a pass boundary; rank 0 writes the
// image and the checkpoint so far, and every rank exits 128 + signal, which mpirun passes on.
TEST(Mpi, SignalToARankWritesThePartialImageAndTheJobExits130) {
  const std::string dir = MakeTempDir();
  LongJob job = StartLongJob("", dir + "/i.pfm", " --checkpoint " + dir + "/i.ckpt");
  Spawned& p = job.process;
  ASSERT_EQ(job.ranks.size(), 3u) << p.Log();
  ASSERT_EQ(kill(job.ranks[2], SIGINT), 0);
  const int code = p.Wait(60);
  const std::string log = p.Log();
  ASSERT_EQ(code, 130) << log;
  const int spp = SppFromMessage(log, "interrupted at");
  ASSERT_GT(spp, 0) << log;
  int w = 0, h = 0;
  std::vector<float> img = ReadPfm(dir + "/i.pfm", w, h);
  Checkpoint c = LoadCheckpoint(dir + "/i.ckpt");
  EXPECT_EQ(c.film.sppDone, spp);
  std::vector<float> film = c.film.Resolve();
  ASSERT_EQ(img.size(), film.size());
  EXPECT_EQ(0, std::memcmp(img.data(), film.data(), img.size() * sizeof(float)));
}

// SIGTERM (or SIGINT) to mpirun: Open MPI's mpirun sends SIGTERM to the ranks after odls_base_sigkill_timeout
// seconds and SIGKILL as long again later. The ranks finish the pass, rank 0 writes the image so far, and they
// exit 143; mpirun itself reports the job it ended as failed (exit status 1 in Open MPI 4).
TEST(Mpi, SigtermToMpirunWritesThePartialImage) {
  const std::string dir = MakeTempDir();
  LongJob job = StartLongJob("--mca odls_base_sigkill_timeout 3", dir + "/i.pfm");
  Spawned& p = job.process;
  ASSERT_EQ(job.ranks.size(), 3u) << p.Log();
  ASSERT_EQ(kill(p.pid, SIGTERM), 0);
  const int code = p.Wait(60);
  const std::string log = p.Log();
  EXPECT_NE(code, 0) << log;
  EXPECT_NE(code, -1) << "mpirun did not end\n" << log;
  EXPECT_TRUE(Contains(log, "tracer: interrupted at ")) << log;
  int w = 0, h = 0;
  EXPECT_EQ(ReadPfm(dir + "/i.pfm", w, h).size(), 32u * 32 * 3);
}

// ================================ faults ================================

// A rank killed mid-render ends the whole job, with a non-zero status, within seconds (Open MPI ends a job one
// of whose processes died without MPI_Finalize, and says which); nothing is written.
TEST(Mpi, KilledRankEndsTheJobWithinAMinute) {
  const std::string dir = MakeTempDir();
  LongJob job = StartLongJob("", dir + "/k.pfm");
  Spawned& p = job.process;
  ASSERT_EQ(job.ranks.size(), 3u) << p.Log();
  const auto t0 = test::Clock::now();
  ASSERT_EQ(kill(job.ranks[1], SIGKILL), 0);
  const int code = p.Wait(60);
  EXPECT_NE(code, 0) << p.Log();
  EXPECT_NE(code, -1) << "the job did not end within 60 s\n" << p.Log();
  EXPECT_LT(Seconds(t0), 60.0);
  EXPECT_FALSE(FileExists(dir + "/k.pfm"));
}

// A rank whose backend fails (a GPU fault; here the CPU backend's test hook) prints its error naming itself and
// ends every rank through MPI_Abort.
TEST(Mpi, FailingRankEndsTheJobNamingItselfAndTheCause) {
  const std::string dir = MakeTempDir();
  const std::string args =
      Scene("cornell.obj") + " --backend cpu --width 32 --height 32 --spp 100000 -o " + dir + "/f.pfm";
  const auto t0 = test::Clock::now();
  CommandResult r = RunJob(Mpmd({{"", args}, {"", args}, {"-x TRACER_FAULT_INJECT=cpu-pass", args}}), 90);
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_LT(Seconds(t0), 60.0);
  EXPECT_TRUE(Contains(r.output, "tracer: error: rank 2 (")) << r.output;
  EXPECT_TRUE(Contains(r.output, "(injected by TRACER_FAULT_INJECT=cpu-pass)")) << r.output;
  EXPECT_FALSE(FileExists(dir + "/f.pfm"));
}

// A rank that stops answering (a hung GPU; here SIGSTOP) is found by rank 0's watchdog, which ends the job.
TEST(Mpi, RankThatStopsAnsweringEndsTheJob) {
  const std::string dir = MakeTempDir();
  LongJob job = StartLongJob("-x TRACER_MPI_WATCHDOG_SECONDS=2", dir + "/s.pfm");
  Spawned& p = job.process;
  ASSERT_EQ(job.ranks.size(), 3u) << p.Log();
  ASSERT_EQ(kill(job.ranks[1], SIGSTOP), 0);
  const int code = p.Wait(60);
  kill(job.ranks[1], SIGKILL);  // in case the launcher left it stopped
  const std::string log = p.Log();
  EXPECT_NE(code, 0) << log;
  EXPECT_NE(code, -1) << "the job did not end within 60 s\n" << log;
  EXPECT_TRUE(Contains(log, "rank 1 (") && Contains(log, "has not finished pass")) << log;
  EXPECT_FALSE(FileExists(dir + "/s.pfm"));
}

// ================================ inputs ================================

// Ranks started in different folders (Open MPI's --wdir) see different files under the same relative name.
TEST(Mpi, InputsThatDifferBetweenRanksAreRefused) {
  const std::string root = MakeTempDir(), a = root + "/a", b = root + "/b", none = root + "/none";
  for (const std::string& d : {a, b, none}) ASSERT_EQ(system(("mkdir -p " + d).c_str()), 0);
  for (const char* ext : {".obj", ".mtl", ".camera"}) {
    const std::string file = ReadFile(Scene("cornell") + ext);
    test::WriteFile(a + "/cornell" + ext, file);
    test::WriteFile(b + "/cornell" + ext, file + (std::string(ext) == ".obj" ? "# edited on node b\n" : ""));
  }
  const std::string args = "cornell.obj --backend cpu --width 16 --height 16 --spp 4 -o " + root + "/x.pfm";
  CommandResult scene = RunJob(Mpmd({{"--wdir " + a, args}, {"--wdir " + b, args}}));
  EXPECT_EQ(scene.exitCode, 1) << scene.output;
  EXPECT_TRUE(Contains(scene.output, "tracer: error: rank 1 (") &&
              Contains(scene.output, " reads another cornell.obj than rank 0"))
      << scene.output;
  EXPECT_FALSE(FileExists(root + "/x.pfm"));
  CommandResult seed = RunJob(Mpmd({{"--wdir " + a, args}, {"--wdir " + a, args + " --seed 2"}}));
  EXPECT_EQ(seed.exitCode, 1) << seed.output;
  EXPECT_TRUE(Contains(seed.output, "rank 1 (") && Contains(seed.output, "was started with other arguments"))
      << seed.output;
  EXPECT_FALSE(FileExists(root + "/x.pfm"));
  // A rank that cannot read the scene at all gets it from rank 0: the image of one process.
  CommandResult sent = RunJob(Mpmd({{"--wdir " + a, args}, {"--wdir " + none, args + ""}}));
  ASSERT_EQ(sent.exitCode, 0) << sent.output;
  ASSERT_EQ(
      test::RunTracer(Scene("cornell.obj") + " --backend cpu --width 16 --height 16 --spp 4 -o " + root + "/one.pfm")
          .exitCode,
      0);
  EXPECT_EQ(ReadFile(root + "/x.pfm"), ReadFile(root + "/one.pfm"));
}

TEST(Mpi, UsageErrorsHelpAndOneProcessModesAreSaidOnce) {
  const std::string dir = MakeTempDir();
  CommandResult usage = RunJob(Mpi(2, Scene("cornell.obj") + " --spp 0 -o " + dir + "/x.png"));
  EXPECT_EQ(usage.exitCode, 2) << usage.output;
  EXPECT_EQ(Count(usage.output, "tracer: usage error: --spp must be at least 1"), 1u) << usage.output;
  CommandResult help = RunJob(Mpi(2, "--help"));
  EXPECT_EQ(help.exitCode, 0) << help.output;
  EXPECT_EQ(Count(help.output, "Usage:"), 1u) << help.output;
  EXPECT_TRUE(Contains(help.output, "mpirun -np N tracer")) << help.output;
  CommandResult rays = RunJob(Mpi(2, Scene("cornell.obj") + " --make-rays primary " + dir + "/r.bin"));
  EXPECT_EQ(rays.exitCode, 2) << rays.output;
  EXPECT_EQ(Count(rays.output, "start them without mpirun"), 1u) << rays.output;
  EXPECT_FALSE(FileExists(dir + "/r.bin"));
  CommandResult missing = RunJob(Mpi(2, dir + "/nope.obj -o " + dir + "/x.png"));
  EXPECT_EQ(missing.exitCode, 1) << missing.output;
  EXPECT_EQ(Count(missing.output, "nope.obj: cannot open"), 1u) << missing.output;
}

}  // namespace
}  // namespace tracer
