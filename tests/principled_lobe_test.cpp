// @file principled_lobe_test.cpp: the principled lobe (core/principled.h: Blender's Principled BSDF as an MTL's PBR
// keys give it): its sampling against its pdf (chi-square; a smooth coat's delta reflection as one more cell) for the
// sheen, the coat, the anisotropic base and all of them together; its white furnace (1 where nothing absorbs, at most 1
// always); the sheen's albedo by hand; the base against the glossy class it extends; a metal against a dielectric.
//
// Tolerance: every chi-square test here rejects at p < 1 - (1 - 0.01)^(1 / kNumHypothesisTests) (Sidak): a 1%
// false-failure rate for the file when the code is right. The furnace allows kTableError (below) plus 4 standard
// errors of its Monte Carlo estimate.
#include <gtest/gtest.h>

#include "bsdf_test_util.h"

namespace tracer {
namespace {

using test::DirectionFromCos;
using test::FloatName;
using test::McAlbedo;
using test::SampledAlbedo;
using test::Uniform;

// A material as an MTL gives it: the base colour, Pm, Ps, Pc / 4, Pcr, Pr, aniso (the layer: Ni 1.5, Ks 0.5).
struct Pbr {
  Vec3 base;
  float metallic, sheen, coat, coatRoughness, roughness, aniso;
};
std::string Name(const Pbr& p) {
  return "m" + FloatName(p.metallic) + "_s" + FloatName(p.sheen) + "_c" + FloatName(p.coat) + "r" +
         FloatName(p.coatRoughness) + "_r" + FloatName(p.roughness) + "_a" + FloatName(p.aniso);
}

// The lobe as GetBsdf makes it (scene_view.h's GetPrincipled), with its table (the loader's FillPrincipledTable).
// The tables live as long as the test.
// `roughnessMap`: the table as the loader makes it under map_Pr, rows of roughness that b.roughness falls between.
SurfaceBsdf Principled(const Pbr& p, bool roughnessMap = false) {
  static std::vector<std::vector<Float4>> tables;
  const float alpha = std::max(p.roughness * p.roughness, kMinGlossyAlpha);
  const float aspect = AnisotropyAspect(p.aniso);
  const int baseRows = aspect == 1.0f ? 0 : (roughnessMap ? kBaseTableRoughnessRows : 1);
  tables.emplace_back(size_t(PrincipledTableRows(baseRows)) * kPrincipledTableRes);
  FillPrincipledTable(p.coatRoughness * p.coatRoughness, alpha, aspect, baseRows, tables.back().data());
  const float f0 = std::pow(0.5f / 2.5f, 2.0f);  // Ni 1.5 at Blender's level 0.5
  SurfaceBsdf b{kGlossy, p.base, Vec3(f0), alpha, 1.5f};
  b.f90 = 1.0f;
  b.lobe = kLobePrincipled;
  b.metallic = p.metallic;
  b.sheen = p.sheen;
  b.coatWeight = p.coat;
  b.coatAlpha = p.coatRoughness * p.coatRoughness;
  b.coatTable = tables.back().data();
  b.baseRows = baseRows;
  SetPrincipledAlphas(b, aspect);
  return b;
}

// ---- configurations (their sizes define the Sidak family) ---------------------------------------------------
const Vec3 kPaint(0.7f, 0.4f, 0.1f);
const Pbr kSampled[] = {
    {kPaint, 0.0f, 1.0f, 0.0f, 0.03f, 0.5f, 0.0f},   // sheen over a dielectric layer
    {kPaint, 0.0f, 0.0f, 1.0f, 0.4f, 0.6f, 0.0f},    // a rough coat
    {kPaint, 1.0f, 0.0f, 0.0f, 0.03f, 0.5f, 1.0f},   // an anisotropic metal
    {kPaint, 0.0f, 0.0f, 0.0f, 0.03f, 0.45f, 0.7f},  // an anisotropic dielectric layer
    {kPaint, 0.5f, 0.6f, 0.7f, 0.25f, 0.35f, 0.6f},  // all of them, half metal
};
const Pbr kSmoothCoat[] = {{kPaint, 0.0f, 0.5f, 1.0f, 0.03f, 0.4f, 0.0f},
                           {kPaint, 1.0f, 0.0f, 0.5f, 0.0f, 0.45f, 0.8f}};
constexpr float kSampledCos[] = {0.9f, 0.4f, 0.1f};
template <class T, size_t N>
constexpr int Count(const T (&)[N]) {
  return static_cast<int>(N);
}
constexpr int kNumHypothesisTests = (Count(kSampled) + Count(kSmoothCoat)) * Count(kSampledCos);
const double kSignificance = 1.0 - std::pow(1.0 - 0.01, 1.0 / kNumHypothesisTests);

// ---- sampling --------------------------------------------------------------------------------------------------
TEST(PrincipledLobe, SamplingMatchesPdf) {
  uint32_t seed = 7000;
  for (const Pbr& p : kSampled)
    for (float c : kSampledCos) {
      const std::string name = "Principled/" + Name(p) + "_cos" + FloatName(c);
      const SurfaceBsdf b = Principled(p);
      const Vec3 wo = DirectionFromCos(c, 0.7f);  // an azimuth between the anisotropic axes
      const int n = 1000000;
      test::ExpectChi2Passes(name, test::SampleHistogram(b, wo, n, seed++, name),
                             test::ExpectedHistogram(b, wo, n, name, 64), kSignificance);
    }
}

TEST(PrincipledLobe, SmoothCoatSamplingMatchesPdf) {
  // The coat's mirror reflection and the invalid samples (the base's reflections under the horizon) are one more
  // cell, expected with the probability the pdf leaves to them; the mirror samples must be the mirror direction with
  // weight (1 - s Es) c Rc(mu) / their probability.
  uint32_t seed = 7100;
  for (const Pbr& p : kSmoothCoat)
    for (float c : kSampledCos) {
      const std::string name = "PrincipledSmoothCoat/" + Name(p) + "_cos" + FloatName(c);
      const SurfaceBsdf b = Principled(p);
      const Vec3 wo = DirectionFromCos(c, 0.6f);
      const PrincipledAt at = PrincipledAtDir(b, wo);
      const int n = 1000000;
      const std::vector<double> observed =
          test::SampleHistogramWithDelta(b, wo, n, seed++, name, [&](const BsdfSample& s) {
            const bool mirror = s.wi.x == -wo.x && s.wi.y == -wo.y && s.wi.z == wo.z;
            return mirror &&
                   test::RelClose(double(s.f.x) * c / s.pdf, at.sheenPass * p.coat * at.coatRc / at.pCoat, 1e-5);
          });
      test::ExpectChi2Passes(name, observed, test::ExpectedHistogram(b, wo, n, name, 64), kSignificance);
    }
}

// ---- furnace ---------------------------------------------------------------------------------------------------
// What the tables may be off by: their interpolation (linear in sqrt(mu) over 32 texels, in the azimuth over 9 rows)
// and their quadratures (the sheen's 128 x 256 midpoint grid, the coat's 64 x 64, the anisotropic base's 48 x 48 and
// the glossy class's own table). Measured (2 million samples at 6 cosines and 5 azimuths, the cases below): at most
// 3.1e-3, an anisotropic base at grazing. Under a roughness map an anisotropic base's roughness falls between rows
// 1/16 apart: at most 5.6e-3 (r 0.2). With 5 azimuth rows linear in cos^2(phi), or 9 roughness rows, the furnace was
// 6% and 1.7% off.
constexpr double kTableError = 5e-3;
constexpr double kRoughnessRowsError = 1e-2;
const float kFurnaceCos[] = {1.0f, 0.7f, 0.4f, 0.15f, 0.04f};

TEST(PrincipledLobe, WhiteFurnaceKeepsAllLight) {
  // A white base (its layer and the diffuse part keep everything), a white metal, and each layer over them: the
  // albedo at every angle is 1.
  const Vec3 white(1.0f);
  const Pbr cases[] = {
      {white, 0.0f, 0.0f, 0.0f, 0.03f, 0.5f, 0.0f}, {white, 0.0f, 1.0f, 0.0f, 0.03f, 0.5f, 0.0f},
      {white, 0.0f, 0.0f, 1.0f, 0.3f, 0.5f, 0.0f},  {white, 0.0f, 0.0f, 1.0f, 0.03f, 0.5f, 0.0f},
      {white, 1.0f, 0.0f, 0.0f, 0.03f, 0.2f, 1.0f}, {white, 1.0f, 0.0f, 0.0f, 0.03f, 0.55f, 1.0f},
      {white, 1.0f, 0.0f, 0.0f, 0.03f, 0.9f, 0.5f}, {white, 0.0f, 0.0f, 0.0f, 0.03f, 0.5f, 1.0f},
      {white, 1.0f, 0.0f, 1.0f, 0.2f, 0.4f, 0.0f},  {white, 1.0f, 1.0f, 1.0f, 0.03f, 0.7f, 0.8f},
      {white, 0.4f, 0.7f, 0.6f, 0.5f, 0.3f, 0.6f},
  };
  uint32_t seed = 7200;
  for (const Pbr& p : cases) {
    const SurfaceBsdf b = Principled(p);
    for (float c : kFurnaceCos)
      for (float phi : {0.0f, 0.8f, 1.2f, 1.5707964f}) {
        const McAlbedo a = SampledAlbedo(b, DirectionFromCos(c, phi), seed++, 200000);
        EXPECT_NEAR(a.mean, 1.0, kTableError + 4.0 * a.se) << Name(p) << " cos " << c << " phi " << phi;
      }
  }
}

TEST(PrincipledLobe, WhiteFurnaceBetweenRoughnessRows) {
  // An anisotropic white metal under a roughness map: its table has rows of roughness, and these fall between them.
  uint32_t seed = 7250;
  for (float r : {0.3f, 0.55f, 0.7f})
    for (float aniso : {0.5f, 1.0f}) {
      const Pbr p{Vec3(1.0f), 1.0f, 0.0f, 0.0f, 0.03f, r, aniso};
      const SurfaceBsdf b = Principled(p, true);
      for (float c : kFurnaceCos)
        for (float phi : {0.0f, 1.2f}) {
          const McAlbedo a = SampledAlbedo(b, DirectionFromCos(c, phi), seed++, 200000);
          EXPECT_NEAR(a.mean, 1.0, kRoughnessRowsError + 4.0 * a.se) << Name(p) << " cos " << c << " phi " << phi;
        }
    }
}

TEST(PrincipledLobe, NeverGainsEnergy) {
  // Coloured bases under every layer: at most 1 in every channel (the red one here is the largest).
  const Pbr cases[] = {
      {Vec3(1.0f, 0.5f, 0.2f), 0.0f, 1.0f, 1.0f, 0.5f, 0.2f, 0.9f},
      {Vec3(1.0f, 0.8f, 0.3f), 1.0f, 0.5f, 1.0f, 0.03f, 0.9f, 0.3f},
      {Vec3(0.9f, 0.9f, 0.9f), 0.3f, 0.2f, 0.3f, 1.0f, 1.0f, 1.0f},
  };
  uint32_t seed = 7300;
  for (const Pbr& p : cases)
    for (float c : kFurnaceCos) {
      const McAlbedo a = SampledAlbedo(Principled(p), DirectionFromCos(c, 0.4f), seed++, 100000);
      EXPECT_LE(a.mean, 1.0 + kTableError + 4.0 * a.se) << Name(p) << " cos " << c;
    }
}

TEST(PrincipledLobe, LayersTakeWhatTheyReflectFromTheBase) {
  // A black base: the albedo is what the sheen and the coat reflect, s Es(mu) + (1 - s Es(mu)) c Rc(mu), the tables'
  // numbers; with nothing on top, nothing.
  uint32_t seed = 7400;
  for (float c : {0.9f, 0.3f, 0.05f}) {
    const SurfaceBsdf b = Principled({Vec3(0.0f), 0.0f, 0.8f, 0.6f, 0.3f, 0.5f, 0.0f});
    SurfaceBsdf black = b;
    black.ks = Vec3(0.0f);
    black.f90 = 0.0f;
    const Float4 t = TableRowAt(b.coatTable, c);
    const double sheen = 0.8 * t.y, expected = sheen + (1.0 - sheen) * 0.6 * t.x;
    const McAlbedo a = SampledAlbedo(black, DirectionFromCos(c, 0.3f), seed++, 200000);
    EXPECT_NEAR(a.mean, expected, kTableError + 4.0 * a.se) << "cos " << c;
  }
}

// ---- the sheen, the base and the metal ---------------------------------------------------------------------------
TEST(PrincipledLobe, SheenAlbedoByHand) {
  // At normal incidence h is halfway to wi: theta_h = theta_i / 2, and the visibility is 1/4, so f = sin^2(theta_i/2) /
  // (2 pi) and Es(1) = int_0^1 (1 - c) c / 2 dc = 1/12 (c = cos theta_i).
  EXPECT_NEAR(SheenAlbedo(1.0f, 128), 1.0 / 12.0, 1e-5);
  // The albedo grows toward grazing and stays below 1.
  double last = 0.0;
  for (float mu : {1.0f, 0.5f, 0.2f, 0.05f, 0.0f}) {
    const double e = SheenAlbedo(mu, 128);
    EXPECT_GT(e, last) << mu;
    EXPECT_LT(e, 1.0) << mu;
    last = e;
  }
}

TEST(PrincipledLobe, IsotropicBaseIsTheGlossyClass) {
  // Without layers, metal or anisotropy, the lobe is the glossy class's BSDF (the principled lobe's isotropic D and
  // G1 are the same functions written for two alphas: within float rounding).
  for (float r : {0.2f, 0.5f, 0.9f}) {
    const SurfaceBsdf b = Principled({kPaint, 0.0f, 0.0f, 0.0f, 0.03f, r, 0.0f});
    SurfaceBsdf cls = b;
    cls.lobe = kLobeClass;
    std::mt19937 rng(11);
    for (int i = 0; i < 2000; ++i) {
      const Vec3 wo = DirectionFromCos(0.02f + 0.98f * Uniform(rng), 6.28f * Uniform(rng));
      const Vec3 wi = DirectionFromCos(0.02f + 0.98f * Uniform(rng), 6.28f * Uniform(rng));
      const Vec3 f = BsdfEval(b, wo, wi), g = BsdfEval(cls, wo, wi);
      ASSERT_TRUE(test::RelClose(f.x, g.x, 1e-3) && test::RelClose(f.z, g.z, 1e-3))
          << "r " << r << ": " << f.x << " vs " << g.x;
    }
  }
}

TEST(PrincipledLobe, MetalReflectsItsColourAndADielectricWhite) {
  // Pm 1: the specular lobe's reflectance at normal incidence is the base colour, and nothing is diffuse. Pm 0: it is
  // Ni 1.5's 0.04 in every channel, over the base colour's diffuse part. Their mirror peaks (wo = wi = n) differ so,
  // and a metal's albedo is its colour.
  const Vec3 n(0.0f, 0.0f, 1.0f);
  const SurfaceBsdf metal = Principled({kPaint, 1.0f, 0.0f, 0.0f, 0.03f, 0.2f, 0.0f});
  const SurfaceBsdf dielectric = Principled({kPaint, 0.0f, 0.0f, 0.0f, 0.03f, 0.2f, 0.0f});
  const Vec3 sm = PrincipledSpecular(metal, n, n, n), sd = PrincipledSpecular(dielectric, n, n, n);
  EXPECT_NEAR(sm.z / sm.x, kPaint.z / kPaint.x, 1e-5) << "the metal's specular peak has the base's colour";
  EXPECT_EQ(sd.x, sd.z) << "the dielectric's is white";
  EXPECT_NEAR(sm.x / sd.x, kPaint.x / 0.04f, 1e-3 * kPaint.x / 0.04f);
  const Vec3 fm = BsdfEval(metal, n, n), fd = BsdfEval(dielectric, n, n);
  EXPECT_GT(fm.x, 5.0f * fd.x) << "a metal's mirror peak is far brighter";
  // Their albedos at normal incidence: the metal's is its colour; the dielectric's mostly its diffuse base.
  const McAlbedo am = SampledAlbedo(metal, n, 21, 100000);
  EXPECT_NEAR(am.mean, kPaint.x, 0.02);
}

}  // namespace
}  // namespace tracer
