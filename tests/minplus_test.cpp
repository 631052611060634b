// @file minplus_test.cpp: the host min-plus references on hand-checked path graphs, the fixed-point encoding,
// and the per-output function the naive GPU kernels call (no GPU needed).
#include "tracer/core/minplus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

using namespace tracer;

namespace {

const float inf = kInf;

// Path graph 0 - 1 - ... - (T-1) with edge weights w[i] between i and i+1; D[t][t] = 0, +inf elsewhere.
std::vector<float> PathGraph(const std::vector<float>& w) {
  const int T = static_cast<int>(w.size()) + 1;
  std::vector<float> D(static_cast<size_t>(T) * T, inf);
  for (int t = 0; t < T; ++t) D[t * T + t] = 0.0f;
  for (int i = 0; i + 1 < T; ++i) D[i * T + i + 1] = D[(i + 1) * T + i] = w[i];
  return D;
}

}  // namespace

TEST(MinPlusHost, OneStepOnAPath) {
  // 0 -1- 1 -2- 2 -4- 3; cluster 0 seen only from tile 0 (cost 0.5), cluster 1 only from tile 3 (cost 1)
  const std::vector<float> D = PathGraph({1.0f, 2.0f, 4.0f});
  const int T = 4, K = 2;
  const std::vector<float> C = {0.5f, inf,    // tile 0
                                inf,  inf,    // tile 1
                                inf,  inf,    // tile 2
                                inf,  1.0f};  // tile 3
  std::vector<float> out(T * K);
  EXPECT_TRUE(MinPlusStepHost(D.data(), C.data(), out.data(), T, K));
  const std::vector<float> expect = {0.5f, inf, 1.5f, inf, inf, 5.0f, inf, 1.0f};
  for (int i = 0; i < T * K; ++i) EXPECT_EQ(out[i], expect[i]) << "entry " << i;
}

TEST(MinPlusHost, IteratesToShortestPaths) {
  const std::vector<float> D = PathGraph({1.0f, 2.0f, 4.0f});
  const int T = 4, K = 2;
  std::vector<float> C = {0.5f, inf, inf, inf, inf, inf, inf, 1.0f};
  // Distances along the path: cluster 0 from tile 0 reaches tile 3 after 3 steps; the 4th changes nothing.
  const int steps = MinPlusIterateHost(D.data(), C.data(), T, K, 100);
  EXPECT_EQ(steps, 4);
  const std::vector<float> expect = {0.5f, 8.0f, 1.5f, 7.0f, 3.5f, 5.0f, 7.5f, 1.0f};
  for (int i = 0; i < T * K; ++i) EXPECT_EQ(C[i], expect[i]) << "entry " << i;
  // maxIters stops early and reports it
  std::vector<float> C2 = {0.5f, inf, inf, inf, inf, inf, inf, 1.0f};
  EXPECT_EQ(MinPlusIterateHost(D.data(), C2.data(), T, K, 2), 2);
  EXPECT_EQ(C2[2 * K + 0], 3.5f);
  EXPECT_EQ(C2[3 * K + 0], inf);
}

TEST(MinPlusHost, KeepsASmallerOwnCostAndIgnoresInfiniteEdges) {
  // Tile 1 already sees cluster 0 cheaper than through tile 0; a shortcut at +inf must not be taken.
  const int T = 3, K = 1;
  const std::vector<float> D = {0.0f, 1.0f, inf,  //
                                1.0f, 0.0f, inf,  //
                                inf,  inf,  0.0f};
  const std::vector<float> C = {2.0f, 2.5f, inf};
  std::vector<float> out(3);
  EXPECT_FALSE(MinPlusStepHost(D.data(), C.data(), out.data(), T, K));
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], 2.5f);
  EXPECT_EQ(out[2], inf);
}

TEST(MinPlusHost, PerOutputFunctionMatchesTheRowReference) {
  // MinPlusOutput (what the naive and coalesced kernels call) against the row-ordered reference, bit for bit.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int T : {1, 5, 31}) {
    for (int K : {1, 3, 17}) {
      std::vector<float> D(static_cast<size_t>(T) * T), C(static_cast<size_t>(T) * K), out(C.size());
      for (int t = 0; t < T; ++t)
        for (int k = 0; k < T; ++k) D[t * T + k] = t == k ? 0.0f : (u(rng) < 0.5f ? inf : 0.1f + 9.0f * u(rng));
      for (float& c : C) c = u(rng) < 0.3f ? inf : -5.0f + 25.0f * u(rng);
      MinPlusStepHost(D.data(), C.data(), out.data(), T, K);
      for (int t = 0; t < T; ++t)
        for (int c = 0; c < K; ++c) {
          const float r = MinPlusOutput(D.data(), C.data(), T, K, t, c);
          EXPECT_EQ(std::memcmp(&r, &out[t * K + c], 4), 0) << "T " << T << " K " << K << " at " << t << "," << c;
        }
    }
  }
}

TEST(MinPlusHost, FixedPointEncoding) {
  EXPECT_EQ(FixFromFloat(0.0f), 0);
  EXPECT_EQ(FixFromFloat(1.0f), 65536);
  EXPECT_EQ(FixFromFloat(-2.5f), -163840);
  EXPECT_EQ(FixFromFloat(inf), kFixInf);
  EXPECT_EQ(FixFromFloat(1e9f), kFixMax);    // clamped to +1024
  EXPECT_EQ(FixFromFloat(-1e9f), -kFixMax);  // and to -1024
  EXPECT_EQ(FloatFromFix(kFixInf), inf);
  EXPECT_EQ(FloatFromFix(kFixInf - kFixMax), inf);  // a sentinel sum with a negative cost is still +inf
  EXPECT_EQ(FloatFromFix(FixFromFloat(3.25f)), 3.25f);
  EXPECT_EQ(FixSaturate(2 * kFixMax), kFixMax);
  EXPECT_EQ(FixSaturate(kFixInf - kFixMax), kFixInf);
  EXPECT_EQ(FixSaturate(-kFixMax), -kFixMax);
}

TEST(MinPlusHost, FixedPointStepOnAPath) {
  const std::vector<float> Df = PathGraph({1.0f, 2.0f, 4.0f});
  const std::vector<float> Cf = {0.5f, inf, inf, inf, inf, inf, inf, -1.0f};
  const int T = 4, K = 2;
  std::vector<int32_t> D(Df.size()), C(Cf.size()), out(Cf.size());
  for (size_t i = 0; i < Df.size(); ++i) D[i] = FixFromFloat(Df[i]);
  for (size_t i = 0; i < Cf.size(); ++i) C[i] = FixFromFloat(Cf[i]);
  EXPECT_TRUE(MinPlusStepFixedHost(D.data(), C.data(), out.data(), T, K));
  // +inf + (-1) stays +inf (saturation), tile 2 sees cluster 1 at 4 - 1 = 3
  const std::vector<float> expect = {0.5f, inf, 1.5f, inf, inf, 3.0f, inf, -1.0f};
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(FloatFromFix(out[i]), expect[i]) << "entry " << i;
}

// ---- the banded step --------------------------------------------------------------------------------------

namespace {

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// The band's slots name the tiles within `radius` on both axes, row by row, and nothing off the screen.
TEST(MinPlusBand, SlotsNameTheNeighboursOnTheScreen) {
  const TileBand b{5, 4, 1};
  EXPECT_EQ(b.Side(), 3);
  EXPECT_EQ(b.Size(), 9);
  // Tile 6 = (1, 1): all nine neighbours exist; slot 4 is the tile itself.
  const int expect6[9] = {0, 1, 2, 5, 6, 7, 10, 11, 12};
  for (int j = 0; j < 9; ++j) EXPECT_EQ(b.Neighbour(6, j), expect6[j]) << "slot " << j;
  // Tile 0 = (0, 0): only slots 4, 5, 7, 8 are on the screen.
  const int expect0[9] = {-1, -1, -1, -1, 0, 1, -1, 5, 6};
  for (int j = 0; j < 9; ++j) EXPECT_EQ(b.Neighbour(0, j), expect0[j]) << "slot " << j;
  // Tile 19 = (4, 3), the last: slots 0, 1, 3, 4.
  const int expect19[9] = {13, 14, -1, 18, 19, -1, -1, -1, -1};
  for (int j = 0; j < 9; ++j) EXPECT_EQ(b.Neighbour(19, j), expect19[j]) << "slot " << j;
}

// The banded step gives exactly the dense step's result on the matrix the band stands for (and the same
// "changed" answer, and the same iteration), on grids narrower and shorter than the band as well.
TEST(MinPlusBand, EqualsTheDenseStepBitForBit) {
  int cases = 0;
  for (auto [w, h] : {std::pair<int, int>{1, 1}, {1, 20}, {20, 1}, {5, 3}, {14, 14}, {40, 23}}) {
    for (int K : {1, 3, 37}) {
      const TileBand b{w, h, 6};
      const int T = b.NumTiles();
      std::vector<float> D(static_cast<size_t>(T) * b.Size()), C(static_cast<size_t>(T) * K);
      MinPlusRandomBandInputs(b, K, 17u * w + 31u * h + K, 0.3f, D.data(), C.data());
      std::vector<float> dense(static_cast<size_t>(T) * T);
      DenseFromBand(b, D.data(), dense.data());
      std::vector<float> band(C.size()), full(C.size());
      const bool cb = MinPlusStepBandHost(b, D.data(), C.data(), band.data(), K);
      const bool cd = MinPlusStepHost(dense.data(), C.data(), full.data(), T, K);
      EXPECT_TRUE(SameBits(band, full)) << w << "x" << h << " tiles, K " << K;
      EXPECT_EQ(cb, cd) << w << "x" << h << " tiles, K " << K;
      // MinPlusBandOutput (what the GPU kernel runs per output) agrees with the row-oriented host loop.
      for (int t = 0; t < T; t += 7)
        for (int c = 0; c < K; ++c) {
          const float v = MinPlusBandOutput(b, D.data(), C.data(), K, t, c);
          EXPECT_EQ(std::memcmp(&v, &band[static_cast<size_t>(t) * K + c], sizeof v), 0) << "t " << t << " c " << c;
        }
      std::vector<float> ib = C, id = C;
      EXPECT_EQ(MinPlusIterateBandHost(b, D.data(), ib.data(), K, 200),
                MinPlusIterateHost(dense.data(), id.data(), T, K, 200));
      EXPECT_TRUE(SameBits(ib, id)) << w << "x" << h << " tiles, K " << K << " (iterated)";
      cases += T > 1 && cb;
    }
  }
  EXPECT_GT(cases, 8) << "too few cases where a step changed anything";
}

// An 8K frame at 16-pixel tiles: 129,600 tiles, whose dense matrix (67 GB) the band replaces with 88 MB.
// Sampled outputs against a direct minimum over every tile (no band indexing): rows and columns far apart,
// offsets that need 64-bit arithmetic.
TEST(MinPlusBand, EightKFrameOfTiles) {
  const TileBand b{480, 270, 6};
  const int T = b.NumTiles(), K = 2;
  ASSERT_EQ(T, 129600);
  std::vector<float> D(static_cast<size_t>(T) * b.Size()), C(static_cast<size_t>(T) * K), out(C.size());
  MinPlusRandomBandInputs(b, K, 8u, 0.3f, D.data(), C.data());
  MinPlusStepBandHost(b, D.data(), C.data(), out.data(), K);
  int improved = 0;
  for (int t : {0, 479, 480, 64799, 100000, T - 481, T - 1})
    for (int c = 0; c < K; ++c) {
      float want = C[static_cast<size_t>(t) * K + c];
      for (int k = 0; k < T; ++k) {
        const int dx = k % 480 - t % 480, dy = k / 480 - t / 480;
        if (dx < -6 || dx > 6 || dy < -6 || dy > 6) continue;
        const float d = D[static_cast<size_t>(t) * b.Size() + (dy + 6) * 13 + dx + 6];
        want = std::min(want, d + C[static_cast<size_t>(k) * K + c]);
      }
      EXPECT_EQ(out[static_cast<size_t>(t) * K + c], want) << "tile " << t << " cluster " << c;
      improved += want < C[static_cast<size_t>(t) * K + c];
    }
  EXPECT_GT(improved, 0);
}
