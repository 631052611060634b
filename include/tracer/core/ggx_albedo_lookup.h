// @file ggx_albedo_lookup.h: lookups into the GGX albedo tables of core/ggx_albedo_table.h (host/ggx_albedo.h says
// what they hold), shared by the glossy class (material.h) and the coated lobe (lobes.h).
#pragma once
#include "tracer/core/ggx_albedo_table.h"
#include "tracer/core/math.h"

namespace tracer {

namespace detail {
// One copy for host code and one in device memory, from the same generated numbers.
inline constexpr float kGgxAlbedoHost[] = {TRACER_GGX_ALBEDO_TABLE_DATA};
#if defined(__CUDACC__)
static __device__ const float kGgxAlbedoDevice[] = {TRACER_GGX_ALBEDO_TABLE_DATA};
#endif
}  // namespace detail
constexpr int kGgxAlbedoAvgOffset = kGgxAlbedoRes * kGgxAlbedoRes * 2;
static_assert(sizeof(detail::kGgxAlbedoHost) == sizeof(float) * (kGgxAlbedoAvgOffset + kGgxAlbedoRes * 2),
              "ggx_albedo_table.h: (E, E5) per (roughness, mu), then (Eavg, E5avg) per roughness");

TRACER_HD float GgxAlbedoEntry(int i) {
#if TRACER_ON_DEVICE
  return __ldg(&detail::kGgxAlbedoDevice[i]);
#else
  return detail::kGgxAlbedoHost[i];
#endif
}

// (E, E5) of GGX at one direction: albedo with Fresnel 1, and its part weighted by Schlick's (1 - wo.h)^5.
struct GgxAlbedo {
  float e, e5;
};

// Where roughness r = sqrt(alpha) falls in the table: row and fraction (shared by the 2D and 1D lookups).
struct GgxAlbedoRow {
  int i;
  float t;
};
TRACER_HD GgxAlbedoRow GgxAlbedoRowOf(float alpha) {
  float y = SafeSqrt(alpha) * static_cast<float>(kGgxAlbedoRes - 1);
  int i = static_cast<int>(y);
  i = i < 0 ? 0 : (i > kGgxAlbedoRes - 2 ? kGgxAlbedoRes - 2 : i);
  return {i, Clamp(y - static_cast<float>(i), 0.0f, 1.0f)};
}
// Bilinear in (roughness, sqrt(cos theta)), the table's axes.
TRACER_HD GgxAlbedo LookupGgxAlbedo(GgxAlbedoRow row, float mu) {
  float x = SafeSqrt(Fminf(mu, 1.0f)) * static_cast<float>(kGgxAlbedoRes - 1);
  int j = static_cast<int>(x);
  j = j > kGgxAlbedoRes - 2 ? kGgxAlbedoRes - 2 : j;
  float s = x - static_cast<float>(j);
  int k = (row.i * kGgxAlbedoRes + j) * 2;
  float e0 = GgxAlbedoEntry(k) + s * (GgxAlbedoEntry(k + 2) - GgxAlbedoEntry(k));
  float f0 = GgxAlbedoEntry(k + 1) + s * (GgxAlbedoEntry(k + 3) - GgxAlbedoEntry(k + 1));
  k += kGgxAlbedoRes * 2;
  float e1 = GgxAlbedoEntry(k) + s * (GgxAlbedoEntry(k + 2) - GgxAlbedoEntry(k));
  float f1 = GgxAlbedoEntry(k + 1) + s * (GgxAlbedoEntry(k + 3) - GgxAlbedoEntry(k + 1));
  return {e0 + row.t * (e1 - e0), f0 + row.t * (f1 - f0)};
}
// The cosine-weighted averages (Eavg, E5avg), linear in roughness.
TRACER_HD GgxAlbedo LookupGgxAlbedoAvg(GgxAlbedoRow row) {
  int k = kGgxAlbedoAvgOffset + row.i * 2;
  float e = GgxAlbedoEntry(k) + row.t * (GgxAlbedoEntry(k + 2) - GgxAlbedoEntry(k));
  float e5 = GgxAlbedoEntry(k + 1) + row.t * (GgxAlbedoEntry(k + 3) - GgxAlbedoEntry(k + 1));
  return {e, e5};
}

}  // namespace tracer
