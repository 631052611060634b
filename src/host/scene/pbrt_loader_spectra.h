// @file pbrt_loader_spectra.h: RGB values from pbrt-v4's spectrum-valued parameters (rgb, spectrum by name or by
// (wavelength, value) pairs, blackbody, float), as the renderer's RGB materials and lights need them.
#pragma once
#include <string>

#include "pbrt_loader.h"

namespace tracer::pbrtload {

// How pbrt-v4 reads a spectrum (its SpectrumType): a reflectance in [0, 1], an unbounded value (an index of
// refraction, an absorption coefficient) or an illuminant (a light's L, rendered relative to the colour space's
// white: pbrt-v4 divides a light's scale by the spectrum's photometric integral, so an RGB renders as itself and a
// blackbody or named illuminant with luminance 1).
enum class SpectrumUse { kAlbedo, kUnbounded, kIlluminant };

// The RGB of the parameter `name` of any spectrum type (rgb, spectrum, blackbody, float), or false when there is
// none (or none usable, after a warning). Spectra sampled from wavelengths use 630, 532 and 465 nm for R, G and B
// (an approximation, warned once); reflectances are clamped to [0, 1].
bool SpectrumRgb(PbrtLoad& load, const PbrtParams& params, const std::string& name, SpectrumUse use, Vec3* rgb);

// One of pbrt-v4's named spectra (src/pbrt/util/spectrum.cpp: "metal-Cu-eta", "glass-BK7", ...) at 630, 532 and
// 465 nm; false for a name it does not know.
bool NamedSpectrumRgb(const std::string& name, Vec3* rgb);

// The linear sRGB colour of a blackbody at `kelvin`, scaled to luminance 1 (how pbrt-v4 renders a "blackbody" L
// with scale 1). Planck's law against the CIE 1931 observer in the analytic fit of Wyman, Sloan and Shirley 2013
// ("Simple Analytic Approximations to the CIE XYZ Color Matching Functions", JCGT 2(2)), XYZ to linear sRGB.
Vec3 BlackbodyRgb(double kelvin);

}  // namespace tracer::pbrtload
