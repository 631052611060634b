// @file minplus.h: the min-plus ("shortest path") step C <- min(C, D (x) C) of tile-guided light sampling, its
// fixed-point encoding for the DPX kernel, and the host references (host+device header, no CUDA runtime calls).
//
// Layout: D is T x T and C is T x K, both row-major with leading dimensions T and K. D[t][k] is the
// dissimilarity of tiles t and k (>= 0 or +inf, D[t][t] = 0); C[t][c] is the cost of cluster c seen from tile t
// (finite or +inf). One step is
//     out[t][c] = min(C[t][c], min_k D[t][k] + C[k][c]).
// Neither input holds a NaN (and C holds no -inf), so no term can become NaN: inf + x = inf. Each term is a
// single float add followed by mins, and min is exact and order-independent, so every kernel and the host
// reference agree bit for bit (signed zeros aside: min(+0, -0) may return either; C holds no exact zeros in
// practice since it is -log(E + eps)).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tracer/core/common.h"

namespace tracer {

// One relaxation: min(acc, d + c), with d + c one rounded float add. fminf is one FMNMX on the device; the
// host spells it as a compare so that the loop vectorises (the two agree when nothing is NaN).
TRACER_HD float MinPlusRelax(float acc, float d, float c) {
#if TRACER_ON_DEVICE
  return fminf(acc, d + c);
#else
  const float s = d + c;
  return s < acc ? s : acc;
#endif
}

// One output of the step, walking k in order: what the naive and coalesced kernels compute per thread (they
// differ only in how threads map to (t, c)).
TRACER_HD float MinPlusOutput(const float* D, const float* C, int T, int K, int t, int c) {
  const float* dt = D + static_cast<size_t>(t) * T;
  float acc = C[static_cast<size_t>(t) * K + c];
  for (int k = 0; k < T; ++k) acc = MinPlusRelax(acc, dt[k], C[static_cast<size_t>(k) * K + c]);
  return acc;
}

// ---- the banded step: what renders run ---------------------------------------------------------------------
// The tile guide's D is +inf between tiles more than `radius` tiles apart on either axis (TileDissimilarity),
// so a row has at most (2 radius + 1)^2 finite entries. The band keeps exactly those: row t holds D[t][k] for
// the tiles k at (x + dx, y + dy), |dx|, |dy| <= radius, in slot j = (dy + radius) * side + dx + radius, and
// +inf in the slots that fall off the screen. A step then visits side^2 terms per output instead of T (169
// against 8160 at 1920x1080 with 16-pixel tiles) and its memory grows with T, not T^2; its result is exactly
// the dense step's (min over the same finite terms: the dropped ones are +inf, which never win).
struct TileBand {
  int tilesX, tilesY, radius;
  TRACER_HD int Side() const { return 2 * radius + 1; }
  TRACER_HD int Size() const { return Side() * Side(); }
  TRACER_HD int NumTiles() const { return tilesX * tilesY; }
  // The tile in slot j of row t, or -1 where it falls off the screen.
  TRACER_HD int Neighbour(int t, int j) const {
    const int x = t % tilesX + j % Side() - radius, y = t / tilesX + j / Side() - radius;
    return (x < 0 || x >= tilesX || y < 0 || y >= tilesY) ? -1 : y * tilesX + x;
  }
};

// One output of the banded step: out[t][c] = min(C[t][c], min over the band of D[t][j] + C[k(j)][c]).
TRACER_HD float MinPlusBandOutput(const TileBand& b, const float* D, const float* C, int K, int t, int c) {
  const int side = b.Side(), tx = t % b.tilesX, ty = t / b.tilesX;
  const float* dt = D + static_cast<size_t>(t) * b.Size();
  float acc = C[static_cast<size_t>(t) * K + c];
  for (int dy = -b.radius; dy <= b.radius; ++dy) {
    const int y = ty + dy;
    if (y < 0 || y >= b.tilesY) continue;
    for (int dx = -b.radius; dx <= b.radius; ++dx) {
      const int x = tx + dx;
      if (x < 0 || x >= b.tilesX) continue;
      acc = MinPlusRelax(acc, dt[(dy + b.radius) * side + dx + b.radius],
                         C[(static_cast<size_t>(y) * b.tilesX + x) * K + c]);
    }
  }
  return acc;
}

// ---- fixed point for the DPX kernel ------------------------------------------------------------------------
// Costs are scaled by 2^16 and rounded to int32. +inf is the sentinel kFixInf = INT_MAX/4, so that any sum of
// two encoded values (at most 2 * kFixInf < 2^30) never overflows. Finite values are clamped to
// [-kFixMax, kFixMax] with kFixMax = 2^26 (cost magnitude 1024), so a finite sum lies in [-2^26, 2^27] and a sum
// involving the sentinel is >= kFixInf - 2^26 > 2^28 = kFixInfThreshold. After each step the result is
// saturated: >= kFixInfThreshold becomes kFixInf again (so the sentinel never drifts down over iterations)
// and a finite value above kFixMax is clamped to kFixMax. The device kernel and MinPlusStepFixedHost apply the
// same rule, so they agree exactly.
constexpr int kFixShift = 16;
constexpr float kFixScale = 65536.0f;
constexpr int32_t kFixInf = 0x7FFFFFFF / 4;    // 536870911
constexpr int32_t kFixMax = 1 << 26;           // largest finite magnitude (1024.0 in cost units)
constexpr int32_t kFixInfThreshold = 1 << 28;  // at or above: +inf
static_assert(2LL * kFixInf < 0x7FFFFFFFLL, "sentinel + sentinel must not overflow int32");
static_assert(2LL * kFixMax < kFixInfThreshold && kFixInfThreshold <= kFixInf - kFixMax,
              "finite sums and sentinel sums must stay on their own side of the threshold");

TRACER_HD int32_t FixFromFloat(float x) {
  if (!(x < kInf)) return kFixInf;  // +inf (NaN is not an input, but maps to +inf rather than to garbage)
  float s = x * kFixScale;
  const float lim = static_cast<float>(kFixMax);
  s = s > lim ? lim : (s < -lim ? -lim : s);
  // round half away from zero, written out so host and device round identically
  return static_cast<int32_t>(s < 0.0f ? s - 0.5f : s + 0.5f);
}
TRACER_HD float FloatFromFix(int32_t v) {
  return v >= kFixInfThreshold ? kInf : static_cast<float>(v) * (1.0f / kFixScale);
}
// The saturation that ends each fixed-point step (see above).
TRACER_HD int32_t FixSaturate(int32_t v) { return v >= kFixInfThreshold ? kFixInf : (v > kFixMax ? kFixMax : v); }

// ---- host references (src/host/render/minplus.cpp) ---------------------------------------------------------------
// One step: out[t][c] = min(C[t][c], min_k D[t][k] + C[k][c]). `out` must not alias D or C.
// Returns true when some entry of out differs from (is smaller than) C.
bool MinPlusStepHost(const float* D, const float* C, float* out, int T, int K);
// Repeats the step in place on C until a step changes nothing or maxIters steps were run. Returns the number
// of steps run: the last one changed nothing unless the count equals maxIters.
int MinPlusIterateHost(const float* D, float* C, int T, int K, int maxIters);
// The same step on fixed-point values, ending with FixSaturate: what the DPX kernel must reproduce exactly.
bool MinPlusStepFixedHost(const int32_t* D, const int32_t* C, int32_t* out, int T, int K);

// The banded step (TileBand) on the host, and its iteration in place, as MinPlusStepHost / MinPlusIterateHost.
bool MinPlusStepBandHost(const TileBand& band, const float* D, const float* C, float* out, int K);
int MinPlusIterateBandHost(const TileBand& band, const float* D, float* C, int K, int maxIters);
// The T x T matrix a band stands for (+inf off the band): what the dense kernels take.
void DenseFromBand(const TileBand& band, const float* D, float* dense);
// Random band inputs, deterministic in `seed`: D[t][j] = screen distance + a feature difference in [0, 1) for
// the slots on the screen (0 for the tile itself), +inf off it and, with probability infFraction, on it too;
// C as MinPlusRandomInputs makes it.
void MinPlusRandomBandInputs(const TileBand& band, int K, uint32_t seed, float infFraction, float* D, float* C);

// Realistic random inputs, deterministic in `seed`: tiles on a screen-like grid (about 2:1), D[t][k] = screen
// distance in tiles + |feature difference| within `radius` tiles and +inf beyond it (D[t][t] = 0); C holds
// values in [0.25, 20) with a fraction `infFraction` of +inf. No exact zeros, no NaN.
void MinPlusRandomInputs(int T, int K, uint32_t seed, float radius, float infFraction, float* D, float* C);

}  // namespace tracer
