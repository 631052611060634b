// @file render_common.cpp: pieces both renderers share: the host film and the pass size.
#include <algorithm>

#include "tracer/render_host.h"

namespace tracer {

void HostFilm::Reset(int w, int h) {
  width = w;
  height = h;
  sum.assign(static_cast<size_t>(w) * h * 3, 0ull);
  dropped = 0;
  sppDone = 0;
}

std::vector<float> HostFilm::Resolve() const {
  std::vector<float> rgb(sum.size(), 0.0f);
  if (sppDone <= 0) return rgb;
  const double scale = 1.0 / (kFilmScale * sppDone);
  for (size_t i = 0; i < sum.size(); ++i) rgb[i] = static_cast<float>(static_cast<double>(sum[i]) * scale);
  return rgb;
}

const char* MinPlusKernelName(MinPlusKernel k) {
  switch (k) {
    case MinPlusKernel::kNaive: return "naive";
    case MinPlusKernel::kCoalesced: return "coalesced";
    case MinPlusKernel::kTiled: return "tiled";
    case MinPlusKernel::kDpx: return "dpx";
  }
  return "?";
}

bool MinPlusKernelFromName(const std::string& name, MinPlusKernel* k) {
  for (MinPlusKernel c : {MinPlusKernel::kNaive, MinPlusKernel::kCoalesced, MinPlusKernel::kTiled, MinPlusKernel::kDpx})
    if (name == MinPlusKernelName(c)) {
      *k = c;
      return true;
    }
  return false;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

RenderParams MakeRenderParams(const RenderOptions& opt) {
  RenderParams rp{};
  rp.width = opt.width;
  rp.height = opt.height;
  rp.seed = opt.seed;
  rp.maxDepth = opt.maxDepth;
  rp.rouletteDepth = opt.rouletteDepth;
  rp.clamp = opt.clamp;
  return rp;
}

int SamplesPerPass(long long pixels, long long pool, int sppRemaining) {
  long long want = (4 * pool + pixels - 1) / std::max(1LL, pixels);
  return static_cast<int>(std::max(1LL, std::min<long long>(want, sppRemaining)));
}

}  // namespace tracer
