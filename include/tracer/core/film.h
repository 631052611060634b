// @file film.h: the film as per-ray code sees it: 64-bit fixed-point sums added with atomics.
#pragma once
#include "tracer/core/math.h"
#include "tracer/core/ray.h"
#include "tracer/core/render_params.h"

namespace tracer {

// ---- film: fixed-point accumulation -------------------------------------------------------------------
// Each pixel sums its samples in 64-bit fixed point (2^-20 resolution). Integer addition is associative,
// so the image does not depend on the order in which threads add: the same seed gives the same image on
// the CPU, and the GPU's optimised and naive variants give bit-identical images. Contributions are
// capped at kFilmMaxSample, far above any physical value, to keep sums from overflowing.
constexpr double kFilmScale = 1048576.0;
constexpr float kFilmMaxSample = 1.0e7f;

struct FilmView {
  unsigned long long* sum;       // 3 per pixel
  unsigned long long* dropped;   // count of non-finite samples dropped
  unsigned long long* firstBad;  // smallest (pixel << 32 | depth) of a non-finite sample; ~0 when none
  int32_t width, height;
  // --denoise: the sums of the odd-numbered samples alone (3 per pixel; the even ones' are sum - odd, so the film
  // itself is summed as without it); null otherwise.
  unsigned long long* odd;
  // RenderOptions::firstHitSamples: the hit (or miss: tri -1) of the camera ray of sample s < firstHitSamples of pixel
  // p at firstHits[s * width * height + p]; entries no pass reached keep tri kHitNotRecorded. Null: none kept.
  HitRecord* firstHits;
  uint32_t firstHitSamples;
};
constexpr unsigned long long kNoBadSample = ~0ull;
constexpr int32_t kHitNotRecorded = -2;

// What FilmAdd is told of a contribution besides its pixel: the depth of the path vertex that made it (for
// --check-nan's report) and, in the top bit, whether its sample index is odd (--denoise's half-buffers). A shadow
// ray carries it in place of its depth, so the half it lands in is its path's.
constexpr uint32_t kOddSampleBit = 1u << 31;
TRACER_HD uint32_t FilmTag(uint32_t depth, uint32_t sample) { return depth | (sample & 1u) << 31; }

TRACER_HD unsigned long long ToFixed(float v) {
  if (!(v > 0.0f)) return 0ull;
  if (v > kFilmMaxSample) v = kFilmMaxSample;
  return static_cast<unsigned long long>(static_cast<double>(v) * kFilmScale + 0.5);
}

// Adds one contribution of a path, `tag` its FilmTag; a non-finite one is counted, remembered (the smallest pixel,
// so that the report does not depend on thread order) and dropped. clamp > 0 caps its max component.
TRACER_HD void FilmAdd(const FilmView& film, const RenderParams& rp, uint32_t pixel, uint32_t tag, Vec3 c) {
  if (!IsFinite(c)) {
    AtomicAddU64(film.dropped, 1ull);
    if (film.firstBad)
      AtomicMinU64(film.firstBad, (static_cast<unsigned long long>(pixel) << 32) | (tag & ~kOddSampleBit));
    return;
  }
  if (rp.clamp > 0.0f) {
    float m = MaxComponent(c);
    if (m > rp.clamp) c = c * (rp.clamp / m);
  }
  if (IsBlack(c)) return;
  unsigned long long* s = film.sum + 3ull * pixel;
  unsigned long long r = ToFixed(c.x), g = ToFixed(c.y), b = ToFixed(c.z);
  if (r) AtomicAddU64(s + 0, r);
  if (g) AtomicAddU64(s + 1, g);
  if (b) AtomicAddU64(s + 2, b);
  if (!film.odd || !(tag & kOddSampleBit)) return;
  unsigned long long* o = film.odd + 3ull * pixel;
  if (r) AtomicAddU64(o + 0, r);
  if (g) AtomicAddU64(o + 1, g);
  if (b) AtomicAddU64(o + 2, b);
}

// Keeps a camera ray's hit h (tri -1: it left the scene) for the first-hit features, when the film asks for it.
TRACER_HD void RecordFirstHit(const FilmView& film, uint32_t pixel, uint32_t sample, uint32_t depth,
                              const HitRecord& h) {
  if (!film.firstHits || depth != 0u || sample >= film.firstHitSamples) return;
  const uint64_t pixels = static_cast<uint64_t>(film.width) * static_cast<uint64_t>(film.height);
  film.firstHits[static_cast<uint64_t>(sample) * pixels + pixel] = h;
}

}  // namespace tracer
