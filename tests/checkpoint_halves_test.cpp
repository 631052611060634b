// @file checkpoint_halves_test.cpp: checkpoints of --denoise renders: the odd samples' sums in the file (version 2's
// flag, a version-1 file still read, a damaged odd section refused), the pass driver's periodic and final films with
// them, and through the CLI a --denoise render stopped, checkpointed and resumed to the uninterrupted render's image
// byte for byte, and the refusal of a checkpoint without them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint_checks.h"
#include "test_util.h"
#include "tracer/host/backends.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/hasher.h"

namespace tracer {
namespace {

using test::CommandResult;
using test::FileExists;
using test::MakeTempDir;
using test::ReadFile;
using test::RunTracer;
using test::WriteFile;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Random sums, and odd sums each at most its sum (as every odd sample is also in the sums).
Checkpoint CheckpointWithHalves(int w, int h, bool odd) {
  Checkpoint c;
  c.film.Reset(w, h);
  std::mt19937_64 rng(7);
  for (auto& v : c.film.sum) v = rng() >> 8;
  if (odd)
    for (unsigned long long v : c.film.sum) c.film.odd.push_back(v / 3 + rng() % (v / 2 + 1));
  c.film.sppDone = 12;
  c.film.dropped = 3;
  c.seed = 99;
  c.settings = "scene=/x.obj\nwidth=" + std::to_string(w) + "\n";
  return c;
}

uint32_t U32At(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, &s[at], 4);
  return v;
}
std::string Put32(std::string s, size_t at, uint32_t v) {
  std::memcpy(&s[at], &v, 4);
  return s;
}
// The file with its checksum (the last 8 bytes) made right again after an edit, so that what the edit broke, not the
// checksum, is what a reader must notice.
std::string Resealed(std::string s) {
  const uint64_t sum = HashBytes(s.data(), s.size() - 8);
  std::memcpy(&s[s.size() - 8], &sum, 8);
  return s;
}
// A version-1 file, as tracers before version 2 wrote it: the same header without the flags and the reserved word.
std::string AsVersion1(const std::string& v2) {
  EXPECT_EQ(U32At(v2, 48), 0u) << "only a file without odd sums has a version-1 twin";
  return Resealed(Put32(v2.substr(0, 48) + v2.substr(56), 8, 1));
}

TEST(CheckpointHalves, FileRoundTripWithAndWithoutOddSums) {
  const std::string dir = MakeTempDir();
  for (bool odd : {false, true}) {
    const std::string path = dir + (odd ? "/odd.ckpt" : "/plain.ckpt");
    const Checkpoint a = CheckpointWithHalves(7, 5, odd);
    SaveCheckpoint(path, a);
    const std::string bytes = ReadFile(path);
    // The layout in checkpoint.h: a 56-byte header, the settings, the sums, the odd sums with the flag, a checksum.
    EXPECT_EQ(bytes.size(), 56 + a.settings.size() + 7 * 5 * 3 * 8 * (odd ? 2 : 1) + 8) << odd;
    EXPECT_EQ(U32At(bytes, 8), 2u);
    EXPECT_EQ(U32At(bytes, 48), odd ? kCheckpointOddSums : 0u);
    EXPECT_EQ(U32At(bytes, 52), 0u);
    if (odd) {  // the odd sums just before the checksum
      EXPECT_EQ(std::memcmp(&bytes[bytes.size() - 8 - 7 * 5 * 3 * 8], a.film.odd.data(), 7 * 5 * 3 * 8), 0);
    }
    const Checkpoint b = LoadCheckpoint(path);
    EXPECT_EQ(b.film.sum, a.film.sum);
    EXPECT_EQ(b.film.odd, a.film.odd);
    EXPECT_EQ(b.film.odd.empty(), !odd);
    EXPECT_EQ(b.film.sppDone, 12);
    EXPECT_EQ(b.film.dropped, 3u);
    EXPECT_EQ(b.seed, 99u);
    EXPECT_EQ(b.settings, a.settings);
  }
  // Odd sums of another size than the film's are not saved.
  Checkpoint wrong = CheckpointWithHalves(4, 4, true);
  wrong.film.odd.pop_back();
  EXPECT_THROW(SaveCheckpoint(dir + "/wrong.ckpt", wrong), CheckpointError);
  EXPECT_FALSE(FileExists(dir + "/wrong.ckpt"));
}

TEST(CheckpointHalves, VersionOneFileStillLoads) {
  const std::string dir = MakeTempDir();
  const Checkpoint a = CheckpointWithHalves(6, 3, false);
  SaveCheckpoint(dir + "/v2.ckpt", a);
  const std::string v1 = AsVersion1(ReadFile(dir + "/v2.ckpt"));
  ASSERT_EQ(v1.size(), 48 + a.settings.size() + 6 * 3 * 24 + 8);
  WriteFile(dir + "/v1.ckpt", v1);
  const Checkpoint b = LoadCheckpoint(dir + "/v1.ckpt");
  EXPECT_EQ(b.film.sum, a.film.sum);
  EXPECT_TRUE(b.film.odd.empty());
  EXPECT_EQ(b.film.sppDone, a.film.sppDone);
  EXPECT_EQ(b.film.dropped, a.film.dropped);
  EXPECT_EQ(b.settings, a.settings);
  // Version 1 had no flags: a version-1 file 8 bytes longer is not read as having any.
  test::ExpectEachCheckpointRefused(
      dir, {{Resealed(v1.substr(0, v1.size() - 8) + std::string(8, '\0') + v1.substr(0, 8)), "8 unexpected bytes"}});
}

TEST(CheckpointHalves, DamagedOddSumsAreRefusedNamingTheFile) {
  const std::string dir = MakeTempDir();
  const Checkpoint c = CheckpointWithHalves(6, 4, true);
  SaveCheckpoint(dir + "/good.ckpt", c);
  const std::string good = ReadFile(dir + "/good.ckpt");
  const size_t oddBytes = 6 * 4 * 3 * 8, oddAt = good.size() - 8 - oddBytes;
  std::string flipOdd = good, oddAboveSum = good;
  flipOdd[oddAt + 11] ^= 4;
  const unsigned long long tooMuch = c.film.sum[5] + 1;
  std::memcpy(&oddAboveSum[oddAt + 5 * 8], &tooMuch, 8);
  const std::vector<test::CheckpointCase> cases = {
      {good.substr(0, good.size() - 1), "truncated"},
      // The odd section cut off whole: the flag says it follows, so the size check refuses before any allocation.
      {good.substr(0, oddAt) + good.substr(good.size() - 8), "checkpoint with odd samples' sums has"},
      {good.substr(0, 60), "truncated"},
      {flipOdd, "checksum mismatch"},
      {Resealed(oddAboveSum), "odd samples' sums exceed the film's (value 5)"},
      // The flag cleared: the odd sums are then bytes past the end.
      {Resealed(Put32(good, 48, 0)), std::to_string(oddBytes) + " unexpected bytes"},
      {Resealed(Put32(good, 48, 3)), "unknown flags 3"},
      {Resealed(Put32(good, 52, 1)), "reserved word"},
      {Put32(good, 8, 3), "checkpoint version 3; this build reads versions 1 to 2"},
  };
  test::ExpectEachCheckpointRefused(dir, cases);
}

// The pass driver's films for a checkpoint keep the odd sums: after every pass (checkpointSeconds 0) and at the end.
// A film saved after the first pass continues, odd sums and all, to the uninterrupted render's film bit for bit.
TEST(CheckpointHalves, PeriodicFilmsKeepTheOddSumsAndResumeToTheUninterruptedFilm) {
  const SceneData d = test::BuildWithSceneCamera(LoadScene(test::ProjectScenesDir() + "/cornell.obj"), 20, 16);
  RenderOptions opt = test::QuietRender(20, 16, 9, 5);
  opt.halfBuffers = true;
  opt.pathsInFlight = 20 * 16;  // 4 samples a pass: passes of 4, 4 and 1
  const RenderResult whole = RenderCpu(d, opt);
  std::vector<HostFilm> saved;
  RenderOptions periodic = opt;
  periodic.checkpointSeconds = 0.0;
  periodic.checkpoint = [&saved](const HostFilm& film) { saved.push_back(film); };
  const RenderResult again = RenderCpu(d, periodic);
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_EQ(saved[0].sppDone, 4);
  for (const HostFilm& f : saved) ASSERT_EQ(f.odd.size(), f.sum.size()) << "at " << f.sppDone << " spp";
  EXPECT_EQ(saved.back().sum, whole.film.sum);
  EXPECT_EQ(saved.back().odd, whole.film.odd);
  EXPECT_EQ(again.film.odd, whole.film.odd);

  RenderOptions resumed = opt;
  resumed.resume = &saved[0];
  const RenderResult rest = RenderCpu(d, resumed);
  EXPECT_EQ(rest.sppDone, 9);
  EXPECT_EQ(rest.film.sum, whole.film.sum);
  EXPECT_EQ(rest.film.odd, whole.film.odd) << "the odd sums continue from the checkpoint's";

  // A film without odd sums cannot continue under half-buffers; a film with them continues a render without.
  HostFilm plain = saved[0];
  plain.odd.clear();
  resumed.resume = &plain;
  EXPECT_THROW(RenderCpu(d, resumed), std::invalid_argument);
  RenderOptions noHalves = opt;
  noHalves.halfBuffers = false;
  noHalves.resume = &saved[0];
  const RenderResult withoutHalves = RenderCpu(d, noHalves);
  EXPECT_EQ(withoutHalves.film.sum, whole.film.sum);
  EXPECT_TRUE(withoutHalves.film.odd.empty());
}

// ================================ through the CLI ================================

std::string Cornell() { return test::ProjectScenesDir() + "/cornell.obj"; }
const char kHalfOutputs[][16] = {".pfm", ".noisy.pfm", ".halfA.pfm", ".halfB.pfm"};

// A --denoise render stopped at 8 spp with a checkpoint, resumed to 16: the denoised image, the raw one and the
// halves are an uninterrupted 16-spp render's, byte for byte. So are those of a render killed partway (its last
// periodic checkpoint) and resumed.
TEST(CheckpointHalves, ResumedDenoiseRenderEqualsAnUninterruptedOne) {
  const std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 24 --height 20 --seed 4 --denoise --aov noisy,halves";
  const CommandResult whole = RunTracer(base + " --spp 16 -o " + dir + "/whole.pfm");
  ASSERT_EQ(whole.exitCode, 0) << whole.output;
  const CommandResult part = RunTracer(base + " --spp 8 -o " + dir + "/part.pfm --checkpoint " + dir + "/c.ckpt");
  ASSERT_EQ(part.exitCode, 0) << part.output;
  const Checkpoint c = LoadCheckpoint(dir + "/c.ckpt");
  EXPECT_EQ(c.film.sppDone, 8);
  EXPECT_EQ(c.film.odd.size(), c.film.sum.size()) << "a --denoise render's checkpoint keeps the odd sums";
  const CommandResult rest = RunTracer(base + " --spp 16 --resume " + dir + "/c.ckpt -o " + dir + "/resumed.pfm");
  ASSERT_EQ(rest.exitCode, 0) << rest.output;
  EXPECT_TRUE(Contains(rest.output, "16 spp (8 from the checkpoint)")) << rest.output;
  for (const char* suffix : kHalfOutputs) {
    ASSERT_TRUE(FileExists(dir + "/resumed" + suffix) && FileExists(dir + "/whole" + suffix)) << suffix;
    EXPECT_TRUE(ReadFile(dir + "/resumed" + suffix) == ReadFile(dir + "/whole" + suffix)) << suffix;
  }
  EXPECT_TRUE(ReadFile(dir + "/part.pfm") != ReadFile(dir + "/whole.pfm"));

  // Killed: the last periodic checkpoint (one after every pass) holds the odd sums too.
  const std::string killBase = Cornell() + " --backend cpu --width 24 --height 20 --seed 4 --denoise";
  test::Spawned p = test::Spawn(
      killBase + " --spp 100000000 --checkpoint-interval 0 -o " + dir + "/k.pfm --checkpoint " + dir + "/k.ckpt",
      dir + "/log");
  for (int i = 0; i < 600 && !FileExists(dir + "/k.ckpt"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(p.pid, SIGKILL);
  EXPECT_EQ(p.Wait(30), 128 + SIGKILL);
  const Checkpoint k = LoadCheckpoint(dir + "/k.ckpt");
  ASSERT_GT(k.film.sppDone, 0);
  ASSERT_EQ(k.film.odd.size(), k.film.sum.size());
  const std::string target = " --spp " + std::to_string(k.film.sppDone + 3);
  const CommandResult resumed = RunTracer(killBase + target + " --resume " + dir + "/k.ckpt -o " + dir + "/kr.pfm");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  ASSERT_EQ(RunTracer(killBase + target + " -o " + dir + "/kw.pfm").exitCode, 0);
  EXPECT_TRUE(ReadFile(dir + "/kr.pfm") == ReadFile(dir + "/kw.pfm"));
  test::RemoveTree(dir);
}

// A checkpoint without odd sums (a render without --denoise, or a version-1 file) cannot continue a --denoise render:
// exit 2, a message that says why and what to do, before the scene loads (no "rendering ..." line), no image. Without
// --denoise both resume; a checkpoint with odd sums resumes without --denoise to the plain render's image, and the
// checkpoint that render saves has none.
TEST(CheckpointHalves, CheckpointWithoutOddSumsIsRefusedUnderDenoise) {
  const std::string dir = MakeTempDir();
  const std::string base = Cornell() + " --backend cpu --width 16 --height 12 --seed 2";
  ASSERT_EQ(RunTracer(base + " --spp 4 -o " + dir + "/p.pfm --checkpoint " + dir + "/plain.ckpt").exitCode, 0);
  EXPECT_TRUE(LoadCheckpoint(dir + "/plain.ckpt").film.odd.empty());
  WriteFile(dir + "/v1.ckpt", AsVersion1(ReadFile(dir + "/plain.ckpt")));
  for (const char* name : {"plain.ckpt", "v1.ckpt"}) {
    const std::string ckpt = dir + "/" + name;
    const CommandResult r = RunTracer(base + " --spp 8 --denoise --resume " + ckpt + " -o " + dir + "/d.pfm");
    EXPECT_EQ(r.exitCode, 2) << name << "\n" << r.output;
    EXPECT_TRUE(Contains(r.output, "--resume " + ckpt + ": the checkpoint keeps no odd samples' sums") &&
                Contains(r.output, "render again with --denoise --checkpoint"))
        << name << "\n"
        << r.output;
    EXPECT_FALSE(Contains(r.output, "rendering ")) << name << ": refused after loading the scene\n" << r.output;
    EXPECT_FALSE(FileExists(dir + "/d.pfm")) << name;
    const CommandResult plain = RunTracer(base + " --spp 8 --resume " + ckpt + " -o " + dir + "/" + name + ".pfm");
    EXPECT_EQ(plain.exitCode, 0) << name << "\n" << plain.output;
  }
  ASSERT_EQ(RunTracer(base + " --spp 8 -o " + dir + "/whole.pfm").exitCode, 0);
  EXPECT_TRUE(ReadFile(dir + "/plain.ckpt.pfm") == ReadFile(dir + "/whole.pfm"));
  EXPECT_TRUE(ReadFile(dir + "/v1.ckpt.pfm") == ReadFile(dir + "/whole.pfm"));

  ASSERT_EQ(RunTracer(base + " --spp 4 --denoise -o " + dir + "/dn.pfm --checkpoint " + dir + "/dn.ckpt").exitCode, 0);
  const CommandResult noDenoise = RunTracer(base + " --spp 8 --resume " + dir + "/dn.ckpt --checkpoint " + dir +
                                            "/after.ckpt -o " + dir + "/n.pfm");
  ASSERT_EQ(noDenoise.exitCode, 0) << noDenoise.output;
  EXPECT_TRUE(ReadFile(dir + "/n.pfm") == ReadFile(dir + "/whole.pfm"));
  EXPECT_TRUE(LoadCheckpoint(dir + "/after.ckpt").film.odd.empty());
  test::RemoveTree(dir);
}

}  // namespace
}  // namespace tracer
