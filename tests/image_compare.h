// @file image_compare.h: statistical agreement of two renderers' images, block by block.
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace tracer::test {

// Per-block means of an image, averaged over channels. Block b covers pixels [bx*B, (bx+1)*B) x [by*B, ...).
inline std::vector<double> BlockMeans(const std::vector<float>& rgb, int w, int h, int block) {
  int bw = (w + block - 1) / block, bh = (h + block - 1) / block;
  std::vector<double> sum(static_cast<size_t>(bw) * bh, 0.0), n(sum.size(), 0.0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      size_t b = static_cast<size_t>(y / block) * bw + x / block;
      const float* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      sum[b] += (p[0] + p[1] + p[2]) / 3.0;
      n[b] += 1.0;
    }
  for (size_t b = 0; b < sum.size(); ++b) sum[b] /= n[b];
  return sum;
}

struct BlockSeries {
  std::vector<double> mean, standardError;  // per block, over independent renders
  bool allFinite = true;
};

// Renders `seeds` independent images (render(seed) returns rgb) and gives each block's mean and the standard
// error of that mean, estimated from the spread across seeds.
inline BlockSeries RenderBlocks(const std::function<std::vector<float>(unsigned)>& render, int seeds, int w, int h,
                                int block) {
  std::vector<std::vector<double>> runs;
  BlockSeries s;
  for (int k = 0; k < seeds; ++k) {
    std::vector<float> rgb = render(100u + static_cast<unsigned>(k));
    for (float v : rgb)
      if (!std::isfinite(v)) s.allFinite = false;
    runs.push_back(BlockMeans(rgb, w, h, block));
  }
  size_t nb = runs[0].size();
  s.mean.assign(nb, 0.0);
  s.standardError.assign(nb, 0.0);
  for (size_t b = 0; b < nb; ++b) {
    double m = 0, v = 0;
    for (auto& r : runs) m += r[b];
    m /= seeds;
    for (auto& r : runs) v += (r[b] - m) * (r[b] - m);
    v /= (seeds - 1);
    s.mean[b] = m;
    s.standardError[b] = std::sqrt(v / seeds);
  }
  return s;
}

// Largest |meanA - meanB| / sqrt(seA^2 + seB^2) over the blocks (blocks where both are exactly equal count 0).
inline double MaxBlockZ(const BlockSeries& a, const BlockSeries& b, size_t* worst = nullptr) {
  double zmax = 0.0;
  for (size_t i = 0; i < a.mean.size(); ++i) {
    double d = std::fabs(a.mean[i] - b.mean[i]);
    double se = std::sqrt(a.standardError[i] * a.standardError[i] + b.standardError[i] * b.standardError[i]);
    double z = d == 0.0 ? 0.0 : (se > 0.0 ? d / se : INFINITY);
    if (z > zmax) {
      zmax = z;
      if (worst) *worst = i;
    }
  }
  return zmax;
}

// |sum of A's block means - sum of B's| over its standard error (the blocks' errors in quadrature): the whole image's
// agreement, where a small bias shared by every block adds up.
inline double WholeImageZ(const BlockSeries& a, const BlockSeries& b) {
  double sa = 0.0, sb = 0.0, va = 0.0, vb = 0.0;
  for (size_t i = 0; i < a.mean.size(); ++i) {
    sa += a.mean[i];
    sb += b.mean[i];
    va += a.standardError[i] * a.standardError[i];
    vb += b.standardError[i] * b.standardError[i];
  }
  return va + vb > 0.0 ? std::fabs(sa - sb) / std::sqrt(va + vb) : (sa == sb ? 0.0 : INFINITY);
}

}  // namespace tracer::test
