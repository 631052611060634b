// @file ggx_albedo.h: computes the GGX albedo tables that core/ggx_albedo_table.h holds (Kulla and Conty 2017).
//
// The tables are computed here, by our own quadrature of core/microfacet.h's GGX, and written as a header by
// src/tools/gen_ggx_albedo_table.cpp; a test recomputes them at lower resolution and compares, so the header
// cannot drift from the BSDF it serves. Layout (kGgxAlbedoRes = N points per axis, both axes from 0 to 1):
//   [r][mu][2]  (E, E5) for roughness r = sqrt(alpha) = r_i = i / (N - 1) and cos(theta_o) mu_j = (j / (N - 1))^2
//               (squared: E changes fastest near grazing, where a linear grid put the error at 1.3%):
//               E  = int f_ss(wo, wi) cos(theta_i) dwi with Fresnel 1 (single-scattering GGX with Smith's
//                    height-uncorrelated G, the directional albedo that multiple scattering would restore);
//               E5 = the same integral weighted by (1 - wo.h)^5, Schlick's weight, so that the albedo with
//                    Schlick's F = f0 + (f90 - f0)(1 - wo.h)^5 is f0 (E - E5) + f90 E5;
//   [r][2]      (Eavg, E5avg) = 2 int_0^1 (E, E5)(mu) mu dmu, the cosine-weighted hemispherical averages.
#pragma once
#include <string>
#include <vector>

namespace tracer {

// Midpoint rule over samplesPerSide^2 strata of (u1, u2), with microfacet normals drawn from those visible from wo;
// the averages use 2 * kGgxAlbedoRes midpoints in mu. Error about 1e-4 at 256 samples per side.
std::vector<float> ComputeGgxAlbedoTable(int res, int samplesPerSide);

// The text of core/ggx_albedo_table.h for a table from ComputeGgxAlbedoTable.
std::string GgxAlbedoTableHeader(const std::vector<float>& table, int res, int samplesPerSide);

}  // namespace tracer
