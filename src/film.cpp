// @file film.cpp: the host film: reset and resolve from fixed point to radiance.
#include "tracer/host/film.h"

#include "tracer/core/film.h"

namespace tracer {

void HostFilm::Reset(int w, int h) {
  width = w;
  height = h;
  sum.assign(static_cast<size_t>(w) * h * 3, 0ull);
  dropped = 0;
  sppDone = 0;
  pixelSpp.clear();
}

std::vector<float> HostFilm::Resolve() const {
  std::vector<float> rgb(sum.size(), 0.0f);
  if (sppDone <= 0) return rgb;
  const double scale = 1.0 / (kFilmScale * sppDone);
  for (size_t i = 0; i < sum.size(); ++i) {
    const double s = pixelSpp.empty() ? scale : pixelSpp[i / 3] ? 1.0 / (kFilmScale * pixelSpp[i / 3]) : 0.0;
    rgb[i] = static_cast<float>(static_cast<double>(sum[i]) * s);
  }
  return rgb;
}

}  // namespace tracer
