// @file film.h: the film in host memory: fixed-point sums (3 per pixel), as rendered and as checkpointed.
#pragma once
#include <vector>

namespace tracer {

struct HostFilm {
  int width = 0, height = 0;
  std::vector<unsigned long long> sum;
  unsigned long long dropped = 0;
  int sppDone = 0;
  void Reset(int w, int h);
  std::vector<float> Resolve() const;  // sum / scale / sppDone
};

}  // namespace tracer
