// @file denoise.cpp: --denoise on the host's threads: the half-buffers resolved from the film, then core/denoise.h's
// per-pixel passes and core/denoise_nfor.h's regression, tile by tile, over a thread pool.
#include "tracer/host/denoise.h"

#include <algorithm>
#include <stdexcept>

#include "tracer/core/denoise_nfor.h"
#include "tracer/core/film.h"
#include "tracer/core/first_hit.h"
#include "tracer/host/aov.h"
#include "tracer/host/render_result.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

static_assert(kAovMissDepth >= kDenoiseMissDepth, "the denoiser must see the first-hit outputs' misses as misses");

const char* DenoiseMethodName(DenoiseMethod m) { return m == DenoiseMethod::kAtrous ? "atrous" : "nfor"; }

bool DenoiseMethodFromName(const std::string& name, DenoiseMethod* m) {
  if (name == "nfor")
    *m = DenoiseMethod::kNfor;
  else if (name == "atrous")
    *m = DenoiseMethod::kAtrous;
  else
    return false;
  return true;
}

void ResolveHalves(const HostFilm& film, std::vector<float>& halfA, std::vector<float>& halfB, int threads) {
  if (film.odd.size() != film.sum.size()) throw std::logic_error("ResolveHalves: the film kept no half-buffers");
  halfA.assign(film.sum.size(), 0.0f);
  halfB.assign(film.sum.size(), 0.0f);
  ThreadPool pool(ThreadPool::ThreadsFor(threads));
  pool.ParallelFor(film.sum.size(), size_t(1) << 15, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const unsigned n = film.pixelSpp.empty() ? static_cast<unsigned>(film.sppDone) : film.pixelSpp[i / 3];
      HalfBufferValues(film.sum[i], film.odd[i], n, halfA[i], halfB[i]);
    }
  });
}

DenoiseImages DenoiseInputs(const RenderResult& result, const AovImages& aov) {
  DenoiseImages in;
  in.width = result.width;
  in.height = result.height;
  in.color = result.rgb;
  ResolveHalves(result.film, in.halfA, in.halfB);
  in.albedo = aov.albedo;
  in.normal = aov.normal;
  in.position = aov.position;
  in.depth = aov.depth;
  in.emission = aov.emission;
  return in;
}

namespace {

void CheckSizes(const DenoiseImages& in) {
  const size_t n = static_cast<size_t>(in.width) * static_cast<size_t>(in.height);
  for (const std::vector<float>* v :
       {&in.color, &in.halfA, &in.halfB, &in.albedo, &in.normal, &in.position, &in.emission})
    if (v->size() != n * 3) throw std::invalid_argument("Denoise: an input image has the wrong size");
  if (in.depth.size() != n) throw std::invalid_argument("Denoise: the depth image has the wrong size");
}

// The regression over one tile (x0, y0, w x h pixels) of the image: for each window offset o, the pair terms of
// (s, s + o) once over the tile and its patch apron, then each pixel's patch distances as box sums of them: NforPixel's
// terms, added in its order, so its image bit for bit with (2f + 1)^2 times fewer terms.
class NforTile {
 public:
  NforTile(const DenoiseView& v, int w, int h)
      : v_(v),
        pw_(w + 2 * v.settings.nforPatch),
        fitA_(w * h),
        fitB_(w * h),
        termA_(pw_ * (h + 2 * v.settings.nforPatch)),
        termB_(termA_.size()),
        centre_(w * h),
        depthScale_(w * h) {}

  void Run(int x0, int y0, int w, int h, float* out) {
    const DenoiseSettings& s = v_.settings;
    const int radius = s.nforRadius, f = s.nforPatch, ph = h + 2 * f;
    const float k2 = s.nforK * s.nforK, invCount = NlmInvCount(s);
    for (int ty = 0; ty < h; ++ty)
      for (int tx = 0; tx < w; ++tx) {
        const int i = ty * w + tx;
        centre_[i] = NforPointAt(v_, (y0 + ty) * v_.width + x0 + tx);
        depthScale_[i] = NforDepthScale(v_, x0 + tx, y0 + ty);
        NforClear(fitA_[i]);
        NforClear(fitB_[i]);
      }
    for (int oy = -radius; oy <= radius; ++oy)
      for (int ox = -radius; ox <= radius; ++ox) {
        // The pair terms of (s, s + o) for s over the tile and its patch apron, edges clamped as NforPixel does.
        for (int py = 0; py < ph; ++py)
          for (int px = 0; px < pw_; ++px) {
            const int sx = x0 - f + px, sy = y0 - f + py;
            const int a = Index(sx, sy), b = Index(sx + ox, sy + oy);
            NlmPairTerms(PixelRgb(v_.halfA, a), PixelRgb(v_.halfB, a), PixelRgb(v_.variance, a), PixelRgb(v_.halfA, b),
                         PixelRgb(v_.halfB, b), PixelRgb(v_.variance, b), k2, termA_[py * pw_ + px],
                         termB_[py * pw_ + px]);
          }
        for (int ty = 0; ty < h; ++ty)
          for (int tx = 0; tx < w; ++tx) {
            const int qx = x0 + tx + ox, qy = y0 + ty + oy;
            if (qx < 0 || qy < 0 || qx >= v_.width || qy >= v_.height) continue;
            float patchA = 0.0f, patchB = 0.0f;
            for (int dy = 0; dy <= 2 * f; ++dy) {
              float rowA = 0.0f, rowB = 0.0f;
              for (int dx = 0; dx <= 2 * f; ++dx) {
                rowA += termA_[(ty + dy) * pw_ + tx + dx];
                rowB += termB_[(ty + dy) * pw_ + tx + dx];
              }
              patchA += rowA;
              patchB += rowB;
            }
            const int i = ty * w + tx, q = qy * v_.width + qx;
            NforAddNeighbour(s, centre_[i], depthScale_[i], NforPointAt(v_, q), PixelRgb(v_.halfA, q),
                             PixelRgb(v_.halfB, q), patchA, patchB, invCount, fitA_[i], fitB_[i]);
          }
      }
    for (int ty = 0; ty < h; ++ty)
      for (int tx = 0; tx < w; ++tx) {
        const int i = ty * w + tx;
        StoreRgb(out, (y0 + ty) * v_.width + x0 + tx, NforFinish(s, fitA_[i], fitB_[i]));
      }
  }

 private:
  int Index(int x, int y) const { return ClampInt(y, 0, v_.height - 1) * v_.width + ClampInt(x, 0, v_.width - 1); }

  const DenoiseView& v_;
  int pw_;
  std::vector<NforSystem> fitA_, fitB_;
  std::vector<float> termA_, termB_;
  std::vector<NforPoint> centre_;
  std::vector<float> depthScale_;
};

// Tiles of 16x16 pixels: a tile's systems (2 x 60 floats a pixel) stay in the core's L2 cache.
constexpr int kNforCpuTile = 16;

void NforCpu(const DenoiseView& v, ThreadPool& pool, float* out) {
  const int tilesX = (v.width + kNforCpuTile - 1) / kNforCpuTile, tilesY = (v.height + kNforCpuTile - 1) / kNforCpuTile;
  pool.ParallelFor(static_cast<size_t>(tilesX) * tilesY, 1, [&](size_t begin, size_t end) {
    NforTile tile(v, kNforCpuTile, kNforCpuTile);
    for (size_t t = begin; t < end; ++t) {
      const int x0 = static_cast<int>(t % tilesX) * kNforCpuTile, y0 = static_cast<int>(t / tilesX) * kNforCpuTile;
      tile.Run(x0, y0, std::min(kNforCpuTile, v.width - x0), std::min(kNforCpuTile, v.height - y0), out);
    }
  });
}

}  // namespace

std::vector<float> DenoiseCpu(const DenoiseImages& in, DenoiseMethod method, int threads,
                              const DenoiseSettings& settings) {
  CheckSizes(in);
  const size_t pixels = static_cast<size_t>(in.width) * static_cast<size_t>(in.height);
  std::vector<float> var3(pixels * 3), var1(pixels);
  DenoiseView v{in.width,        in.height,          in.color.data(),  in.halfA.data(),
                in.halfB.data(), in.albedo.data(),   in.normal.data(), in.position.data(),
                in.depth.data(), in.emission.data(), var3.data(),      settings};
  ThreadPool pool(ThreadPool::ThreadsFor(threads));
  auto perPixel = [&](auto&& fn) {
    pool.ParallelFor(pixels, 256, [&](size_t b, size_t e) {
      for (size_t p = b; p < e; ++p) fn(static_cast<int>(p));
    });
  };
  // The regression's halves with their fireflies clamped; its variance and fits read those.
  std::vector<float> cleanA, cleanB;
  if (method == DenoiseMethod::kNfor && settings.nforOutlier > 0.0f) {
    cleanA.resize(pixels * 3);
    cleanB.resize(pixels * 3);
    perPixel([&](int p) { NforClampOutliersPixel(v, p, cleanA.data(), cleanB.data()); });
    v.halfA = cleanA.data();
    v.halfB = cleanB.data();
  }
  perPixel([&](int p) { DenoiseVariancePixel(v, p, var3.data(), var1.data()); });
  std::vector<float> out(pixels * 3);
  if (method == DenoiseMethod::kNfor) {
    if (settings.nforPerPixel)
      perPixel([&](int p) { StoreRgb(out.data(), p, NforPixel(v, p)); });
    else
      NforCpu(v, pool, out.data());
    return out;
  }
  // Five levels, ping-ponging between two colour and two variance buffers.
  std::vector<float> color = in.color, var = var1, nextVar(pixels);
  for (int level = 0; level < kAtrousLevels; ++level) {
    perPixel([&](int p) { AtrousPixel(v, color.data(), var.data(), level, p, out.data(), nextVar.data()); });
    color.swap(out);
    var.swap(nextVar);
  }
  return color;
}

}  // namespace tracer
