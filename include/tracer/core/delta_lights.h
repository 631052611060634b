// @file delta_lights.h: lights of no extent (pbrt-v4's "point", "spot" and "distant"): the record the scene holds
// for each, and the light one of them casts on a point. Only next-event estimation reaches them: a BSDF-sampled ray
// never hits a point or a direction, so they carry no MIS weight (light.h picks them; integrator.h shades them).
//
// Units, as pbrt-v4 defines them (src/pbrt/lights.h): a point light of intensity I gives a point at distance d the
// irradiance I cos / d^2 (normal incidence: I / d^2); a spot light the same times its falloff, pbrt's smoothstep of
// the cosine to its axis between cos(coneangle) and cos(coneangle - conedeltaangle); a distant light the irradiance
// E cos from one direction. The RGB values are the radiometric ones, per channel.
#pragma once
#include "tracer/core/math.h"

namespace tracer {

enum DeltaLightKind : int32_t { kPointLight = 0, kSpotLight = 1, kDistantLight = 2 };

// One light (80 bytes, five 16-byte loads; a point or distant light needs the first two only):
//   p: point, spot: position; distant: unit direction toward the light. w: the kind, as int bits.
//   e: point, spot: intensity I; distant: irradiance E at normal incidence. w: unused (0).
//   frame[0..2]: spot only: the rows of the linear map from world directions into the light's frame, whose +z is the
//   axis (the inverse of the light's transform, so that a sheared or scaled one measures angles as pbrt does);
//   frame[0].w = cos of the full cone (falloff end), frame[1].w = cos of the inner cone (falloff start).
struct alignas(16) DeltaLight {
  Float4 p, e;
  Float4 frame[3];
};
static_assert(sizeof(DeltaLight) == 80, "delta light record: five 16-byte loads");

// pbrt-v4's SmoothStep(x, a, b): 0 below a, 1 above b, 3t^2 - 2t^3 of t = (x - a) / (b - a) between; a step at a
// when a == b.
TRACER_HD float SmoothStep(float x, float a, float b) {
  if (a == b) return x < a ? 0.0f : 1.0f;
  const float t = Clamp((x - a) / (b - a), 0.0f, 1.0f);
  return t * t * (3.0f - 2.0f * t);
}

// A spot light's falloff toward world direction w (from the light, any length).
template <bool kLdg>
TRACER_HD float SpotFalloff(const DeltaLight* l, Vec3 w) {
  const Float4 r0 = Load4<kLdg>(&l->frame[0]), r1 = Load4<kLdg>(&l->frame[1]), r2 = Load4<kLdg>(&l->frame[2]);
  const Vec3 local(r0.x * w.x + r0.y * w.y + r0.z * w.z, r1.x * w.x + r1.y * w.y + r1.z * w.z,
                   r2.x * w.x + r2.y * w.y + r2.z * w.z);
  const float len = Length(local);
  if (!(len > 0.0f)) return 0.0f;
  return SmoothStep(local.z / len, r0.w, r1.w);
}

// The light a delta light casts on point x: the unit direction toward it, the irradiance it gives a surface facing
// it there (I falloff / d^2, or E), and where a shadow ray must reach (its position; none for a distant light).
struct DeltaIncidence {
  Vec3 wi;
  Vec3 li;
  Vec3 target;    // point and spot lights: the light's position
  bool infinite;  // distant: the shadow ray goes to infinity
};

template <bool kLdg>
TRACER_HD DeltaIncidence DeltaLightAt(const DeltaLight* l, Vec3 x) {
  const Float4 p = Load4<kLdg>(&l->p), e = Load4<kLdg>(&l->e);
  const int32_t kind = static_cast<int32_t>(BitsFromFloat(p.w));
  DeltaIncidence di;
  di.li = Vec3(e.x, e.y, e.z);
  if (kind == kDistantLight) {
    di.wi = Vec3(p.x, p.y, p.z);
    di.target = x;
    di.infinite = true;
    return di;
  }
  di.target = Vec3(p.x, p.y, p.z);
  di.infinite = false;
  const Vec3 toLight = di.target - x;
  const float d2 = Dot(toLight, toLight);
  if (!(d2 > 0.0f)) {  // at the light itself: no direction, no light
    di.wi = Vec3(0.0f, 0.0f, 1.0f);
    di.li = Vec3(0.0f);
    return di;
  }
  di.wi = toLight / sqrtf(d2);
  const float falloff = kind == kSpotLight ? SpotFalloff<kLdg>(l, -toLight) : 1.0f;
  di.li = di.li * (falloff / d2);
  return di;
}

}  // namespace tracer
