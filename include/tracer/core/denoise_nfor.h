// @file denoise_nfor.h: the regression denoiser's per-pixel arithmetic (--denoise nfor), shared by its three loops: the
// per-pixel reference (NforPixel, the host's and the GPU's naive twin), the host's tiles (host/denoise.h's DenoiseCpu)
// and the GPU's tiles in shared memory (kernels/denoise.cu). All three add the same terms in the same order, so the
// host's two agree bit for bit and the GPU's agree with them up to its rounding (FMA contraction, the hardware's
// reciprocal and exponential). Before them, each half's fireflies are clamped against the other half
// (NforClampOutliersPixel).
//
// First-order regression of the colour on the features in a (2r + 1)^2 window, weighted by non-local means
// (Rousselle, Knaus and Zwicker 2012) of the OTHER half-buffer, each half filtered apart and the two averaged: a
// reduced "Nonlinearly Weighted First-order Regression" (Bitterli, Rousselle, Moon, Iglesias-Guitian, Adler, Mitchell,
// Jarosz and Novak 2016). What it leaves out of the paper is listed in docs/RENDERING.md (Denoising).
//
// The patch distance of pixels p and q = p + o is a sum over the patch of one term per pixel pair (s, s + o). A loop
// over the window's offsets o that computes each pair's term once and sums it over every patch that holds it (the
// fast non-local means of Darbon, Cunha, Chan, Osher and Jensen 2008 and of Condat 2010, here a (2f + 1)^2 box sum
// over a tile) does 1 term per pixel and offset instead of (2f + 1)^2.
#pragma once
#include "tracer/core/denoise.h"

namespace tracer {

// Index of entry (i, j), j <= i, of a packed lower triangle.
TRACER_HD int Tri(int i, int j) { return i * (i + 1) / 2 + j; }

// One half's weighted least squares: the normal equations' lower triangle (packed, Tri) and right-hand sides.
struct NforSystem {
  float m[kNforEntries];
  float r[3 * kNforFeatures];
};

TRACER_HD void NforClear(NforSystem& s) {
  TRACER_UNROLL
  for (int i = 0; i < kNforEntries; ++i) s.m[i] = 0.0f;
  TRACER_UNROLL
  for (int i = 0; i < 3 * kNforFeatures; ++i) s.r[i] = 0.0f;
}

// What a pixel's fit needs of the pixel itself, and (but depthScale) of each neighbour.
struct NforPoint {
  Vec3 albedo, normal;
  float depth;
  float emission;  // Sum3 of the emission seen (EmissionWeightOf)
};

TRACER_HD NforPoint NforPointAt(const DenoiseView& v, int p) {
  return NforPoint{PixelRgb(v.albedo, p), PixelRgb(v.normal, p), v.depth[p], Sum3(PixelRgb(v.emission, p))};
}

// The depth feature's scale at pixel (x, y): 1 / (footprint * radius), 0 where p sees no surface (NforFeatureRow).
TRACER_HD float NforDepthScale(const DenoiseView& v, int x, int y) {
  const int p = y * v.width + x;
  return SeesSurface(v, p) ? 1.0f / (PixelFootprint(v, x, y) * static_cast<float>(v.settings.nforRadius)) : 0.0f;
}

// The reciprocal and the exponential of the weights: on the GPU the hardware's approximations (within a few ulp of the
// exact values; the device's expf already differs from the host's that much), which save the GPU's correctly
// rounded sequences; on the host the exact ones.
TRACER_HD float NlmRcp(float x) {
#if defined(__CUDA_ARCH__)
  return __fdividef(1.0f, x);
#else
  return 1.0f / x;
#endif
}
TRACER_HD float NlmExp(float x) {
#if defined(__CUDA_ARCH__)
  return __expf(x);
#else
  return expf(x);
#endif
}

// One pixel pair's terms of the patch distances (a in p's patch, b at the same place in q's), for both guides at once:
// per channel (d^2 - (u_a + min(u_a, u_b))) / (1e-10 + k^2 (u_a + u_b)), d the guide's difference and u the variance
// of a half's mean: each squared difference less what the noise explains, over what the noise allows. The noise terms
// are the same for both guides, so they are computed once. tA is guide A's term (its weights fit half B), tB guide B's.
TRACER_HD void NlmPairTerms(Vec3 aA, Vec3 aB, Vec3 ua, Vec3 bA, Vec3 bB, Vec3 ub, float k2, float& tA, float& tB) {
  tA = 0.0f;
  tB = 0.0f;
  TRACER_UNROLL
  for (int c = 0; c < 3; ++c) {
    const float u = Axis(ua, c), w = Axis(ub, c);
    const float inv = NlmRcp(1e-10f + k2 * (u + w));
    const float bias = u + Fminf(u, w);
    tA += (Sqr(Axis(aA, c) - Axis(bA, c)) - bias) * inv;
    tB += (Sqr(Axis(aB, c) - Axis(bB, c)) - bias) * inv;
  }
}

// A patch's summed terms to its non-local-means weight: exp(-max(0, mean term)), `invCount` 1 / (3 (2f + 1)^2).
TRACER_HD float NlmWeightOf(float sum, float invCount) { return NlmExp(-Fmaxf(0.0f, sum * invCount)); }

// The regression's features of neighbour q relative to the centre p: 1 (the intercept, which is the estimate at p),
// then the albedo, the normal and the depth as differences from p's, so that p sits at the origin. The depth
// difference is measured in footprints over the window's radius (about -1 to 1 along a plane that fills the window)
// and clamped, so that a pixel behind an edge does not lever the fit; a background pixel has albedo and normal 0,
// which sets it apart.
TRACER_HD void NforFeatureRow(const NforPoint& p, float depthScale, const NforPoint& q, float* f) {
  const Vec3 da = q.albedo - p.albedo, dn = q.normal - p.normal;
  float dz = 0.0f;
  if (p.depth < kDenoiseMissDepth)
    dz = q.depth < kDenoiseMissDepth ? Clamp((q.depth - p.depth) * depthScale, -2.0f, 2.0f) : 2.0f;
  f[0] = 1.0f;
  f[1] = da.x, f[2] = da.y, f[3] = da.z;
  f[4] = dn.x, f[5] = dn.y, f[6] = dn.z;
  f[7] = dz;
}

// Adds neighbour q of colour c and weight w to s (nothing below 1e-6, which would only add rounding).
TRACER_HD void NforAdd(NforSystem& s, float w, const float* f, Vec3 c) {
  if (!(w > 1e-6f)) return;
  TRACER_UNROLL
  for (int i = 0; i < kNforFeatures; ++i) {
    const float wf = w * f[i];
    TRACER_UNROLL
    for (int j = 0; j <= i; ++j) s.m[Tri(i, j)] += wf * f[j];
    s.r[3 * i] += wf * c.x, s.r[3 * i + 1] += wf * c.y, s.r[3 * i + 2] += wf * c.z;
  }
}

// Neighbour q in both halves' systems: `patchA` and `patchB` its patch distances (summed terms) on guides A and B,
// `colorA`, `colorB` its colour in each half. Half A is fitted with guide B's weights and B with A's, so that a half's
// noise does not choose its own weights, which would pull the fit toward it; both stop at emission edges.
TRACER_HD void NforAddNeighbour(const DenoiseSettings& s, const NforPoint& p, float depthScale, const NforPoint& q,
                                Vec3 colorA, Vec3 colorB, float patchA, float patchB, float invCount, NforSystem& fitA,
                                NforSystem& fitB) {
  const float e = EmissionWeightOf(p.emission, q.emission, s.emission);
  float f[kNforFeatures];
  NforFeatureRow(p, depthScale, q, f);
  NforAdd(fitA, NlmWeightOf(patchB, invCount) * e, f, colorA);
  NforAdd(fitB, NlmWeightOf(patchA, invCount) * e, f, colorB);
}

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

// A half's fit at p from its summed system (overwritten). A ridge (settings.nforRidge times the weight sum) on every
// slope keeps a slope at 0 where its feature does not vary (a flat wall), so the fit is the weighted mean there; a fit
// that fails falls back to that mean. The centre pixel weighs 1, so the weight sum is at least 1.
TRACER_HD Vec3 NforSolve(NforSystem& s, float ridge) {
  const float wsum = s.m[0];
  const Vec3 mean = Vec3(s.r[0], s.r[1], s.r[2]) / wsum;
  TRACER_UNROLL
  for (int i = 1; i < kNforFeatures; ++i) s.m[Tri(i, i)] += ridge * wsum;
  Vec3 fit;
  if (!SolveIntercept(s.m, s.r, fit) || !IsFinite(fit)) return mean;
  return Max(fit, Vec3(0.0f));  // a fit can overshoot below 0 where the window holds an edge; light cannot
}

// The denoised colour from both halves' systems: the mean of their fits.
TRACER_HD Vec3 NforFinish(const DenoiseSettings& settings, NforSystem& fitA, NforSystem& fitB) {
  return (NforSolve(fitA, settings.nforRidge) + NforSolve(fitB, settings.nforRidge)) * 0.5f;
}

// 1 / (3 (2f + 1)^2): a patch distance's sum to its mean.
TRACER_HD float NlmInvCount(const DenoiseSettings& s) {
  return 1.0f / static_cast<float>(3 * Sqr(2 * s.nforPatch + 1));
}

// ---- fireflies ------------------------------------------------------------------------------------------------------
// A firefly is a sample far brighter than its pixel's others, so it lands in one half only. Left alone it would enter
// that half's fit at full weight (the weights come from the other half, where it is absent), and it would inflate the
// noise estimated around it, which makes every patch that holds it look alike and so draws weight toward it. Before
// the variance and the fits, each pixel's halves A and B are compared with the differences of its 5x5 neighbours (the
// pixel left out, edges dropped): where |A - B|^2 exceeds settings.nforOutlier times their mean |A' - B'|^2, the
// brighter half (by Sum3) is moved toward the other until it does not (the difference scaled by sqrt(bound / |A -
// B|^2), its direction kept). Noise that the neighbours share passes untouched; the firefly's excess is dropped, a
// bias toward darker where fireflies carry much of the light, which relMSE rewards over spreading them.
constexpr int kNforOutlierRadius = 2;

TRACER_HD void NforClampOutliersPixel(const DenoiseView& v, int p, float* cleanA, float* cleanB) {
  const int x = p % v.width, y = p / v.width;
  Vec3 a = PixelRgb(v.halfA, p), b = PixelRgb(v.halfB, p);
  const Vec3 d = a - b;
  float around = 0.0f;
  int n = 0;
  for (int dy = -kNforOutlierRadius; dy <= kNforOutlierRadius; ++dy)
    for (int dx = -kNforOutlierRadius; dx <= kNforOutlierRadius; ++dx) {
      const int qx = x + dx, qy = y + dy;
      if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      const int q = qy * v.width + qx;
      const Vec3 e = PixelRgb(v.halfA, q) - PixelRgb(v.halfB, q);
      around += Dot(e, e);
      ++n;
    }
  // 1e-20: a difference among neighbours that have none is an outlier whatever its size.
  const float bound = v.settings.nforOutlier * around / static_cast<float>(n > 0 ? n : 1) + 1e-20f;
  const float d2 = Dot(d, d);
  if (v.settings.nforOutlier > 0.0f && d2 > bound) {
    const float scale = sqrtf(bound / d2);
    if (Sum3(d) > 0.0f)
      a = b + d * scale;
    else
      b = a - d * scale;
  }
  StoreRgb(cleanA, p, a);
  StoreRgb(cleanB, p, b);
}

// ---- the per-pixel reference (and naive twin) ---------------------------------------------------------------------
// Pixel p's denoised colour, every patch distance summed on its own: (2f + 1)^2 terms per neighbour. Patch pixels
// outside the image are clamped to its edge; window pixels outside it are left out. A patch's terms are summed row by
// row (each row's sum, then the rows'), as the tiled loops sum them.
TRACER_HD Vec3 NforPixel(const DenoiseView& v, int p) {
  const DenoiseSettings& s = v.settings;
  const int x = p % v.width, y = p / v.width, radius = s.nforRadius, f = s.nforPatch;
  const float k2 = s.nforK * s.nforK, invCount = NlmInvCount(s);
  const NforPoint centre = NforPointAt(v, p);
  const float depthScale = NforDepthScale(v, x, y);
  NforSystem fitA, fitB;
  NforClear(fitA);
  NforClear(fitB);
  for (int oy = -radius; oy <= radius; ++oy)
    for (int ox = -radius; ox <= radius; ++ox) {
      const int qx = x + ox, qy = y + oy;
      if (qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      float patchA = 0.0f, patchB = 0.0f;
      for (int dy = -f; dy <= f; ++dy) {
        float rowA = 0.0f, rowB = 0.0f;
        for (int dx = -f; dx <= f; ++dx) {
          const int a = ClampInt(y + dy, 0, v.height - 1) * v.width + ClampInt(x + dx, 0, v.width - 1);
          const int b = ClampInt(qy + dy, 0, v.height - 1) * v.width + ClampInt(qx + dx, 0, v.width - 1);
          float tA, tB;
          NlmPairTerms(PixelRgb(v.halfA, a), PixelRgb(v.halfB, a), PixelRgb(v.variance, a), PixelRgb(v.halfA, b),
                       PixelRgb(v.halfB, b), PixelRgb(v.variance, b), k2, tA, tB);
          rowA += tA;
          rowB += tB;
        }
        patchA += rowA;
        patchB += rowB;
      }
      const int q = qy * v.width + qx;
      NforAddNeighbour(s, centre, depthScale, NforPointAt(v, q), PixelRgb(v.halfA, q), PixelRgb(v.halfB, q), patchA,
                       patchB, invCount, fitA, fitB);
    }
  return NforFinish(s, fitA, fitB);
}

}  // namespace tracer
