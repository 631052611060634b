// @file pixel_batches.h: each pixel's running statistics from the film's growth pass by pass, for --aov variance
// and adaptive sampling (--adaptive).
//
// A pass adds n samples to each pixel it covers; the growth of the pixel's fixed-point sums over the pass, divided by
// n, is one batch mean m_k. Over a pixel's B batches of N samples in all, sum_k n_k (m_k - m)^2 / (B - 1) estimates
// the variance of one sample without bias even for batches of unequal size, and divided by N the variance of the
// pixel's mean (the method of batch means). Batch means need no change to the kernels: the film alone is read.
//
// Adaptive sampling stops tiles of kAdaptiveTile x kAdaptiveTile pixels whose root mean square relative standard
// error is below a threshold. The relative error of a pixel is the root mean square over channels of the standard
// errors of its mean, over the mean of the channels, where a pixel darker than the image's median pixel counts as the
// median: bright pixels by their relative error, dark ones by their error against the image's typical brightness, as
// the relative MSE (a - r)^2 / (r^2 + 0.01) that judges adaptive samplers weighs them in an image exposed to a median
// near 0.1 (and near-black pixels do not sample forever). Measured with src/scripts/adaptive_report.py: a floor at a
// fraction of the image's mean followed every dark corner to --spp and saved nothing, and the mean itself, inflated by
// emitters in view, stopped dark walls too early; the median did neither (docs/PERFORMANCE.md, adaptive sampling).
//
// Why tiles: a pixel stopped on its own error is biased. Its error and its mean come from the same samples, and a
// pixel that has not yet met its rare bright paths looks both darker and less noisy than it is, so it stops low. Per
// pixel (tiles of 1), 8 adaptive renders of the Cornell box at 32x32 (threshold 0.1, 16 to 128 spp) had 8x8 blocks 3-4%
// darker than uniform renders, 10 to 17 standard errors, over 6 sets of seeds (tests/adaptive_test.cpp's scene). The
// error of a tile of 64 pixels hardly depends on any one of them: with tiles of 8x8 the same blocks scattered within
// 2.7 standard errors either side, and the image's mean came out within 0.1% (Dammertz, Hanika, Keller and Lensch 2010
// also stop image regions rather than pixels).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tracer/host/thread_pool.h"

namespace tracer {

constexpr int kAdaptiveTile = 8;

class PixelBatches {
 public:
  // Starts from the film's sums `start` (empty: zero), with no batches; runs its loops on `pool` when given.
  void Reset(int width, int height, const std::vector<unsigned long long>& start, ThreadPool* pool = nullptr);
  // After a pass of `spp` samples per pixel over the pixels `active` (ascending; empty: every pixel), with the film's
  // sums after it.
  void Add(const std::vector<unsigned long long>& sum, const std::vector<uint32_t>& active, int spp);

  // Per pixel and channel, the variance of the pixel's mean (0 where the pixel has fewer than 2 batches).
  std::vector<float> Variance() const;
  // Samples per pixel so far, and a pixel's batches.
  const std::vector<uint32_t>& Samples() const { return samples_; }
  int Batches(uint32_t pixel) const { return static_cast<int>(batches_[pixel]); }
  int LeastBatches() const;  // the fewest batches of any pixel
  // The relative standard error of a pixel's mean (see above), with `floor` the least mean that it divides by.
  double RelativeError(uint32_t pixel, double floor) const;
  // The median over pixels (every 7th) of the channels' mean: RelativeError's floor.
  double ErrorFloor() const;
  // The pixels of `active` (ascending; empty: every pixel) that keep sampling at relative error `threshold`: those
  // of the tiles whose active pixels' relative errors have a root mean square above it. Ascending.
  std::vector<uint32_t> StillActive(const std::vector<uint32_t>& active, double threshold) const;

 private:
  double VarianceOfMean(size_t i) const;  // value i (pixel i / 3's channel i % 3); needs 2 batches or more
  int width_ = 0, height_ = 0;
  ThreadPool* pool_ = nullptr;
  std::vector<unsigned long long> before_;  // the film's sums after the last batch
  std::vector<double> s1_, s2_;             // per pixel and channel: sum n_k m_k, sum n_k m_k^2
  std::vector<uint32_t> samples_, batches_;
};

}  // namespace tracer
