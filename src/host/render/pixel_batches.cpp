// @file pixel_batches.cpp: per-pixel batch means, the variance of each pixel's mean, and adaptive sampling's stop
// rule, over the pixels in parallel chunks (fixed chunks summed in order: the results do not depend on the threads).
#include "tracer/host/pixel_batches.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "tracer/core/film.h"

namespace tracer {

namespace {
constexpr size_t kChunk = 4096;  // pixels per task

// The k-th pixel of `active` (ascending; empty: every pixel).
uint32_t PixelAt(const std::vector<uint32_t>& active, size_t k) {
  return active.empty() ? static_cast<uint32_t>(k) : active[k];
}

// fn(begin, end) over [0, n) in chunks of kChunk, on the pool when there is one.
template <class Fn>
void Chunks(ThreadPool* pool, size_t n, const Fn& fn) {
  if (!pool || n <= kChunk) {
    fn(size_t{0}, n);
    return;
  }
  pool->ParallelForEach((n + kChunk - 1) / kChunk, [&](size_t c) { fn(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}
}  // namespace

void PixelBatches::Reset(int width, int height, const std::vector<unsigned long long>& start, ThreadPool* pool) {
  width_ = width;
  height_ = height;
  pool_ = pool;
  const size_t pixels = static_cast<size_t>(width) * height;
  before_ = start;
  before_.resize(pixels * 3, 0ull);
  s1_.assign(pixels * 3, 0.0);
  s2_.assign(pixels * 3, 0.0);
  samples_.assign(pixels, 0u);
  batches_.assign(pixels, 0u);
}

void PixelBatches::Add(const std::vector<unsigned long long>& sum, const std::vector<uint32_t>& active, int spp) {
  const double n = static_cast<double>(spp), scale = 1.0 / (kFilmScale * n);
  const size_t count = active.empty() ? samples_.size() : active.size();
  Chunks(pool_, count, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const size_t p = PixelAt(active, k);
      for (size_t i = p * 3; i < p * 3 + 3; ++i) {
        const double m = static_cast<double>(sum[i] - before_[i]) * scale;
        s1_[i] += n * m;
        s2_[i] += n * m * m;
        before_[i] = sum[i];
      }
      samples_[p] += static_cast<uint32_t>(spp);
      ++batches_[p];
    }
  });
}

double PixelBatches::VarianceOfMean(size_t i) const {
  const double b = batches_[i / 3], n = samples_[i / 3];
  return std::max(0.0, s2_[i] - s1_[i] * s1_[i] / n) / (b - 1) / n;
}

std::vector<float> PixelBatches::Variance() const {
  std::vector<float> v(s1_.size(), 0.0f);
  for (size_t i = 0; i < s1_.size(); ++i)
    if (batches_[i / 3] >= 2) v[i] = static_cast<float>(VarianceOfMean(i));
  return v;
}

int PixelBatches::LeastBatches() const {
  return batches_.empty() ? 0 : static_cast<int>(*std::min_element(batches_.begin(), batches_.end()));
}

double PixelBatches::RelativeError(uint32_t p, double floor) const {
  if (batches_[p] < 2) return INFINITY;
  double variance = 0.0, mean = 0.0;
  for (size_t i = size_t{p} * 3; i < size_t{p} * 3 + 3; ++i) {
    variance += VarianceOfMean(i);
    mean += s1_[i] / samples_[p];
  }
  const double se = std::sqrt(variance / 3.0);
  if (se == 0.0) return 0.0;
  return se / std::max(mean / 3.0, floor);
}

double PixelBatches::ErrorFloor() const {
  // The median of every kFloorStride-th pixel's mean: a floor needs no more, and it costs a millisecond at 4K.
  constexpr size_t kFloorStride = 7;
  const size_t pixels = samples_.size();
  if (pixels == 0) return 0.0;
  std::vector<float> mean((pixels + kFloorStride - 1) / kFloorStride);
  Chunks(pool_, mean.size(), [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const size_t p = k * kFloorStride;
      mean[k] =
          samples_[p] ? static_cast<float>((s1_[p * 3] + s1_[p * 3 + 1] + s1_[p * 3 + 2]) / (3.0 * samples_[p])) : 0.0f;
    }
  });
  std::nth_element(mean.begin(), mean.begin() + static_cast<std::ptrdiff_t>(mean.size() / 2), mean.end());
  return mean[mean.size() / 2];
}

std::vector<uint32_t> PixelBatches::StillActive(const std::vector<uint32_t>& active, double threshold) const {
  const double floor = ErrorFloor();
  const int tilesX = (width_ + kAdaptiveTile - 1) / kAdaptiveTile,
            tilesY = (height_ + kAdaptiveTile - 1) / kAdaptiveTile;
  const size_t count = active.empty() ? samples_.size() : active.size();
  // One task per row of tiles: the active pixels of image rows [8 r, 8 r + 8) are a contiguous run of the ascending
  // list. Each tile's squared relative errors are summed in pixel order, its pixels kept when their root mean square
  // is above the threshold, and the rows' pixels joined in order.
  std::vector<size_t> rowStart(static_cast<size_t>(tilesY) + 1, count);
  for (int r = 0; r < tilesY; ++r) {
    const uint32_t first = static_cast<uint32_t>(r * kAdaptiveTile) * static_cast<uint32_t>(width_);
    rowStart[r] = active.empty()
                      ? std::min<size_t>(first, count)
                      : static_cast<size_t>(std::lower_bound(active.begin(), active.end(), first) - active.begin());
  }
  std::vector<std::vector<uint32_t>> kept(static_cast<size_t>(tilesY));
  auto row = [&](size_t r) {
    std::vector<double> sum(static_cast<size_t>(tilesX), 0.0), pixels(static_cast<size_t>(tilesX), 0.0);
    for (size_t k = rowStart[r]; k < rowStart[r + 1]; ++k) {
      const uint32_t p = PixelAt(active, k);
      const size_t t = (p % static_cast<uint32_t>(width_)) / kAdaptiveTile;
      const double e = RelativeError(p, floor);
      sum[t] += e * e;
      pixels[t] += 1.0;
    }
    for (size_t k = rowStart[r]; k < rowStart[r + 1]; ++k) {
      const uint32_t p = PixelAt(active, k);
      const size_t t = (p % static_cast<uint32_t>(width_)) / kAdaptiveTile;
      if (sum[t] > threshold * threshold * pixels[t]) kept[r].push_back(p);
    }
  };
  if (pool_)
    pool_->ParallelForEach(static_cast<size_t>(tilesY), row);
  else
    for (size_t r = 0; r < static_cast<size_t>(tilesY); ++r) row(r);
  std::vector<uint32_t> still;
  for (const std::vector<uint32_t>& k : kept) still.insert(still.end(), k.begin(), k.end());
  return still;
}

}  // namespace tracer
