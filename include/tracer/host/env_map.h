// @file env_map.h: the environment as a light on the host: reading a lat-long map, building its sampling
// distribution (core/environment.h) and its share of light selection.
#pragma once
#include <string>
#include <vector>

#include "tracer/host/scene_data.h"

namespace tracer {

// A lat-long image in linear RGB, row 0 at the top.
struct EnvImage {
  int width = 0, height = 0;
  std::vector<float> rgb;  // 3 per texel
};

// Reads an environment map by its extension: .hdr (Radiance RGBE, through stb_image) or .exr (OpenEXR's R, G, B,
// where the build has libopenexr-dev). Throws std::runtime_error naming the file for a file
// that is missing, unreadable, of another format, empty, or holds negative or non-finite values.
EnvImage ReadEnvImage(const std::string& path);

// Gives the scene the environment map `image`, its radiance times `scale`, turned by `rotateDegrees` about +y:
// the texels, the sampling distribution (rows by the marginal cdf, columns by each row's conditional cdf, in
// proportion to luminance x sin(theta) of the row centre), the power and the pick probability. Replaces the
// constant environment (set to black).
void SetEnvironmentMap(SceneData& d, const EnvImage& image, float scale, float rotateDegrees);

// The environment's power and its pick probability EnvParams::pick = power / (power + the emitters' power + the delta
// lights' power), from the map (or else the constant environment), the scene's bounds and the lights; and the delta
// lights' share of the rest, SceneData::deltaShare = theirs / (theirs + the emitters'). The power estimate:
// pi^2 R^2 L, where L is the environment's mean luminance over the sphere of directions and R the radius of the
// scene's bounding sphere; it is the power an emitter would need to give a surface at distance R the irradiance
// pi L that an unoccluded environment gives. Any positive share keeps the render unbiased; this one only
// balances noise. BuildSceneData and SetEnvironmentMap call it.
// It also sets EnvParams::portalMix, the portals' share of environment samples under --env-portal-mix auto:
// kPortalMixMax (1 - 2 EnvConcentration), at least 0 (core/portals.h says why).
void UpdateEnvironmentShare(SceneData& d);

// How much of the map's power its brightest texels hold beyond their solid angle: with c the power share of the
// brightest texels (by radiance) that cover 1% of the sphere, (c - 0.01) / 0.99: 0 for a constant map, toward 1 for
// a sun that holds the power. 0 without a map.
double EnvConcentration(const EnvMap& env);

}  // namespace tracer
