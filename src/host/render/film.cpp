// @file film.cpp: the host film: reset and resolve from fixed point to radiance.
#include "tracer/host/film.h"

#include "tracer/core/film.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

void HostFilm::Reset(int w, int h) {
  width = w;
  height = h;
  sum.assign(static_cast<size_t>(w) * h * 3, 0ull);
  dropped = 0;
  sppDone = 0;
  pixelSpp.clear();
  odd.clear();
}

// Over every core from 1M values on (an 8K frame's 100M take a few tenths of a second on one thread); each
// value is computed alone, so the floats do not depend on the thread count.
std::vector<float> HostFilm::Resolve() const {
  std::vector<float> rgb(sum.size(), 0.0f);
  if (sppDone <= 0) return rgb;
  const double scale = 1.0 / (kFilmScale * sppDone);
  auto resolve = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const double s = pixelSpp.empty() ? scale : pixelSpp[i / 3] ? 1.0 / (kFilmScale * pixelSpp[i / 3]) : 0.0;
      rgb[i] = static_cast<float>(static_cast<double>(sum[i]) * s);
    }
  };
  if (sum.size() < (size_t(1) << 20)) {
    resolve(0, sum.size());
  } else {
    ThreadPool pool(ThreadPool::ThreadsFor(0));
    pool.ParallelFor(sum.size(), size_t(1) << 18, resolve);
  }
  return rgb;
}

}  // namespace tracer
