// @file denoise.h: the denoisers' per-pixel code (--denoise), run by the host's threads (host/denoise.h) and by one
// CUDA thread per pixel (kernels/denoise.cu), so that both run the same arithmetic.
//
// Inputs: the image, its two half-buffers (the means of the even- and of the odd-numbered samples, which the film
// keeps apart under --denoise) and the first-hit features of --aov (albedo, normal, position, depth, emission).
//  1. DenoiseVariancePixel: each pixel's noise, from the halves: (A - B)^2 / 2 estimates the variance of one half's
//     mean (A and B are independent estimates of the same mean), averaged over 3x3 pixels.
//  2a. AtrousPixel (the naive twin, --denoise atrous): one level of the edge-avoiding a-trous wavelet filter
//     (Dammertz, Sewtz, Hanika and Lensch 2010): a 5x5 B3-spline kernel with holes (2^level pixels apart), five
//     levels, edge-stopping weights from the colour (normalised by the variance, which each level filters along,
//     as Schied et al. 2017 guide theirs), the normal, the albedo and the distance from the pixel's tangent plane.
//  2b. NforPixel (the default, --denoise nfor): first-order regression of the colour on the features in an 11x11
//     window, weighted by non-local means (Rousselle, Knaus and Zwicker 2012) of the OTHER half-buffer, each half
//     filtered apart and the two averaged: a reduced "Nonlinearly Weighted First-order Regression" (Bitterli,
//     Rousselle, Moon, Iglesias-Guitian, Adler, Mitchell, Jarosz and Novak 2016). What it leaves out of the paper is
//     listed in docs/RENDERING.md (Denoising).
#pragma once
#include "tracer/core/film.h"
#include "tracer/core/math.h"

namespace tracer {

// A depth at or beyond this is a pixel whose rays all left the scene (first_hit.h writes kAovMissDepth, 1e10).
constexpr float kDenoiseMissDepth = 1e9f;
constexpr int kAtrousLevels = 5;
constexpr int kNforFeatures = 8;  // 1, albedo (3), normal (3), depth
constexpr int kNforEntries = kNforFeatures * (kNforFeatures + 1) / 2;

// The filters' parameters (the defaults are what --denoise uses; tests and experiments may change them).
struct DenoiseSettings {
  // a-trous edge-stopping scales
  float atrousColor = 2.0f;   // colour differences, in standard deviations of the difference's noise
  float atrousNormal = 0.3f;  // |n_p - n_q|
  float atrousAlbedo = 0.1f;  // |a_p - a_q|
  float atrousPlane = 1.0f;   // PlaneDistance, in footprints
  float emission = 0.2f;      // EmissionWeight's scale (both filters)
  // the regression
  int nforRadius = 5;       // the window: (2r + 1)^2 pixels
  int nforPatch = 1;        // non-local means patches: (2f + 1)^2 pixels
  float nforK = 1.0f;       // non-local means bandwidth: larger averages more
  float nforRidge = 1e-2f;  // the ridge on each slope, times the weight sum
};

// Every image is row-major, row 0 at the top; colours and vectors 3 floats a pixel, depth and scalars one.
struct DenoiseView {
  int32_t width, height;
  const float* color;   // the mean of every sample (the raw image)
  const float* halfA;   // the mean of the even-numbered samples
  const float* halfB;   // the mean of the odd-numbered samples
  const float* albedo;  // first-hit features (first_hit.h)
  const float* normal;
  const float* position;
  const float* depth;
  const float* emission;  // the emitted radiance seen at the first hit (3 a pixel)
  const float* variance;  // DenoiseVariancePixel's (3 a pixel): the variance of one half's mean
  DenoiseSettings settings;
};

TRACER_HD Vec3 PixelRgb(const float* image, int p) { return Vec3(image[3 * p], image[3 * p + 1], image[3 * p + 2]); }
TRACER_HD void StoreRgb(float* image, int p, Vec3 c) {
  image[3 * p] = c.x;
  image[3 * p + 1] = c.y;
  image[3 * p + 2] = c.z;
}
TRACER_HD float Sum3(Vec3 c) { return c.x + c.y + c.z; }
TRACER_HD int ClampInt(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
TRACER_HD bool SeesSurface(const DenoiseView& v, int p) { return v.depth[p] < kDenoiseMissDepth; }

// ---- 0. the inputs, from the film ----------------------------------------------------------------------------------
// One value of the half-buffers from the film's fixed-point sums (core/film.h) of n samples: the even-numbered
// samples' sum (sum - odd) over their count, and the odd ones' over theirs; with no odd sample (n = 1) its one sample
// is in both halves. The host (host/denoise.h's ResolveHalves) and the GPU resolve a film with it.
TRACER_HD void HalfBufferValues(unsigned long long sum, unsigned long long odd, unsigned n, float& a, float& b) {
  const unsigned oddCount = n / 2, evenCount = n - oddCount;  // samples 0, 2, 4, ... are even
  a = evenCount ? static_cast<float>(static_cast<double>(sum - odd) / (kFilmScale * evenCount)) : 0.0f;
  b = oddCount ? static_cast<float>(static_cast<double>(odd) / (kFilmScale * oddCount)) : a;
}

// ---- 1. the noise of each pixel --------------------------------------------------------------------------------
// var3: the variance of a half's mean per channel; varMean: the variance of the image's mean (half a half's: it
// holds both), averaged over the channels, which is what the a-trous filter carries. The 3x3 average turns a
// one-pair estimate (chi-square with one degree of freedom, often near 0 by chance) into one that can weigh colours.
TRACER_HD void DenoiseVariancePixel(const DenoiseView& v, int p, float* var3, float* varMean) {
  const int x = p % v.width, y = p / v.width;
  Vec3 sum(0.0f);
  int n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int qx = x + dx, qy = y + dy;
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const Vec3 d = PixelRgb(v.halfA, q) - PixelRgb(v.halfB, q);
      sum += d * d * 0.5f;
      ++n;
    }
  const Vec3 var = sum / static_cast<float>(n);
  StoreRgb(var3, p, var);
  varMean[p] = Sum3(var) * (0.5f / 3.0f);
}

// ---- geometry shared by both filters ------------------------------------------------------------------------------
// How far apart neighbouring pixels' surface points are at p: the smallest distance to a 4-neighbour's position
// (the smallest, so that a neighbour across an edge does not count). Distances along the surface in these units do
// not depend on the scene's scale or the image's size. At a pixel without neighbours on a surface: 1e-3 of its depth.
TRACER_HD float PixelFootprint(const DenoiseView& v, int x, int y) {
  const int p = y * v.width + x;
  const Vec3 xp = PixelRgb(v.position, p);
  float best = kInf;
  const int nx[4] = {x - 1, x + 1, x, x};
  const int ny[4] = {y, y, y - 1, y + 1};
  for (int k = 0; k < 4; ++k) {
    if (nx[k] < 0 || ny[k] < 0 || nx[k] >= v.width || ny[k] >= v.height) continue;
    const int q = ny[k] * v.width + nx[k];
    if (!SeesSurface(v, q)) continue;
    const float d = Length(PixelRgb(v.position, q) - xp);
    if (d > 0.0f) best = Fminf(best, d);
  }
  return best < kInf ? best : Fmaxf(1e-3f * v.depth[p], 1e-20f);
}

// The distance of q's surface point from p's tangent plane, in p's footprints: 0 along a plane seen at any angle,
// large across a depth edge. `np` is p's normal made unit.
TRACER_HD float PlaneDistance(const DenoiseView& v, int p, int q, Vec3 np, float footprint) {
  return fabsf(Dot(np, PixelRgb(v.position, q) - PixelRgb(v.position, p))) / footprint;
}

// Directly seen emitters: where a lamp ends, its albedo, normal and depth may be the ceiling's, so only its emission
// tells them apart, and a lamp's radiance spread over the ceiling around it is the worst error a filter can make. The
// difference of the emission seen, relative to the two together: 0 between two pixels without any, 1 between a lamp
// and the ceiling.
TRACER_HD float EmissionWeight(const DenoiseView& v, int p, int q) {
  const float ep = Sum3(PixelRgb(v.emission, p)), eq = Sum3(PixelRgb(v.emission, q));
  if (ep == eq) return 1.0f;
  return expf(-Sqr((ep - eq) / ((ep + eq) * v.settings.emission)));
}

TRACER_HD Vec3 UnitOrZero(Vec3 n) {
  const float l = Length(n);
  return l > 0.0f ? n / l : Vec3(0.0f);
}

// ---- 2a. the naive twin: edge-avoiding a-trous wavelets (Dammertz et al. 2010) ------------------------------------
// The edge-stopping weight of neighbour q for p: 0 between a surface and the background, 1 between two background
// pixels (their colour alone decides).
TRACER_HD float AtrousEdgeWeight(const DenoiseView& v, int p, int q, Vec3 np, float footprint) {
  const DenoiseSettings& s = v.settings;
  const bool hp = SeesSurface(v, p), hq = SeesSurface(v, q);
  if (hp != hq) return 0.0f;
  if (!hp) return 1.0f;  // (the background emits nothing here: it is the environment, which misses show)
  const Vec3 dn = PixelRgb(v.normal, p) - PixelRgb(v.normal, q);
  const Vec3 da = PixelRgb(v.albedo, p) - PixelRgb(v.albedo, q);
  const float dx = PlaneDistance(v, p, q, np, footprint);
  return EmissionWeight(v, p, q) *
         expf(-Dot(dn, dn) / Sqr(s.atrousNormal) - Dot(da, da) / Sqr(s.atrousAlbedo) - dx * dx / Sqr(s.atrousPlane));
}

// Level `level` (0 to kAtrousLevels - 1) at pixel p: `in` and its variance `inVar` (one a pixel) to `out`, `outVar`.
// A weighted mean of the 5x5 taps 2^level pixels apart, each weighted by the B3 spline (1, 4, 6, 4, 1) / 16 in x and
// y and its edge-stopping weights; taps outside the image are left out and the weights renormalised. The variance
// of the result is sum w^2 var / (sum w)^2 (the taps' noise taken as independent), so the colour test of the next
// level, whose taps are farther apart and already smoother, compares with the smaller noise that is left.
TRACER_HD void AtrousPixel(const DenoiseView& v, const float* in, const float* inVar, int level, int p, float* out,
                           float* outVar) {
  const float h[5] = {1.0f / 16.0f, 1.0f / 4.0f, 3.0f / 8.0f, 1.0f / 4.0f, 1.0f / 16.0f};
  const int x = p % v.width, y = p / v.width, step = 1 << level;
  const Vec3 cp = PixelRgb(in, p), np = UnitOrZero(PixelRgb(v.normal, p));
  const float vp = inVar[p];
  const float footprint = SeesSurface(v, p) ? PixelFootprint(v, x, y) : 1.0f;
  // 1e-10 keeps a noise-free pair (variance 0) from dividing 0 by 0: equal colours weigh fully, others not at all.
  const float colorScale = 1.0f / (3.0f * Sqr(v.settings.atrousColor));
  Vec3 sum(0.0f);
  float wsum = 0.0f, varSum = 0.0f;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) {
      const int qx = x + (i - 2) * step, qy = y + (j - 2) * step;
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const Vec3 cq = PixelRgb(in, q), dc = cp - cq;
      const float colorW = expf(-Dot(dc, dc) * colorScale / (vp + inVar[q] + 1e-10f));
      const float w = h[i] * h[j] * colorW * (q == p ? 1.0f : AtrousEdgeWeight(v, p, q, np, footprint));
      sum += cq * w;
      wsum += w;
      varSum += w * w * inVar[q];
    }
  // wsum >= h[2]^2 > 0: the centre tap always weighs 1 in its edge and colour tests.
  StoreRgb(out, p, sum / wsum);
  outVar[p] = varSum / (wsum * wsum);
}

// ---- 2b. the model: NL-means-weighted first-order regression (after Bitterli et al. 2016) -------------------------
// Non-local means weight of q for p on `guide` (Rousselle et al. 2012): the patch distance, each squared difference
// less what the noise explains and over what the noise allows, averaged over the patch's pixels and channels.
TRACER_HD float NlMeansWeight(const DenoiseView& v, const float* guide, int px, int py, int qx, int qy) {
  const float k = v.settings.nforK;
  const int f = v.settings.nforPatch;
  float d2 = 0.0f;
  int n = 0;
  for (int dy = -f; dy <= f; ++dy)
    for (int dx = -f; dx <= f; ++dx) {
      const int ax = ClampInt(px + dx, 0, v.width - 1), ay = ClampInt(py + dy, 0, v.height - 1);
      const int bx = ClampInt(qx + dx, 0, v.width - 1), by = ClampInt(qy + dy, 0, v.height - 1);
      const int a = ay * v.width + ax, b = by * v.width + bx;
      const Vec3 diff = PixelRgb(guide, a) - PixelRgb(guide, b);
      const Vec3 va = PixelRgb(v.variance, a), vb = PixelRgb(v.variance, b);
      for (int c = 0; c < 3; ++c) {
        const float ua = Axis(va, c), ub = Axis(vb, c);
        d2 += (Sqr(Axis(diff, c)) - (ua + Fminf(ua, ub))) / (1e-10f + k * k * (ua + ub));
      }
      n += 3;
    }
  return expf(-Fmaxf(0.0f, d2 / static_cast<float>(n)));
}

// The regression's features of q relative to p: 1 (the intercept, which is the estimate at p), then the albedo, the
// normal and the depth as differences from p's, so that p sits at the origin. The depth difference is measured in
// footprints over the window's radius (about -1 to 1 along a plane that fills the window) and clamped, so that a
// pixel behind an edge does not lever the fit; a background pixel has albedo and normal 0, which sets it apart.
TRACER_HD void NforFeatures(const DenoiseView& v, int p, int q, float depthScale, float* f) {
  const Vec3 da = PixelRgb(v.albedo, q) - PixelRgb(v.albedo, p);
  const Vec3 dn = PixelRgb(v.normal, q) - PixelRgb(v.normal, p);
  float dz = 0.0f;
  if (SeesSurface(v, p)) dz = SeesSurface(v, q) ? Clamp((v.depth[q] - v.depth[p]) * depthScale, -2.0f, 2.0f) : 2.0f;
  f[0] = 1.0f;
  f[1] = da.x, f[2] = da.y, f[3] = da.z;
  f[4] = dn.x, f[5] = dn.y, f[6] = dn.z;
  f[7] = dz;
}

// Index of entry (i, j), j <= i, of a packed lower triangle.
TRACER_HD int Tri(int i, int j) { return i * (i + 1) / 2 + j; }

// Solves m x = r for the first unknown of each of 3 right-hand sides (the intercept), m symmetric positive definite
// packed as a lower triangle (overwritten by its Cholesky factor), r 3 per row (overwritten). False when a pivot is
// not positive (the caller then falls back to the weighted mean).
TRACER_HD bool SolveIntercept(float* m, float* r, Vec3& intercept) {
  // Every loop unrolled on the device, so that m and r stay in registers.
  constexpr int n = kNforFeatures;
  TRACER_UNROLL
  for (int j = 0; j < n; ++j) {
    float d = m[Tri(j, j)];
    TRACER_UNROLL
    for (int k = 0; k < j; ++k) d -= m[Tri(j, k)] * m[Tri(j, k)];
    if (!(d > 0.0f)) return false;
    const float l = sqrtf(d);
    m[Tri(j, j)] = l;
    TRACER_UNROLL
    for (int i = j + 1; i < n; ++i) {
      float s = m[Tri(i, j)];
      TRACER_UNROLL
      for (int k = 0; k < j; ++k) s -= m[Tri(i, k)] * m[Tri(j, k)];
      m[Tri(i, j)] = s / l;
    }
  }
  TRACER_UNROLL
  for (int c = 0; c < 3; ++c) {
    TRACER_UNROLL
    for (int i = 0; i < n; ++i) {  // forward: L y = r
      float s = r[3 * i + c];
      TRACER_UNROLL
      for (int k = 0; k < i; ++k) s -= m[Tri(i, k)] * r[3 * k + c];
      r[3 * i + c] = s / m[Tri(i, i)];
    }
    TRACER_UNROLL
    for (int i = n - 1; i >= 0; --i) {  // back: L^T x = y
      float s = r[3 * i + c];
      TRACER_UNROLL
      for (int k = i + 1; k < n; ++k) s -= m[Tri(k, i)] * r[3 * k + c];
      r[3 * i + c] = s / m[Tri(i, i)];
    }
  }
  intercept = Vec3(r[0], r[1], r[2]);
  return true;
}

// p's colour of `target` by weighted least squares over the window, the weights from `guide` (the other half): the
// target's noise then does not choose its own weights, which would pull the fit toward it. The weights also stop at
// emission edges (EmissionWeight). The normal equations get a ridge (settings.nforRidge times the weight sum) on every
// slope, so that where a feature does not vary (a flat wall) its slope stays 0 and the fit is the weighted mean.
TRACER_HD Vec3 NforRegress(const DenoiseView& v, const float* target, const float* guide, int x, int y) {
  const int p = y * v.width + x, radius = v.settings.nforRadius;
  const float depthScale = SeesSurface(v, p) ? 1.0f / (PixelFootprint(v, x, y) * static_cast<float>(radius)) : 0.0f;
  float m[kNforEntries] = {}, r[3 * kNforFeatures] = {};
  for (int qy = y - radius; qy <= y + radius; ++qy)
    for (int qx = x - radius; qx <= x + radius; ++qx) {
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const float w = NlMeansWeight(v, guide, x, y, qx, qy) * EmissionWeight(v, p, q);
      if (!(w > 1e-6f)) continue;
      float f[kNforFeatures];
      NforFeatures(v, p, q, depthScale, f);
      const Vec3 c = PixelRgb(target, q);
      TRACER_UNROLL
      for (int i = 0; i < kNforFeatures; ++i) {
        const float wf = w * f[i];
        TRACER_UNROLL
        for (int j = 0; j <= i; ++j) m[Tri(i, j)] += wf * f[j];
        r[3 * i] += wf * c.x, r[3 * i + 1] += wf * c.y, r[3 * i + 2] += wf * c.z;
      }
    }
  const float wsum = m[0];  // the centre pixel weighs 1: wsum >= 1
  const Vec3 mean = Vec3(r[0], r[1], r[2]) / wsum;
  for (int i = 1; i < kNforFeatures; ++i) m[Tri(i, i)] += v.settings.nforRidge * wsum;
  Vec3 fit;
  if (!SolveIntercept(m, r, fit) || !IsFinite(fit)) return mean;
  return Max(fit, Vec3(0.0f));  // a fit can overshoot below 0 where the window holds an edge; light cannot
}

// The denoised colour of pixel p: each half regressed with the other's weights, and the two averaged.
TRACER_HD Vec3 NforPixel(const DenoiseView& v, int p) {
  const int x = p % v.width, y = p / v.width;
  return (NforRegress(v, v.halfA, v.halfB, x, y) + NforRegress(v, v.halfB, v.halfA, x, y)) * 0.5f;
}

}  // namespace tracer
