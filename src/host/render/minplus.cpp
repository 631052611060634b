// @file minplus.cpp: plain host references for the min-plus step (float and fixed point), which the
// CUDA kernels must match bit for bit.
#include "tracer/core/minplus.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

namespace tracer {

namespace {

// Row-oriented loop: for each tile t and each neighbour k, relax the whole row out[t][*] with D[t][k] + C[k][*].
// The same set of terms as the kernels (each a single float add), only visited in another order; min is
// order-independent, so the result is identical. A neighbour at +inf is skipped: inf + x = inf never wins.
template <typename V, typename Relax>
void StepRows(const V* D, const V* C, V* out, int T, int K, V inf, Relax relax) {
  for (int t = 0; t < T; ++t) {
    V* o = out + static_cast<size_t>(t) * K;
    const V* ct = C + static_cast<size_t>(t) * K;
    std::memcpy(o, ct, sizeof(V) * static_cast<size_t>(K));
    const V* dt = D + static_cast<size_t>(t) * T;
    for (int k = 0; k < T; ++k) {
      const V d = dt[k];
      if (d >= inf) continue;
      const V* ck = C + static_cast<size_t>(k) * K;
      for (int c = 0; c < K; ++c) o[c] = relax(o[c], d, ck[c]);
    }
  }
}

// Whether a step made some entry smaller.
bool AnySmaller(const float* out, const float* C, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (out[i] < C[i]) return true;
  return false;
}

// Repeats step(in, out) on C in place until a step changes nothing or maxIters steps were run.
template <class Step>
int IterateInPlace(float* C, size_t n, int maxIters, Step step) {
  std::vector<float> next(n);
  for (int it = 0; it < maxIters; ++it) {
    const bool changed = step(C, next.data());
    std::copy(next.begin(), next.end(), C);
    if (!changed) return it + 1;
  }
  return maxIters;
}

}  // namespace

bool MinPlusStepHost(const float* D, const float* C, float* out, int T, int K) {
  StepRows<float>(D, C, out, T, K, kInf, [](float acc, float d, float c) { return MinPlusRelax(acc, d, c); });
  return AnySmaller(out, C, static_cast<size_t>(T) * K);
}

int MinPlusIterateHost(const float* D, float* C, int T, int K, int maxIters) {
  return IterateInPlace(C, static_cast<size_t>(T) * K, maxIters,
                        [&](const float* in, float* out) { return MinPlusStepHost(D, in, out, T, K); });
}

bool MinPlusStepFixedHost(const int32_t* D, const int32_t* C, int32_t* out, int T, int K) {
  // Sums stay below 2^30 (see minplus.h), so plain int32 adds never overflow.
  StepRows<int32_t>(D, C, out, T, K, kFixInf, [](int32_t acc, int32_t d, int32_t c) {
    const int32_t s = d + c;
    return s < acc ? s : acc;
  });
  const size_t n = static_cast<size_t>(T) * K;
  bool changed = false;
  for (size_t i = 0; i < n; ++i) {
    out[i] = FixSaturate(out[i]);
    changed |= out[i] < C[i];
  }
  return changed;
}

bool MinPlusStepBandHost(const TileBand& band, const float* D, const float* C, float* out, int K) {
  // Row-oriented, as StepRows: relax the whole row out[t][*] with each finite band entry in turn.
  const int T = band.NumTiles(), S = band.Size();
  for (int t = 0; t < T; ++t) {
    float* o = out + static_cast<size_t>(t) * K;
    std::memcpy(o, C + static_cast<size_t>(t) * K, sizeof(float) * static_cast<size_t>(K));
    const float* dt = D + static_cast<size_t>(t) * S;
    for (int j = 0; j < S; ++j) {
      const int k = band.Neighbour(t, j);
      const float d = dt[j];
      if (k < 0 || d >= kInf) continue;
      const float* ck = C + static_cast<size_t>(k) * K;
      for (int c = 0; c < K; ++c) o[c] = MinPlusRelax(o[c], d, ck[c]);
    }
  }
  return AnySmaller(out, C, static_cast<size_t>(T) * K);
}

int MinPlusIterateBandHost(const TileBand& band, const float* D, float* C, int K, int maxIters) {
  return IterateInPlace(C, static_cast<size_t>(band.NumTiles()) * K, maxIters,
                        [&](const float* in, float* out) { return MinPlusStepBandHost(band, D, in, out, K); });
}

void DenseFromBand(const TileBand& band, const float* D, float* dense) {
  const int T = band.NumTiles(), S = band.Size();
  std::fill(dense, dense + static_cast<size_t>(T) * T, kInf);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < S; ++j) {
      const int k = band.Neighbour(t, j);
      if (k >= 0) dense[static_cast<size_t>(t) * T + k] = D[static_cast<size_t>(t) * S + j];
    }
}

namespace {
// xorshift32 on [0, 1), seeded away from zero: cheap enough for 67M entries at T = 8192.
struct Uniform {
  uint32_t state;
  explicit Uniform(uint32_t seed) : state(seed * 2654435761u + 0x9E3779B9u) {
    if (state == 0) state = 1;
  }
  float operator()() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  }
};

// The random inputs' C: values in [0.25, 20), a fraction infFraction of them +inf.
void RandomCosts(Uniform& uniform, size_t n, float infFraction, float* C) {
  for (size_t i = 0; i < n; ++i) C[i] = uniform() < infFraction ? kInf : 0.25f + 19.75f * uniform();
}
}  // namespace

void MinPlusRandomBandInputs(const TileBand& band, int K, uint32_t seed, float infFraction, float* D, float* C) {
  Uniform uniform(seed);
  const int T = band.NumTiles(), S = band.Size();
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < S; ++j) {
      const int k = band.Neighbour(t, j);
      const float dx = static_cast<float>(j % band.Side() - band.radius),
                  dy = static_cast<float>(j / band.Side() - band.radius);
      float d = kInf;
      if (k == t)
        d = 0.0f;
      else if (k >= 0 && !(uniform() < infFraction))
        d = std::sqrt(dx * dx + dy * dy) + uniform();
      D[static_cast<size_t>(t) * S + j] = d;
    }
  RandomCosts(uniform, static_cast<size_t>(T) * K, infFraction, C);
}

void MinPlusRandomInputs(int T, int K, uint32_t seed, float radius, float infFraction, float* D, float* C) {
  Uniform uniform(seed);
  int width = 1;
  while (width * width < 2 * T) ++width;
  std::vector<float> feature(static_cast<size_t>(T));
  for (float& f : feature) f = uniform();
  for (int t = 0; t < T; ++t) {
    const int tx = t % width, ty = t / width;
    for (int k = 0; k < T; ++k) {
      const float dx = static_cast<float>(tx - k % width), dy = static_cast<float>(ty - k / width);
      const float dist = std::sqrt(dx * dx + dy * dy);
      float d = dist <= radius ? dist + std::fabs(feature[t] - feature[k]) : kInf;
      if (k == t) d = 0.0f;
      D[static_cast<size_t>(t) * T + k] = d;
    }
  }
  RandomCosts(uniform, static_cast<size_t>(T) * K, infFraction, C);
}

}  // namespace tracer
