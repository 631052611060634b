// @file pbrt_loader_lights.cpp: pbrt-v4's lights onto the renderer's environment and delta lights (see
// pbrt_loader_lights.h), and pbrt-v4's equal-area sphere mapping (scene_loader.h). Parameters and defaults are
// pbrt-v4's (src/pbrt/lights.cpp: Light::Create and the lights' Create functions).
#include "pbrt_loader_lights.h"

#include <algorithm>
#include <cmath>

#include "pbrt_loader_spectra.h"
#include "pbrt_loader_textures.h"
#include "tracer/core/environment.h"

namespace tracer {

// Clarberg's mapping (pbrt-v4's EqualAreaSquareToSphere): with (u', v') = 2 (u, v) - 1, the signed distance of
// (|u'|, |v'|) from the diagonal |u'| + |v'| = 1 sets the height z = +-(1 - r^2), r = 1 - |distance|, and the
// position along the diamond of radius r the angle phi in the quadrant of (u', v').
Vec3 EqualAreaSquareToSphere(float u, float v) {
  const double su = 2.0 * double(u) - 1.0, sv = 2.0 * double(v) - 1.0;
  const double au = std::fabs(su), av = std::fabs(sv);
  const double signedDistance = 1.0 - (au + av), r = 1.0 - std::fabs(signedDistance);
  const double phi = (r == 0.0 ? 1.0 : (av - au) / r + 1.0) * 3.14159265358979323846 / 4.0;
  const double z = std::copysign(1.0 - r * r, signedDistance);
  const double planar = r * std::sqrt(std::max(0.0, 2.0 - r * r));
  return Vec3(float(std::copysign(std::cos(phi), su) * planar), float(std::copysign(std::sin(phi), sv) * planar),
              float(z));
}

// The inverse, exactly (pbrt-v4 evaluates the arctangent by a polynomial): r = sqrt(1 - |z|), and on the northern
// diamond |u'| + |v'| = r with |v'| = r 2 phi / pi; the southern half mirrors it about the diagonal.
void EqualAreaSphereToSquare(Vec3 d, float& u, float& v) {
  const double x = std::fabs(double(d.x)), y = std::fabs(double(d.y)), z = double(d.z);
  const double r = std::sqrt(std::max(0.0, 1.0 - std::fabs(z)));
  const double phi = (x == 0.0 && y == 0.0) ? 0.0 : std::atan2(y, x);
  double av = r * phi * 2.0 / 3.14159265358979323846, au = r - av;
  if (z < 0.0) {
    const double nu = au;
    au = 1.0 - av;
    av = 1.0 - nu;
  }
  u = float(0.5 * (std::copysign(au, double(d.x)) + 1.0));
  v = float(0.5 * (std::copysign(av, double(d.y)) + 1.0));
}

namespace pbrtload {
namespace {

constexpr int kMaxLatLongHeight = 1024;  // the lat-long map's rows at most (its width is twice that)

// The illuminance of an equal-area image on a surface facing +z of the light's frame, as pbrt-v4's "illuminance"
// normalisation computes it (ImageInfiniteLight in Light::Create): the sum over texels with z > 0 of luminance times
// cos(theta), times 2 pi / N^2. A texel covers 4 pi / N^2, so that is half the image's illuminance, and pbrt's image
// then gives twice the illuminance asked for; kept, so that the scene renders as pbrt renders it.
double UpperIlluminance(const Texture& image) {
  double sum = 0.0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const Vec3 w =
          EqualAreaSquareToSphere((float(x) + 0.5f) / float(image.width), (float(y) + 0.5f) / float(image.height));
      if (w.z <= 0.0f) continue;
      const Float4& t = image.texels[size_t(y) * size_t(image.width) + size_t(x)];
      sum += double(Luminance(Vec3(t.x, t.y, t.z))) * double(w.z);
    }
  return sum * 2.0 * 3.14159265358979323846 / (double(image.width) * double(image.height));
}

// The equal-area image as a lat-long map in the Scene's frame: each lat-long texel the mean of 2 x 2 lookups of the
// nearest square texel (pbrt-v4's ImageLe looks up the nearest texel), through the light's transform.
void ToLatLong(const PbrtLoad& load, const PbrtLight& light, const Texture& image, float scale, SceneEnvironment* env) {
  const int height = std::min(image.height, kMaxLatLongHeight), width = 2 * height, side = image.width;
  const PbrtTransform lightFromWorld = light.objectToWorld.Inverse();
  env->width = width;
  env->height = height;
  env->rgb.assign(size_t(width) * size_t(height) * 3, 0.0f);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      Vec3 sum(0.0f);
      for (int s = 0; s < 4; ++s) {
        float sinTheta;
        const float u = (float(x) + 0.25f + 0.5f * float(s & 1)) / float(width);
        const float v = (float(y) + 0.25f + 0.5f * float(s >> 1)) / float(height);
        const Vec3 world = load.ToPbrtDirection(EnvDirection(u, v, sinTheta));
        const Vec3 w = Normalize(ToVec3(lightFromWorld.ApplyVector({world.x, world.y, world.z})));
        float su, sv;
        EqualAreaSphereToSquare(w, su, sv);
        const int px = std::clamp(int(su * float(side)), 0, side - 1),
                  py = std::clamp(int(sv * float(side)), 0, side - 1);
        const Float4& t = image.texels[size_t(py) * size_t(side) + size_t(px)];
        sum = sum + Vec3(t.x, t.y, t.z);
      }
      const size_t i = 3 * (size_t(y) * size_t(width) + size_t(x));
      for (int c = 0; c < 3; ++c) env->rgb[i + size_t(c)] = std::max(0.0f, sum[c] * 0.25f * scale);
    }
}

// The infinite light's "point3 portal": four corners of a quad over the opening through which the environment lights
// the scene, in world space (pbrt-v4 applies no CTM to them), kept as two triangles (0 1 2, 0 2 3) for sampling
// (core/portals.h). pbrt-v4 wants a rectangle; any quad serves here.
void AddPortal(PbrtLoad& load, const PbrtLight& light) {
  if (!light.params.Has("portal")) return;
  const std::vector<double> v = light.params.GetFloats("portal");
  bool finite = v.size() == 12;
  for (double x : v) finite = finite && std::isfinite(float(x));
  if (!finite) {
    load.WarnKind("portal", light.loc,
                  "LightSource \"infinite\": \"portal\" needs 4 finite points (12 numbers), not " +
                      std::to_string(v.size()) + " numbers; ignored");
    return;
  }
  Vec3 p[4];
  for (int i = 0; i < 4; ++i) p[i] = Vec3(float(v[3 * i]), float(v[3 * i + 1]), float(v[3 * i + 2]));
  for (int k : {0, 1, 2, 0, 2, 3}) load.scene.portals.push_back(p[k]);
}

void AddInfinite(PbrtLoad& load, const PbrtLight& light) {
  SceneEnvironment& env = load.scene.environment;
  env.source = light.loc.ToString();
  float scale = float(light.params.GetFloat("scale", 1.0));
  const double illuminance = light.params.GetFloat("illuminance", -1.0);
  const std::string file = light.params.GetString("filename", "");
  if (file.empty()) {
    Vec3 l(1.0f);  // default: the colour space's illuminant
    SpectrumRgb(load, light.params, "L", SpectrumUse::kIlluminant, &l);
    if (illuminance > 0.0) scale *= float(illuminance / 3.14159265358979323846);  // a uniform sky gives E = pi L
    env.present = true;
    env.color = l * scale;
    AddPortal(load, light);
    return;
  }
  Texture image;
  std::string why = ReadPbrtImage(load, file, ImageRead(), &image);
  if (why.empty() && image.width != image.height)
    why = "is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
          ", not square: pbrt-v4's infinite lights take equal-area (octahedral) square images";
  if (!why.empty()) {
    load.Warn(light.loc, "LightSource \"infinite\": image \"" + file + "\" " + why + "; rendered without it");
    return;
  }
  if (illuminance > 0.0) {
    const double e = UpperIlluminance(image);
    if (e > 0.0) scale *= float(illuminance / e);
  }
  ToLatLong(load, light, image, scale, &env);
  env.present = true;
  AddPortal(load, light);
}

// A point3 parameter, or `fallback` where there is none of three numbers.
PbrtVec3 Point3(const PbrtParams& params, const char* name, PbrtVec3 fallback) {
  const std::vector<double> v = params.GetFloats(name);
  return v.size() == 3 ? PbrtVec3{v[0], v[1], v[2]} : fallback;
}

Vec3 ToUnit(const PbrtVec3& v) {
  const double len = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return len > 0.0 ? Vec3(float(v[0] / len), float(v[1] / len), float(v[2] / len)) : Vec3(0.0f);
}

// The spot light's frame rows (DeltaLight::frame): pbrt-v4 turns the direction from "from" to "to" into +z
// (Frame::FromZ) after the CTM's inverse, so a world direction w has light-frame coordinates F C^-1 w, F the rows of
// any orthonormal frame whose z is that axis (only the z coordinate and the length matter) and C the CTM's upper
// 3x3. Row i of F C^-1 is C^-T f_i: the CTM applied to f_i as a normal.
void SpotFrame(const PbrtTransform& toWorld, Vec3 axis, DeltaLight* light) {
  const Vec3 helper = std::fabs(axis.x) < 0.9f ? Vec3(1.0f, 0.0f, 0.0f) : Vec3(0.0f, 1.0f, 0.0f);
  const Vec3 x = Normalize(Cross(helper, axis)), y = Cross(axis, x);
  const Vec3 f[3] = {x, y, axis};
  for (int i = 0; i < 3; ++i) {
    const Vec3 row = ToVec3(toWorld.ApplyNormal({f[i].x, f[i].y, f[i].z}));
    light->frame[i] = Float4{row.x, row.y, row.z, 0.0f};
  }
}

// "point", "spot" and "distant": their RGB as it is (an illuminant spectrum renders as its RGB, as for area lights),
// times "scale", with "power" (point, spot) or "illuminance" (distant) normalised as pbrt-v4 does; positions and
// directions through the CTM at the light.
void AddDelta(PbrtLoad& load, const PbrtLight& light) {
  const PbrtParams& params = light.params;
  const PbrtTransform& toWorld = light.objectToWorld;
  double scale = params.GetFloat("scale", 1.0);
  DeltaLight d{};
  Vec3 rgb(1.0f);  // default: the colour space's illuminant
  if (light.type == "distant") {
    SpectrumRgb(load, params, "L", SpectrumUse::kIlluminant, &rgb);
    // pbrt-v4 measures "illuminance" on a surface facing the light: E = L E_v for a white L.
    const double illuminance = params.GetFloat("illuminance", -1.0);
    if (illuminance > 0.0) scale *= illuminance;
    const PbrtVec3 from = Point3(params, "from", {0, 0, 0}), to = Point3(params, "to", {0, 0, 1});
    const Vec3 w = ToUnit(toWorld.ApplyVector({from[0] - to[0], from[1] - to[1], from[2] - to[2]}));
    if (IsBlack(w)) {
      load.Warn(light.loc, "LightSource \"distant\": \"from\" and \"to\" are the same point; left out");
      return;
    }
    d.p = Float4{w.x, w.y, w.z, FloatFromBits(uint32_t(kDistantLight))};
  } else {
    SpectrumRgb(load, params, "I", SpectrumUse::kIlluminant, &rgb);
    const PbrtVec3 from = Point3(params, "from", {0, 0, 0});
    const Vec3 p = ToVec3(toWorld.ApplyPoint(from));
    const bool spot = light.type == "spot";
    d.p = Float4{p.x, p.y, p.z, FloatFromBits(uint32_t(spot ? kSpotLight : kPointLight))};
    double solidAngle = 4.0 * 3.14159265358979323846;  // pbrt's k_e: the power of I = 1
    if (spot) {
      const double cone = params.GetFloat("coneangle", 30.0), delta = params.GetFloat("conedeltaangle", 5.0);
      const PbrtVec3 to = Point3(params, "to", {0, 0, 1});
      const Vec3 axis = ToUnit({to[0] - from[0], to[1] - from[1], to[2] - from[2]});
      if (IsBlack(axis) || delta < 0.0) {
        load.Warn(light.loc,
                  std::string("LightSource \"spot\": ") +
                      (delta < 0.0 ? "a negative \"conedeltaangle\"" : "\"from\" and \"to\" are the same point") +
                      "; left out");
        return;
      }
      const double radians = 3.14159265358979323846 / 180.0;
      const double cosEnd = std::cos(cone * radians), cosStart = std::cos((cone - delta) * radians);
      SpotFrame(toWorld, axis, &d);
      d.frame[0].w = float(cosEnd);
      d.frame[1].w = float(cosStart);
      solidAngle = 2.0 * 3.14159265358979323846 * ((1.0 - cosStart) + (cosStart - cosEnd) / 2.0);
    }
    const double power = params.GetFloat("power", -1.0);
    if (power > 0.0 && solidAngle > 0.0) scale *= power / solidAngle;
  }
  const Vec3 e = Max(rgb * float(scale), Vec3(0.0f));
  d.e = Float4{e.x, e.y, e.z, 0.0f};
  if (!(MaxComponent(e) > 0.0f)) {
    load.Warn(light.loc, "LightSource \"" + light.type + "\" emits nothing (black, or a scale of 0 or less); left out");
    return;
  }
  if (!IsFinite(e) || !IsFinite(Vec3(d.p.x, d.p.y, d.p.z))) {
    load.Warn(light.loc, "LightSource \"" + light.type + "\": its intensity or position overflows a float; left out");
    return;
  }
  load.scene.deltaLights.push_back(d);
}

}  // namespace

void AddPbrtLights(PbrtLoad& load) {
  for (const PbrtLight& light : load.pbrt.lights) {
    if (light.colorSpace != "srgb")
      load.WarnKind("colorspace", light.loc,
                    "colour space \"" + light.colorSpace + "\" is not supported yet; its RGB values are used as sRGB");
    if (light.type == "infinite" && !load.scene.environment.present) {
      AddInfinite(load, light);
    } else if (light.type == "infinite") {
      load.WarnKind("infinite-more", light.loc,
                    "LightSource \"infinite\": the renderer has one environment; only the first infinite light (" +
                        load.scene.environment.source + ") is rendered");
    } else if (light.type == "point" || light.type == "spot" || light.type == "distant") {
      AddDelta(load, light);
    } else {
      load.WarnKind("light:" + light.type, light.loc,
                    "LightSource \"" + light.type +
                        "\" is not rendered yet (the renderer has area, point, spot and distant lights and one "
                        "environment); left out");
    }
  }
}

}  // namespace pbrtload
}  // namespace tracer
