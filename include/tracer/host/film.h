// @file film.h: the film in host memory: fixed-point sums (3 per pixel), as rendered and as checkpointed.
#pragma once
#include <cstdint>
#include <vector>

namespace tracer {

struct HostFilm {
  int width = 0, height = 0;
  std::vector<unsigned long long> sum;
  unsigned long long dropped = 0;
  int sppDone = 0;                      // samples per pixel (the most of any pixel, with pixelSpp)
  std::vector<uint32_t> pixelSpp;       // adaptive sampling: each pixel's own; empty: sppDone everywhere
  std::vector<unsigned long long> odd;  // --denoise: the odd-numbered samples' sums alone (as sum); else empty
  void Reset(int w, int h);             // (odd emptied)
  std::vector<float> Resolve() const;   // sum / scale / (pixelSpp or sppDone)
};

}  // namespace tracer
