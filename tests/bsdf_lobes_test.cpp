// @file bsdf_lobes_test.cpp: the lobes of pbrt-v4's materials (core/lobes.h) but the coated one (coated_lobe_test.cpp):
// the conductor's exact Fresnel against values computed by hand and by complex arithmetic, the anisotropic GGX's
// normalisation, chi-square tests of each lobe's sampling against its pdf, and white furnaces (at most 1, and 1 where
// nothing can be lost).
//
// Tolerance: as in bsdf_test.cpp, every hypothesis test here (chi-square, binomial z, furnace z)
// rejects at p < 1 - (1 - 0.01)^(1 / kNumHypothesisTests) (Sidak): a 1% false-failure rate for the file when the code
// is right. Seeds are fixed, so a result reproduces exactly.
#include <gtest/gtest.h>

#include <complex>

#include "bsdf_test_util.h"

namespace tracer {
namespace {

using test::DirectionFromCos;
using test::ExpectedHistogram;
using test::FloatName;
using test::IntegrateSphereBins;
using test::McAlbedo;
using test::NormalTwoSidedP;
using test::RelClose;
using test::SampledAlbedo;
using test::SampleHistogram;
using test::Uniform;

// ---- configurations (their sizes define the Sidak family) ---------------------------------------------------
struct Alphas {
  float x, y;
};
constexpr Alphas kConductorAlphas[] = {{0.2f, 0.2f}, {0.5f, 0.5f}, {0.2f, 0.6f}};
constexpr float kReflectCos[] = {0.9f, 0.5f, 0.1f};
constexpr Alphas kGlassAlphas[] = {{0.2f, 0.2f}, {0.5f, 0.5f}, {0.15f, 0.4f}};
constexpr float kGlassCos[] = {0.9f, 0.6f, -0.9f, -0.5f, -0.2f};  // negative: inside
constexpr float kThinCos[] = {0.9f, 0.4f, 0.05f};
constexpr float kTransmitCos[] = {0.8f, -0.6f};
template <class T, size_t N>
constexpr int Count(const T (&)[N]) {
  return static_cast<int>(N);
}
constexpr int kNumHypothesisTests = 2 * Count(kConductorAlphas) * Count(kReflectCos)  // chi2, furnace vs quadrature
                                    + 2 * Count(kGlassAlphas) * Count(kGlassCos)      // the same, rough dielectric
                                    + Count(kThinCos) + Count(kTransmitCos);  // thin: binomial; transmission: chi2
const double kSignificance = 1.0 - std::pow(1.0 - 0.01, 1.0 / kNumHypothesisTests);

void ExpectChi2Passes(const std::string& name, const std::vector<double>& observed,
                      const std::vector<double>& expected) {
  test::ExpectChi2Passes(name, observed, expected, kSignificance);
}
// A z-test of an estimate (mean, standard error) against an expected value.
void ExpectZPasses(const std::string& name, double mean, double se, double expected) {
  const double z = (mean - expected) / se;
  test::Report(name, "z", z, 0, NormalTwoSidedP(z), kSignificance);
  EXPECT_GE(NormalTwoSidedP(z), kSignificance) << name << ": " << mean << " +- " << se << ", expected " << expected;
}
void ExpectSamplingMatchesPdf(const std::string& name, const SurfaceBsdf& b, Vec3 wo, uint32_t seed, int sub = 32) {
  const int n = 1000000;
  ExpectChi2Passes(name, SampleHistogram(b, wo, n, seed, name), ExpectedHistogram(b, wo, n, name, sub));
}
std::string AlphaName(Alphas a) { return "alpha" + FloatName(a.x) + (a.x == a.y ? "" : "x" + FloatName(a.y)); }

SurfaceBsdf Lobe(int32_t cls, int32_t lobe, Vec3 kd, Alphas a, float ior = 1.5f) {
  SurfaceBsdf b{cls, kd, Vec3(0.0f), a.x, ior};
  b.lobe = lobe;
  b.alphaY = a.y;
  return b;
}
SurfaceBsdf Conductor(Vec3 eta, Vec3 k, Alphas a) {
  SurfaceBsdf b = Lobe(kGlossy, kLobeConductor, eta, a);
  b.k = k;
  return b;
}
// Copper's eta and k at 630, 532 and 465 nm (veach-mis's plates).
const Vec3 kCuEta(0.200438f, 0.924033f, 1.102212f), kCuK(3.912949f, 2.452848f, 2.142188f);

// Albedo E[f |cos| / pdf] of the red channel by the BSDF's own sampling, for wo on either side.
McAlbedo Albedo(const SurfaceBsdf& b, Vec3 wo, uint32_t seed, int n) { return SampledAlbedo(b, wo, seed, n); }
// The same integral by quadrature of BsdfEval over the sphere (bsdf_test_util.h's Simpson grid).
double QuadratureAlbedo(const SurfaceBsdf& b, Vec3 wo) {
  const std::vector<double> q =
      IntegrateSphereBins([&](Vec3 wi) { return double(BsdfEval(b, wo, wi).x) * AbsCosTheta(wi); });
  return std::accumulate(q.begin(), q.end(), 0.0);
}

// ---- the conductor's Fresnel ----------------------------------------------------------------------------------
// The Fresnel equations in complex arithmetic (Born and Wolf 1999, sec. 14.2): cos_t = sqrt(1 - sin^2 / n^2),
// r_s = (cos - n cos_t) / (cos + n cos_t), r_p = (n cos - cos_t) / (n cos + cos_t), R = (|r_s|^2 + |r_p|^2) / 2, for
// n = eta + i k. An independent statement of what FresnelConductor's real closed form should return.
double ComplexFresnel(double c, double eta, double k) {
  const std::complex<double> n(eta, k);
  const std::complex<double> ct = std::sqrt(1.0 - (1.0 - c * c) / (n * n));
  const std::complex<double> rs = (c - n * ct) / (c + n * ct), rp = (n * c - ct) / (n * c + ct);
  return 0.5 * (std::norm(rs) + std::norm(rp));
}

TEST(ConductorLobe, FresnelMatchesHandValues) {
  // Copper in red (veach-mis): at normal incidence ((eta - 1)^2 + k^2) / ((eta + 1)^2 + k^2) = 15.9502 / 16.7521;
  // at cos 0.5 and 0.1 evaluated by hand from the complex form (Python's cmath, 6 digits). Its dip below the normal
  // value before grazing is what Schlick's curve, which only rises, cannot show. Float evaluation: 2e-6 absolute.
  EXPECT_NEAR(FresnelConductor(1.0f, 0.200438f, 3.912949f), 0.952141f, 2e-6f);
  EXPECT_NEAR(FresnelConductor(0.5f, 0.200438f, 3.912949f), 0.946064f, 2e-6f);
  EXPECT_NEAR(FresnelConductor(0.1f, 0.200438f, 3.912949f), 0.962867f, 2e-6f);
  EXPECT_EQ(FresnelConductor(0.0f, 0.200438f, 3.912949f), 1.0f) << "grazing";
  // k = 0 is a dielectric: the conductor form must agree with FresnelDielectric (0.04 at normal incidence).
  for (float c : {1.0f, 0.5f, 0.1f}) EXPECT_NEAR(FresnelConductor(c, 1.5f, 0.0f), FresnelDielectric(c, 1.5f), 2e-6f);
  EXPECT_NEAR(FresnelConductor(0.1f, 1.5f, 0.0f), 0.571593f, 2e-6f);
  // Against the complex form over angles and metals (chrome and gold-like, and a very absorbing one): 1e-5 is float.
  const double metals[][2] = {{0.200438, 3.912949}, {4.369683, 5.206434}, {0.18, 3.1}, {1.0, 200.0}, {2.0, 0.5}};
  for (const auto& m : metals)
    for (int i = 0; i <= 200; ++i) {
      const double c = i / 200.0;
      EXPECT_NEAR(FresnelConductor(float(c), float(m[0]), float(m[1])), ComplexFresnel(c, m[0], m[1]), 1e-5)
          << "eta " << m[0] << " k " << m[1] << " cos " << c;
    }
  // pbrt-v4's reflectance form: eta 1, k = 2 sqrt(r / (1 - r)) reflects r at normal incidence.
  for (float r : {0.1f, 0.5f, 0.9f})
    EXPECT_NEAR(FresnelConductor(1.0f, 1.0f, 2.0f * std::sqrt(r / (1.0f - r))), r, 1e-6f);
}

TEST(ConductorLobe, SmoothOneIsAMirrorWithTheExactFresnel) {
  // Deterministic: the mirror direction, weight F(cos) per channel (relative 1e-5).
  SurfaceBsdf b = Conductor(kCuEta, kCuK, {0.0f, 0.0f});
  b.cls = kMirror;
  for (float c : {1.0f, 0.5f, 0.1f}) {
    const Vec3 wo = DirectionFromCos(c, 0.8f);
    const BsdfSample s = BsdfSampleDir(b, wo, 0.3f, 0.6f, 0.2f);
    ASSERT_TRUE(s.valid && s.delta && s.pdf == 1.0f);
    EXPECT_TRUE(s.wi.x == -wo.x && s.wi.y == -wo.y && s.wi.z == wo.z);
    const Vec3 w = s.f * (AbsCosTheta(s.wi) / s.pdf);
    for (int ch = 0; ch < 3; ++ch)
      EXPECT_TRUE(RelClose(w[ch], ComplexFresnel(c, kCuEta[ch], kCuK[ch]), 1e-5)) << c << " channel " << ch;
    EXPECT_TRUE(IsBlack(BsdfEval(b, wo, s.wi)) && BsdfPdf(b, wo, s.wi) == 0.0f) << "a delta lobe evaluates to 0";
  }
  EXPECT_TRUE(IsDeltaBsdf(b));
}

// ---- anisotropic GGX ----------------------------------------------------------------------------------------------
TEST(ConductorLobe, AnisotropicGgxIsNormalised) {
  // int D(h) cos dh = 1 and, for each wo, int D_wo(h) dh = 1 (the visible normals' density, Heitz 2014, eq. 38).
  // Relative 1e-3: the Simpson grid at 16 points per bin; max(0, wo.h) kinks inside bins.
  for (Alphas a : {Alphas{0.3f, 0.3f}, Alphas{0.2f, 0.6f}, Alphas{0.8f, 0.4f}}) {
    const GgxAlphas g{a.x, a.y};
    std::vector<double> d =
        IntegrateSphereBins([&](Vec3 h) { return double(GgxAnisoD(h, g)) * std::max(0.0f, h.z); }, 16);
    EXPECT_NEAR(std::accumulate(d.begin(), d.end(), 0.0), 1.0, 1e-3) << AlphaName(a);
    for (float c : {0.9f, 0.3f}) {
      const Vec3 wo = DirectionFromCos(c, 0.7f);
      std::vector<double> v = IntegrateSphereBins([&](Vec3 h) { return double(GgxVisibleNormalPdf(wo, h, g)); }, 16);
      EXPECT_NEAR(std::accumulate(v.begin(), v.end(), 0.0), 1.0, 1e-3) << AlphaName(a) << " cos " << c;
      // The same from below the surface: wo mirrored sees the same visible normals.
      std::vector<double> u = IntegrateSphereBins([&](Vec3 h) { return double(GgxVisibleNormalPdf(-wo, h, g)); }, 16);
      EXPECT_NEAR(std::accumulate(u.begin(), u.end(), 0.0), 1.0, 1e-3) << AlphaName(a) << " cos " << -c;
    }
  }
  // Isotropic: the same D and G1 as the glossy class's (relative 1e-5).
  for (float c : {0.95f, 0.5f, 0.05f}) {
    const Vec3 h = DirectionFromCos(c, 1.1f);
    EXPECT_TRUE(RelClose(GgxAnisoD(h, {0.3f, 0.3f}), GgxD(h, 0.3f), 1e-5)) << c;
    EXPECT_TRUE(RelClose(GgxAnisoG1(h, {0.3f, 0.3f}), GgxG1(h, 0.3f), 1e-5)) << c;
  }
}

// ---- conductor sampling and furnace -----------------------------------------------------------------------------
class ConductorLobeCase : public ::testing::TestWithParam<std::tuple<Alphas, float>> {
 protected:
  SurfaceBsdf Bsdf() const { return Conductor(kCuEta, kCuK, std::get<0>(GetParam())); }
  Vec3 Wo() const { return DirectionFromCos(std::get<1>(GetParam()), 2.1f); }
  std::string Name() const { return AlphaName(std::get<0>(GetParam())) + "_cos" + FloatName(std::get<1>(GetParam())); }
  uint32_t Seed() const {
    return 2000u + uint32_t(std::get<0>(GetParam()).x * 100.0f) * 7u +
           uint32_t(std::get<0>(GetParam()).y * 100.0f) * 13u + uint32_t(std::get<1>(GetParam()) * 100.0f) * 131u;
  }
};
TEST_P(ConductorLobeCase, Chi2SamplingMatchesPdf) {
  ExpectSamplingMatchesPdf("Conductor/" + Name(), Bsdf(), Wo(), Seed());
}
TEST_P(ConductorLobeCase, FurnaceMatchesQuadratureAndStaysBelowOne) {
  // MC albedo against the quadrature of BsdfEval (unbiased where the pdf covers f), and at most 1 + 3 standard
  // errors with F = 1 (eta 1, k 200: F > 0.9999 at every angle): a single-scattering lobe only loses energy.
  const std::string name = "ConductorFurnace/" + Name();
  const McAlbedo a = Albedo(Bsdf(), Wo(), Seed() + 1u, 200000);
  ExpectZPasses(name, a.mean, a.se, QuadratureAlbedo(Bsdf(), Wo()));
  const McAlbedo white = Albedo(Conductor(Vec3(1.0f), Vec3(200.0f), std::get<0>(GetParam())), Wo(), Seed() + 2u, 50000);
  EXPECT_LE(white.mean, 1.0 + 3.0 * white.se) << name;
  EXPECT_GE(white.mean, 0.6) << name << ": a lobe this rough keeps most of its light";
}
INSTANTIATE_TEST_SUITE_P(AlphaCos, ConductorLobeCase,
                         ::testing::Combine(::testing::ValuesIn(kConductorAlphas), ::testing::ValuesIn(kReflectCos)),
                         [](const auto& info) {
                           return AlphaName(std::get<0>(info.param)) + "_cos" + FloatName(std::get<1>(info.param));
                         });

TEST(ConductorLobe, SmoothLimitKeepsAllLight) {
  // "= 1 where it must be": F = 1 and alpha 0.002 is all but a mirror: the albedo is 1 within 0.2% (the little
  // shadowing at that roughness) at every angle but grazing.
  uint32_t seed = 2500;
  for (float c : {1.0f, 0.7f, 0.3f}) {
    const McAlbedo a =
        Albedo(Conductor(Vec3(1.0f), Vec3(200.0f), {0.002f, 0.002f}), DirectionFromCos(c, 0.4f), seed++, 20000);
    EXPECT_NEAR(a.mean, 1.0, 0.002 + 3.0 * a.se) << c;
  }
}

TEST(ConductorLobe, EvalIsReciprocalAndReflectsOnly) {
  const SurfaceBsdf b = Conductor(kCuEta, kCuK, {0.15f, 0.45f});
  std::mt19937 rng(2600);
  for (int i = 0; i < 5000; ++i) {
    const Vec3 wo = DirectionFromCos(0.02f + 0.98f * Uniform(rng), 2.0f * kPi * Uniform(rng));
    const Vec3 wi = DirectionFromCos(0.02f + 0.98f * Uniform(rng), 2.0f * kPi * Uniform(rng));
    const Vec3 a = BsdfEval(b, wo, wi), c = BsdfEval(b, wi, wo);
    ASSERT_TRUE(RelClose(a.x, c.x, 1e-4) && RelClose(a.z, c.z, 1e-4)) << i;
    ASSERT_TRUE(IsBlack(BsdfEval(b, wo, Vec3(wi.x, wi.y, -wi.z)))) << "transmits";
  }
}

// ---- rough dielectric -----------------------------------------------------------------------------------------------
class RoughDielectricCase : public ::testing::TestWithParam<std::tuple<Alphas, float>> {
 protected:
  SurfaceBsdf Bsdf() const { return Lobe(kDielectric, kLobeRoughDielectric, Vec3(1.0f), std::get<0>(GetParam())); }
  Vec3 Wo() const { return DirectionFromCos(std::get<1>(GetParam()), 0.9f); }
  std::string Name() const { return AlphaName(std::get<0>(GetParam())) + "_cos" + FloatName(std::get<1>(GetParam())); }
  uint32_t Seed() const {
    return 3000u + uint32_t(std::get<0>(GetParam()).x * 100.0f) * 7u +
           uint32_t(std::get<0>(GetParam()).y * 100.0f) * 13u +
           uint32_t(std::get<1>(GetParam()) * 100.0f + 100.0f) * 131u;
  }
};
TEST_P(RoughDielectricCase, Chi2SamplingMatchesPdf) {
  // Over the whole sphere: reflection on wo's side, refraction on the other. The pdf drops to zero inside bins (where
  // facets turn away from wi, and at total internal reflection): 128 Simpson intervals per bin side converge there.
  ExpectSamplingMatchesPdf("RoughDielectric/" + Name(), Bsdf(), Wo(), Seed(), 128);
}
TEST_P(RoughDielectricCase, FurnaceMatchesQuadratureAndStaysBelowOne) {
  // The MC albedo (radiance weights) against the quadrature of BsdfEval; then the energy, each transmitted weight
  // times eta'^2 to undo the radiance factor (Veach 1997, ch. 5): at most 1 + 3 standard errors. Single scattering
  // loses energy (pbrt-v4's lobe too): from outside a few percent, from inside up to 27% (alpha 0.5 at cos -0.9,
  // measured), so the floor, a check that most light stays, is 0.6.
  const std::string name = "RoughDielectricFurnace/" + Name();
  const SurfaceBsdf b = Bsdf();
  const Vec3 wo = Wo();
  const McAlbedo a = Albedo(b, wo, Seed() + 1u, 200000);
  ExpectZPasses(name, a.mean, a.se, QuadratureAlbedo(b, wo));
  std::mt19937 rng(Seed() + 2u);
  double sum = 0.0, sum2 = 0.0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const BsdfSample s = BsdfSampleDir(b, wo, Uniform(rng), Uniform(rng), Uniform(rng));
    if (!s.valid) continue;
    const float etap = SameHemisphere(wo, s.wi) ? 1.0f : (wo.z > 0.0f ? b.ior : 1.0f / b.ior);
    const double w = double(s.f.x) * AbsCosTheta(s.wi) / s.pdf * etap * etap;
    sum += w;
    sum2 += w * w;
  }
  const double mean = sum / n, se = std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n);
  EXPECT_LE(mean, 1.0 + 3.0 * se) << name;
  EXPECT_GE(mean, 0.6) << name;
}
INSTANTIATE_TEST_SUITE_P(AlphaCos, RoughDielectricCase,
                         ::testing::Combine(::testing::ValuesIn(kGlassAlphas), ::testing::ValuesIn(kGlassCos)),
                         [](const auto& info) {
                           return AlphaName(std::get<0>(info.param)) + "_cos" + FloatName(std::get<1>(info.param));
                         });

TEST(RoughDielectricLobe, SmoothLimitIsFresnel) {
  // "= 1 where it must be": at alpha 0.002 the lobe is all but the smooth interface, whose energy is exactly 1 and
  // whose reflected part is the Fresnel reflectance (within 0.3% and 3 standard errors).
  const SurfaceBsdf b = Lobe(kDielectric, kLobeRoughDielectric, Vec3(1.0f), {0.002f, 0.002f});
  uint32_t seed = 3500;
  for (float c : {0.9f, 0.5f, -0.9f, -0.8f}) {
    const Vec3 wo = DirectionFromCos(c, 0.3f);
    std::mt19937 rng(seed++);
    double reflected = 0.0, energy = 0.0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
      const BsdfSample s = BsdfSampleDir(b, wo, Uniform(rng), Uniform(rng), Uniform(rng));
      if (!s.valid) continue;
      const bool r = SameHemisphere(wo, s.wi);
      const float etap = r ? 1.0f : (wo.z > 0.0f ? b.ior : 1.0f / b.ior);
      const double w = double(s.f.x) * AbsCosTheta(s.wi) / s.pdf;
      energy += w * etap * etap / n;
      if (r) reflected += w / n;
    }
    EXPECT_NEAR(energy, 1.0, 0.003) << c;
    EXPECT_NEAR(reflected, FresnelDielectricSigned(c, b.ior), 0.003 + 3.0 * std::sqrt(0.25 / n)) << c;
  }
  EXPECT_FALSE(IsDeltaBsdf(b)) << "a rough dielectric is sampled by light sampling too";
}

// ---- thin dielectric ------------------------------------------------------------------------------------------------
TEST(ThinDielectricLobe, ReflectsTheSummedFresnelAndPassesStraight) {
  // By hand at normal incidence, eta 1.5: R = 0.04, R' = R + T^2 R / (1 - R^2) = 2R / (1 + R) = 0.0769231. Every
  // sample is a delta: the mirror direction with weight 1, or -wo with weight the tint (relative 1e-5); the reflection
  // count is a binomial z-test against R' at each angle.
  SurfaceBsdf b = Lobe(kDielectric, kLobeThinDielectric, Vec3(0.9f, 0.8f, 0.7f), {0.0f, 0.0f});
  uint32_t seed = 3600;
  for (float c : kThinCos) {
    const Vec3 wo = DirectionFromCos(c, 0.5f);
    const double r = FresnelDielectric(c, 1.5f), expected = r + (1.0 - r) * (1.0 - r) * r / (1.0 - r * r);
    std::mt19937 rng(seed++);
    const int n = 200000;
    int reflections = 0, bad = 0;
    for (int i = 0; i < n; ++i) {
      const BsdfSample s = BsdfSampleDir(b, wo, Uniform(rng), Uniform(rng), Uniform(rng));
      const bool refl = s.wi.z > 0.0f;
      reflections += refl;
      const Vec3 w = s.f * (AbsCosTheta(s.wi) / s.pdf);
      const bool straight = s.wi.x == -wo.x && s.wi.y == -wo.y && s.wi.z == -wo.z;
      const bool mirror = s.wi.x == -wo.x && s.wi.y == -wo.y && s.wi.z == wo.z;
      if (!s.valid || !s.delta || !(refl ? mirror && RelClose(w.x, 1.0, 1e-5) : straight && RelClose(w.x, 0.9, 1e-5)))
        ++bad;
    }
    EXPECT_EQ(bad, 0) << c;
    const double z = (reflections - n * expected) / std::sqrt(n * expected * (1.0 - expected));
    test::Report("Thin/cos" + FloatName(c), "binomial", z * z, 1, NormalTwoSidedP(z), kSignificance);
    EXPECT_GE(NormalTwoSidedP(z), kSignificance) << c << ": " << reflections << " of " << n << ", R' " << expected;
  }
  EXPECT_NEAR(FresnelDielectric(1.0f, 1.5f), 0.04f, 1e-6f);
  const BsdfSample s = BsdfSampleDir(b, Vec3(0.0f, 0.0f, 1.0f), 0.0f, 0.5f, 0.5f);
  EXPECT_NEAR(s.pdf, 2.0 * 0.04 / 1.04, 1e-6) << "R' at normal incidence";
  EXPECT_TRUE(IsDeltaBsdf(b));
}

// ---- diffuse transmission -------------------------------------------------------------------------------------------
TEST(DiffuseTransmissionLobe, SamplingMatchesPdfAndWhiteKeepsAllLight) {
  SurfaceBsdf b = Lobe(kDiffuse, kLobeDiffuseTransmission, Vec3(0.6f, 0.3f, 0.2f), {0.0f, 0.0f});
  b.ks = Vec3(0.2f, 0.5f, 0.1f);
  uint32_t seed = 3700;
  for (float c : kTransmitCos)
    ExpectSamplingMatchesPdf("DiffuseTransmission/cos" + FloatName(c), b, DirectionFromCos(c, 0.4f), seed++);
  // Reflectance + transmittance 1: every weight is 1 (sampled side by the larger channel; grey here), so the albedo
  // is 1 to rounding (1e-5), from either side; each side alone gets its share.
  b.kd = Vec3(0.3f);
  b.ks = Vec3(0.7f);
  for (float c : {0.9f, 0.2f, -0.5f}) {
    const McAlbedo a = Albedo(b, DirectionFromCos(c, 0.1f), seed++, 20000);
    EXPECT_NEAR(a.mean, 1.0, 1e-5) << c;
    const Vec3 wo = DirectionFromCos(c, 0.1f);
    std::vector<double> q = IntegrateSphereBins(
        [&](Vec3 wi) { return SameHemisphere(wo, wi) ? 0.0 : double(BsdfEval(b, wo, wi).x) * AbsCosTheta(wi); }, 8);
    EXPECT_NEAR(std::accumulate(q.begin(), q.end(), 0.0), 0.7, 1e-4) << "the transmitted part";
  }
  EXPECT_TRUE(TransmitsLight(b) && !IsDeltaBsdf(b));
}

}  // namespace
}  // namespace tracer
