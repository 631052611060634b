// @file checkpoint_halves_test.cpp: checkpoints of --denoise renders: the odd samples' sums in the file (version 2's
// flag, a version-1 file still read, a damaged odd section refused).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "checkpoint_checks.h"
#include "test_util.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/hasher.h"

namespace tracer {
namespace {

using test::FileExists;
using test::MakeTempDir;
using test::ReadFile;
using test::WriteFile;

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

}  // namespace
}  // namespace tracer
