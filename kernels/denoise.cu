// @file denoise.cu: --denoise on the GPU (host/denoise.h): the CPU's per-pixel code (core/denoise.h,
// core/denoise_nfor.h), pass after pass: the variance, then five a-trous levels (a thread a pixel) or the regression (a
// block a tile, its inputs and each offset's patch terms in shared memory). After a render on the GPU
// (DenoiseFrameCuda) the first-hit features are traced into device memory and read there: only the half-buffers go
// up and the image comes back.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tracer/core/denoise_nfor.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/event_timer.h"
#include "tracer/cuda/first_hit_launch.h"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/cuda/raii.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/denoise.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

__global__ void DenoiseVarianceKernel(DenoiseView v, float* var3, float* varMean, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) DenoiseVariancePixel(v, p, var3, varMean);
}

__global__ void AtrousKernel(DenoiseView v, const float* in, const float* inVar, int level, float* out, float* outVar,
                             int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) AtrousPixel(v, in, inVar, level, p, out, outVar);
}

__global__ void NforClampOutliersKernel(DenoiseView v, float* cleanA, float* cleanB, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) NforClampOutliersPixel(v, p, cleanA, cleanB);
}

// The naive twin (settings.nforPerPixel, --profile's "regression: tiled vs per-pixel"): NforPixel, each patch distance
// summed on its own from global memory ((2f + 1)^2 pair terms a neighbour); the same image as the tiled kernel up to
// rounding, several times slower.
__global__ void NforKernel(DenoiseView v, float* out, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) StoreRgb(out, p, NforPixel(v, p));
}

// ---- the regression over tiles in shared memory ----------------------------------------------------------------
// A block filters a tile of TW x TH pixels. Its inputs over the tile and an apron of r + F pixels (edges clamped) are
// staged in shared memory once; then, for each window offset o, the block computes the pair terms of (s, s + o) over
// the tile and its patch apron (NlmPairTerms: one term per pixel instead of (2F + 1)^2), and each thread box-sums its
// patch's and adds the neighbour to both halves' systems, which stay in its registers. The terms alternate between two
// buffers and are computed one offset ahead: each iteration writes the next offset's terms and reads the current
// one's, which the previous barrier completed, so one barrier per offset suffices (a buffer is written again only
// two offsets later, after a barrier that every reader of it has passed). The patch radius F is a template parameter
// (the box sums unrolled, each thread's term slots fixed before the loop); the window radius is the settings'. The
// loop over a tile is the GPU's own (as the host's is in host/denoise.cpp); every term, weight and sum in it is
// core/denoise_nfor.h's. 16x8 tiles: both systems fit 168 registers with no spill (sm_90), three blocks an SM (12
// warps; the launch bounds ask for that, without them the pipelined loop took 188). On an H100 at 1080p, 16x8, 32x4 and
// 8x8 tiles took 6.4 to 6.6 ms; 16x16 and 32x8 (one block of 188 registers an SM) 8.8 ms.
constexpr int kNforTileW = 16, kNforTileH = 8;

// The shared memory of one block: each staged pixel's inputs in four float4 records, each record an array over the
// staged tile (consecutive threads read consecutive 16 bytes: no bank conflicts), so that a pixel's colours and
// variance are 3 loads instead of 9 (r0 = halfA.xyz, halfB.x; r1 = halfB.yz, variance.xy; r2 = variance.z,
// albedo.xyz; r3 = normal.xyz, depth); then the pair terms of both guides side by side (float2, 2 buffers over the
// tile and its patch apron); then the emission seen (Sum3, one float a pixel).
template <int TW, int TH, int F>
struct NforTileLayout {
  static constexpr int kPw = TW + 2 * F, kNp = kPw * (TH + 2 * F);
  static constexpr int kSlots = (kNp + TW * TH - 1) / (TW * TH);  // pair terms per thread and offset
  int apron, sw, ns;
  explicit NforTileLayout(const DenoiseSettings& s)
      : apron(s.nforRadius + F), sw(TW + 2 * apron), ns(sw * (TH + 2 * apron)) {}
  size_t Bytes() const {
    return static_cast<size_t>(ns) * (4 * sizeof(float4) + sizeof(float)) + 2 * kNp * sizeof(float2);
  }
};

// A staged pixel's colours, variance and features, unpacked from its records.
struct StagedPixel {
  Vec3 a, b, variance;
  NforPoint point;
};

__device__ void LoadColours(const float4* rec, int ns, int i, StagedPixel& p) {
  const float4 r0 = rec[i], r1 = rec[ns + i], r2 = rec[2 * ns + i];
  p.a = Vec3(r0.x, r0.y, r0.z);
  p.b = Vec3(r0.w, r1.x, r1.y);
  p.variance = Vec3(r1.z, r1.w, r2.x);
  p.point.albedo = Vec3(r2.y, r2.z, r2.w);
}

__device__ StagedPixel LoadStaged(const float4* rec, const float* emission, int ns, int i) {
  StagedPixel p;
  LoadColours(rec, ns, i, p);
  const float4 r3 = rec[3 * ns + i];
  p.point.normal = Vec3(r3.x, r3.y, r3.z);
  p.point.depth = r3.w;
  p.point.emission = emission[i];
  return p;
}

// Copies the block's inputs (clamped to the image) into shared memory.
template <int TW, int TH, int F>
__device__ void StageNforTile(const DenoiseView& v, const NforTileLayout<TW, TH, F>& l, int x0, int y0, float4* rec,
                              float* emission) {
  const int tid = static_cast<int>(threadIdx.y) * TW + static_cast<int>(threadIdx.x);
  for (int i = tid; i < l.ns; i += TW * TH) {
    const int gx = ClampInt(x0 - l.apron + i % l.sw, 0, v.width - 1);
    const int gy = ClampInt(y0 - l.apron + i / l.sw, 0, v.height - 1);
    const int g = gy * v.width + gx;
    const Vec3 a = PixelRgb(v.halfA, g), b = PixelRgb(v.halfB, g), var = PixelRgb(v.variance, g);
    const Vec3 albedo = PixelRgb(v.albedo, g), normal = PixelRgb(v.normal, g);
    rec[i] = make_float4(a.x, a.y, a.z, b.x);
    rec[l.ns + i] = make_float4(b.y, b.z, var.x, var.y);
    rec[2 * l.ns + i] = make_float4(var.z, albedo.x, albedo.y, albedo.z);
    rec[3 * l.ns + i] = make_float4(normal.x, normal.y, normal.z, v.depth[g]);
    emission[i] = Sum3(PixelRgb(v.emission, g));
  }
}

template <int TW, int TH, int F>
__global__ void __launch_bounds__(TW* TH, 384 / (TW * TH) > 0 ? 384 / (TW * TH) : 1)
    NforTiledKernel(DenoiseView v, NforTileLayout<TW, TH, F> l, int blockRow0, float* out) {
  using Layout = NforTileLayout<TW, TH, F>;
  extern __shared__ float4 smem[];
  const DenoiseSettings& s = v.settings;
  float4* rec = smem;
  float2* terms = reinterpret_cast<float2*>(rec + 4 * l.ns);  // buffer k at terms + k kNp: (guide A's, guide B's)
  float* emission = reinterpret_cast<float*>(terms + 2 * Layout::kNp);
  const int x0 = static_cast<int>(blockIdx.x) * TW, y0 = (static_cast<int>(blockIdx.y) + blockRow0) * TH;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), tid = ty * TW + tx;
  StageNforTile(v, l, x0, y0, rec, emission);
  // This thread's pair-term slots: the staged index of s for each (-1: none).
  int slot[Layout::kSlots];
  TRACER_UNROLL
  for (int k = 0; k < Layout::kSlots; ++k) {
    const int i = tid + k * TW * TH;
    slot[k] = i < Layout::kNp ? (i / Layout::kPw + l.apron - F) * l.sw + i % Layout::kPw + l.apron - F : -1;
  }
  const float k2 = s.nforK * s.nforK, invCount = NlmInvCount(s);
  const int radius = s.nforRadius, offsets = Sqr(2 * radius + 1);
  // The pair terms of the offset whose staged index difference is `shift` into buffer `buffer`.
  auto pairTerms = [&](int shift, int buffer) {
    TRACER_UNROLL
    for (int k = 0; k < Layout::kSlots; ++k) {
      if (slot[k] < 0) continue;
      StagedPixel a, b;
      LoadColours(rec, l.ns, slot[k], a);
      LoadColours(rec, l.ns, slot[k] + shift, b);
      float2 t;
      NlmPairTerms(a.a, a.b, a.variance, b.a, b.b, b.variance, k2, t.x, t.y);
      terms[buffer * Layout::kNp + tid + k * TW * TH] = t;
    }
  };
  __syncthreads();  // the staged inputs
  pairTerms(-radius * l.sw - radius, 0);
  const int x = x0 + tx, y = y0 + ty;
  const bool inside = x < v.width && y < v.height;
  const int c = (ty + l.apron) * l.sw + tx + l.apron;  // the centre's staged index
  const NforPoint centre = LoadStaged(rec, emission, l.ns, c).point;
  const float depthScale = inside ? NforDepthScale(v, x, y) : 0.0f;
  NforSystem fitA, fitB;
  NforClear(fitA);
  NforClear(fitB);
  __syncthreads();                 // offset 0's terms
  int ox = -radius, oy = -radius;  // the offsets row by row, as NforPixel visits them
  for (int o = 0; o < offsets; ++o) {
    const int nextX = ox < radius ? ox + 1 : -radius, nextY = ox < radius ? oy : oy + 1;
    if (o + 1 < offsets) pairTerms(nextY * l.sw + nextX, (o + 1) & 1);
    const int qx = x + ox, qy = y + oy;
    if (inside && qx >= 0 && qy >= 0 && qx < v.width && qy < v.height) {
      const float2* term = terms + (o & 1) * Layout::kNp + ty * Layout::kPw + tx;
      float patchA = 0.0f, patchB = 0.0f;
      TRACER_UNROLL
      for (int dy = 0; dy <= 2 * F; ++dy) {
        float rowA = 0.0f, rowB = 0.0f;
        TRACER_UNROLL
        for (int dx = 0; dx <= 2 * F; ++dx) {
          const float2 t = term[dy * Layout::kPw + dx];
          rowA += t.x;
          rowB += t.y;
        }
        patchA += rowA;
        patchB += rowB;
      }
      const StagedPixel q = LoadStaged(rec, emission, l.ns, c + oy * l.sw + ox);
      NforAddNeighbour(s, centre, depthScale, q.point, q.a, q.b, patchA, patchB, invCount, fitA, fitB);
    }
    ox = nextX;
    oy = nextY;
    __syncthreads();
  }
  if (inside) StoreRgb(out, y * v.width + x, NforFinish(s, fitA, fitB));
}

// Launches the tiled kernel of patch radius F over block rows [blockRow0, blockRow0 + blockRows) (tiles of TH image
// rows), opting into more than 48 KB of shared memory where the window needs it; false (nothing launched) where the
// device cannot give the block that much.
template <int TW, int TH, int F>
bool LaunchNforTiledAs(const DenoiseView& v, int blockRow0, int blockRows, float* out) {
  const NforTileLayout<TW, TH, F> layout(v.settings);
  const size_t bytes = layout.Bytes();
  int device = 0, most = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > static_cast<size_t>(most)) return false;
  if (bytes > 48 * 1024)
    TRACER_CUDA_CHECK(cudaFuncSetAttribute(NforTiledKernel<TW, TH, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
  const dim3 block(TW, TH);
  const dim3 grid((v.width + TW - 1) / TW, static_cast<unsigned>(blockRows));
  NforTiledKernel<TW, TH, F><<<grid, block, bytes>>>(v, layout, blockRow0, out);
  TRACER_CHECK_LAUNCH("denoise_nfor_tiled");
  return true;
}

// The tiled kernel for the settings' patch radius (0 to 2) over those block rows; false where there is none (the
// caller runs the per-pixel kernel).
bool LaunchNforTiled(const DenoiseView& v, int blockRow0, int blockRows, float* out) {
  switch (v.settings.nforPatch) {
    case 0:
      return LaunchNforTiledAs<kNforTileW, kNforTileH, 0>(v, blockRow0, blockRows, out);
    case 1:
      return LaunchNforTiledAs<kNforTileW, kNforTileH, 1>(v, blockRow0, blockRows, out);
    case 2:
      return LaunchNforTiledAs<kNforTileW, kNforTileH, 2>(v, blockRow0, blockRows, out);
    default:
      return false;
  }
}

// The rows of the filtered image done so far: BandDone(firstRow, rows) is called on the host after the work that
// completes those rows is enqueued (on the legacy stream), band after band in order, the bands covering the image.
using BandDone = std::function<void(int, int)>;

// The regression's tiled kernel in up to kFilterBands bands of rows, so that the image can be read back band by band
// while the next is filtered (DenoiseFrameCuda); false where there is no tiled kernel for the settings.
constexpr int kFilterBands = 4;

bool RunNforTiledInBands(const DenoiseView& v, float* out, const BandDone& bandDone) {
  const int blockRows = (v.height + kNforTileH - 1) / kNforTileH,
            perBand = (blockRows + kFilterBands - 1) / kFilterBands;
  for (int b0 = 0; b0 < blockRows; b0 += perBand) {
    const int n = std::min(perBand, blockRows - b0);
    if (!LaunchNforTiled(v, b0, n, out)) return false;
    if (bandDone) bandDone(b0 * kNforTileH, std::min(v.height, (b0 + n) * kNforTileH) - b0 * kNforTileH);
  }
  return true;
}

// The filter's own buffers (kFloatsPerPixel floats a pixel, in one device allocation: its own or the caller's), and its
// kernels over a view whose images are on the device.
class DeviceFilter {
 public:
  static constexpr size_t kFloatsPerPixel = 14;
  // Over `storage` (pixels * kFloatsPerPixel floats, which must outlive the filter), or its own allocation when null.
  explicit DeviceFilter(int pixels, float* storage = nullptr) : pixels_(pixels) {
    const size_t n = static_cast<size_t>(pixels);
    if (!storage) {
      own_.Allocate(n * kFloatsPerPixel, "denoiser buffers");
      storage = own_.Get();
    }
    float* next = storage;
    auto take = [&](size_t floats) { return std::exchange(next, next + floats); };
    var3_ = take(n * 3);
    varA_ = take(n);
    varB_ = take(n);
    out_ = take(n * 3);
    tmp_ = take(n * 3);
    cleanB_ = take(n * 3);
  }

  // Runs the filter on `v` (its variance set here; `v.color`, the raw image, read by a-trous only); returns the
  // device image holding the result, which lives as long as this filter. `bandDone`, when given, hears of the result's
  // rows as their work is enqueued (the tiled regression's bands, else the whole image at the end).
  const float* Run(DenoiseView v, DenoiseMethod method, const BandDone& bandDone = {}) {
    v.variance = var3_;
    const unsigned grid = GridFor(static_cast<size_t>(pixels_), kBlock);
    if (method == DenoiseMethod::kNfor && v.settings.nforOutlier > 0.0f) {
      // The regression's halves with their fireflies clamped (into tmp_, which only a-trous uses otherwise, and
      // cleanB_); its variance and fits read those.
      NforClampOutliersKernel<<<grid, kBlock>>>(v, tmp_, cleanB_, pixels_);
      TRACER_CHECK_LAUNCH("denoise_nfor_outliers");
      v.halfA = tmp_;
      v.halfB = cleanB_;
    }
    DenoiseVarianceKernel<<<grid, kBlock>>>(v, var3_, varA_, pixels_);
    TRACER_CHECK_LAUNCH("denoise_variance");
    if (method == DenoiseMethod::kNfor) {
      if (v.settings.nforPerPixel || !RunNforTiledInBands(v, out_, bandDone)) {
        NforKernel<<<grid, kBlock>>>(v, out_, pixels_);
        TRACER_CHECK_LAUNCH("denoise_nfor");
        if (bandDone) bandDone(0, v.height);
      }
      return out_;
    }
    // Ping-pong: level 0 reads the image, each next level the one before.
    const float* src = v.color;
    float* colors[2] = {out_, tmp_};
    float* vars[2] = {varB_, varA_};
    const float* srcVar = varA_;
    for (int level = 0; level < kAtrousLevels; ++level) {
      float* dst = colors[level & 1];
      float* dstVar = vars[level & 1];
      AtrousKernel<<<grid, kBlock>>>(v, src, srcVar, level, dst, dstVar, pixels_);
      TRACER_CHECK_LAUNCH("denoise_atrous");
      src = dst;
      srcVar = dstVar;
    }
    if (bandDone) bandDone(0, v.height);
    return src;
  }

  // The device image that Run(v, method) leaves its result in.
  const float* Result(DenoiseMethod method) const {
    return method == DenoiseMethod::kAtrous && kAtrousLevels % 2 == 0 ? tmp_ : out_;
  }

 private:
  int pixels_;
  DeviceBuffer<float> own_;
  float *var3_, *varA_, *varB_, *out_, *tmp_, *cleanB_;
};

// The filtered device image `image` (`width` pixels a row, 3 floats each) into `host`, resized to the image (written in
// place when it has that size already, which spares a new buffer's page faults: about 10 ms for a 1080p image). With
// `staging` (pinned, the image's size at least) it goes band by band as the filter finishes them (DeviceFilter::Run's
// BandDone): the device writes each band into `staging` on a stream of its own while the filter makes the next, and
// host threads copy each out as it arrives; without, it is copied whole once the filter is done.
class BandedReadBack {
 public:
  BandedReadBack(const float* image, int width, int height, float* staging, std::vector<float>& host)
      : image_(image), rowValues_(static_cast<size_t>(width) * 3), staging_(staging), host_(host) {
    host_.resize(rowValues_ * static_cast<size_t>(height));
    if (staging_) pool_ = std::make_unique<ThreadPool>(ThreadPool::ThreadsFor(8));  // (its threads start meanwhile)
  }
  // Rows [firstRow, firstRow + rows) are complete once the legacy stream's work so far is.
  void Band(int firstRow, int rows) {
    if (!staging_) return;
    const size_t begin = static_cast<size_t>(firstRow) * rowValues_, n = static_cast<size_t>(rows) * rowValues_;
    filtered_.emplace_back(cudaEventDisableTiming);
    filtered_.back().Record(nullptr);
    TRACER_CUDA_CHECK(cudaStreamWaitEvent(copies_.Get(), filtered_.back().Get(), 0));
    TRACER_CUDA_CHECK(
        cudaMemcpyAsync(staging_ + begin, image_ + begin, n * sizeof(float), cudaMemcpyDeviceToHost, copies_.Get()));
    copied_.emplace_back(cudaEventDisableTiming);
    copied_.back().Record(copies_.Get());
    bands_.emplace_back(begin, n);
  }
  // Copies each band out as it arrives, and waits for the device's work. Returns the ms that it took after the filter
  // had finished (the read-back that the filter did not hide).
  double Finish() {
    if (!staging_) {
      TRACER_CUDA_CHECK(cudaDeviceSynchronize());
      const Stopwatch clock;
      TRACER_CUDA_CHECK(cudaMemcpy(host_.data(), image_, host_.size() * sizeof(float), cudaMemcpyDeviceToHost));
      return clock.Ms();
    }
    Stopwatch tail;
    for (size_t k = 0; k < bands_.size(); ++k) {
      if (k + 1 == bands_.size()) {
        filtered_[k].Synchronize();
        tail.Restart();
      }
      copied_[k].Synchronize();
      const float* from = staging_ + bands_[k].first;
      float* to = host_.data() + bands_[k].first;
      pool_->ParallelFor(bands_[k].second, size_t(1) << 17,
                         [&](size_t b, size_t e) { std::copy(from + b, from + e, to + b); });
    }
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());
    return tail.Ms();
  }

 private:
  const float* image_;
  size_t rowValues_;
  float* staging_;
  std::vector<float>& host_;
  std::unique_ptr<ThreadPool> pool_;
  CudaStream copies_;
  std::vector<CudaEvent> filtered_, copied_;
  std::vector<std::pair<size_t, size_t>> bands_;  // (first value, values)
};

// The raw image (where `color` is not null: a-trous reads it) and the half-buffers from a film on the device, as the
// host resolves them (HostFilm::Resolve and ResolveHalves: the same double arithmetic, so the same floats), n samples
// in every pixel.
__global__ void ResolveFilmKernel(const unsigned long long* sum, const unsigned long long* odd, unsigned n,
                                  float* color, float* halfA, float* halfB, int values) {
  const int i = ThreadIndex();
  if (i >= values) return;
  if (color) color[i] = static_cast<float>(static_cast<double>(sum[i]) * (1.0 / (kFilmScale * n)));
  HalfBufferValues(sum[i], odd[i], n, halfA[i], halfB[i]);
}

// The device image `image` (`values` floats) into a new host vector.
std::vector<float> ReadBack(const float* image, size_t values) {
  std::vector<float> host(values);
  TRACER_CUDA_CHECK(cudaMemcpy(host.data(), image, values * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

// The filter's view of a frame whose images are on the device: the raw image (a-trous only), the halves and the
// first-hit features traced there (its variance set by DeviceFilter::Run).
DenoiseView FeaturesView(int width, int height, const float* color, const float* halfA, const float* halfB,
                         const DeviceFirstHit& f) {
  return DenoiseView{width,    height,     color,   halfA,      halfB,   f.albedo,
                     f.normal, f.position, f.depth, f.emission, nullptr, DenoiseSettings{}};
}

void CheckSize(const std::vector<float>& v, size_t values) {
  if (v.size() != values) throw std::invalid_argument("Denoise: an input image has the wrong size");
}

}  // namespace

namespace {

// A host frame's images on the device, checked for size and uploaded.
struct UploadedFrame {
  DeviceBuffer<float> color, halfA, halfB, albedo, normal, position, depth, emission;
  DenoiseView view;
  UploadedFrame(const DenoiseImages& in, const DenoiseSettings& settings) {
    const size_t n3 = static_cast<size_t>(in.width) * static_cast<size_t>(in.height) * 3;
    for (const std::vector<float>* v :
         {&in.color, &in.halfA, &in.halfB, &in.albedo, &in.normal, &in.position, &in.emission})
      CheckSize(*v, n3);
    CheckSize(in.depth, n3 / 3);
    color.Upload(in.color, "denoiser input");
    halfA.Upload(in.halfA, "denoiser input");
    halfB.Upload(in.halfB, "denoiser input");
    albedo.Upload(in.albedo, "denoiser input");
    normal.Upload(in.normal, "denoiser input");
    position.Upload(in.position, "denoiser input");
    depth.Upload(in.depth, "denoiser input");
    emission.Upload(in.emission, "denoiser input");
    view = DenoiseView{in.width,     in.height,      color.Get(), halfA.Get(),    halfB.Get(), albedo.Get(),
                       normal.Get(), position.Get(), depth.Get(), emission.Get(), nullptr,     settings};
  }
};

}  // namespace

std::vector<float> DenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings) {
  const UploadedFrame frame(in, settings);
  const int pixels = in.width * in.height;
  DeviceFilter filter(pixels);
  return ReadBack(filter.Run(frame.view, method), static_cast<size_t>(pixels) * 3);
}

double TimeDenoiseCuda(const DenoiseImages& in, DenoiseMethod method, const DenoiseSettings& settings, int repeats,
                       std::vector<float>* image) {
  const UploadedFrame frame(in, settings);
  const int pixels = in.width * in.height;
  DeviceFilter filter(pixels);
  const float* out = nullptr;
  const double ms = MedianLaunchMs(0, 1, repeats, [&] { out = filter.Run(frame.view, method); });
  if (image) *image = ReadBack(out, static_cast<size_t>(pixels) * 3);
  return ms;
}

void PrepareDenoiseCuda(DenoiseMethod method) {
  cudaFuncAttributes attributes;
  auto load = [&](auto kernel) { TRACER_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel)); };
  load(ResolveFilmKernel);
  load(DenoiseVarianceKernel);
  if (method == DenoiseMethod::kAtrous) {
    load(AtrousKernel);
  } else {
    load(NforClampOutliersKernel);
    switch (DenoiseSettings{}.nforPatch) {
      case 0:
        load(NforTiledKernel<kNforTileW, kNforTileH, 0>);
        break;
      case 1:
        load(NforTiledKernel<kNforTileW, kNforTileH, 1>);
        break;
      case 2:
        load(NforTiledKernel<kNforTileW, kNforTileH, 2>);
        break;
      default:
        load(NforKernel);
    }
  }
  PrepareFirstHitCuda();
}

void DenoiseFrameCuda(const SceneData& scene, const DeviceScene* resident, const DeviceFilmView* film,
                      const RenderOptions& options, int featureSamples, int sppDone, const DenoiseImages& in,
                      DenoiseMethod method, int aovKinds, AovImages& aov, std::vector<float>& image,
                      DenoiseTiming* timing) {
  const int pixels = options.width * options.height;
  const size_t n3 = static_cast<size_t>(pixels) * 3;
  const bool onDevice =
      film && film->sum && film->odd && film->width == options.width && film->height == options.height && sppDone > 0;
  if (!onDevice) {
    CheckSize(in.halfA, n3);
    CheckSize(in.halfB, n3);
    if (method == DenoiseMethod::kAtrous) CheckSize(in.color, n3);
  }
  DenoiseTiming t;
  Stopwatch clock;
  // One device allocation for the step (a dozen separate ones and their frees cost about 1.8 ms at 1080p on an H100):
  // the features, the raw image (a-trous only) and the halves, the filter's own buffers.
  const size_t n = static_cast<size_t>(pixels), colorFloats = method == DenoiseMethod::kAtrous ? n3 : 0;
  DeviceBuffer<float> arena(
      n * (DeviceFirstHit::kFloatsPerPixel + DeviceFilter::kFloatsPerPixel) + colorFloats + 2 * n3, "denoiser images");
  float* next = arena.Get();
  auto take = [&](size_t floats) { return std::exchange(next, next + floats); };
  DeviceFirstHit features(n, take(n * DeviceFirstHit::kFloatsPerPixel));
  DeviceFilter filter(pixels, take(n * DeviceFilter::kFloatsPerPixel));
  float* color = colorFloats ? take(n3) : nullptr;
  float* halfA = take(n3);
  float* halfB = take(n3);
  {
    std::unique_ptr<DeviceScene> uploaded;
    if (!resident) resident = (uploaded = std::make_unique<DeviceScene>(scene)).get();
    TraceFirstHit(resident->view, options, featureSamples, features, 0, film);
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  }
  t.features = clock.Ms();
  clock.Restart();
  if (onDevice) {
    ResolveFilmKernel<<<GridFor(n3, kBlock), kBlock>>>(film->sum, film->odd, static_cast<unsigned>(sppDone), color,
                                                       halfA, halfB, static_cast<int>(n3));
    TRACER_CHECK_LAUNCH("denoise_resolve_film");
  } else {
    TRACER_CUDA_CHECK(cudaMemcpy(halfA, in.halfA.data(), n3 * sizeof(float), cudaMemcpyHostToDevice));
    TRACER_CUDA_CHECK(cudaMemcpy(halfB, in.halfB.data(), n3 * sizeof(float), cudaMemcpyHostToDevice));
    if (color) TRACER_CUDA_CHECK(cudaMemcpy(color, in.color.data(), n3 * sizeof(float), cudaMemcpyHostToDevice));
  }
  TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  t.inputs = clock.Ms();
  clock.Restart();
  const DenoiseView v = FeaturesView(options.width, options.height, color, halfA, halfB, features);
  const bool staged = onDevice && film->staging && film->stagingBytes >= n3 * sizeof(float);
  const float* result = filter.Result(method);
  BandedReadBack readBack(result, options.width, options.height, staged ? static_cast<float*>(film->staging) : nullptr,
                          image);
  filter.Run(v, method, [&](int firstRow, int rows) { readBack.Band(firstRow, rows); });
  t.readback = readBack.Finish();
  t.filter = clock.Ms() - t.readback;  // (with the read-back of the bands that it hid)
  features.CopyTo(options.width, options.height, aovKinds & kFirstHitAovs, aov);
  if (timing) *timing = t;
}

namespace {

// relMSE of `image` against `ref`: (x - r)^2 / (r^2 + 0.01), averaged over pixels and channels.
double RelMse(const std::vector<float>& image, const std::vector<float>& ref) {
  double sum = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(image[i]) - ref[i];
    sum += d * d / (static_cast<double>(ref[i]) * ref[i] + 0.01);
  }
  return ref.empty() ? 0.0 : sum / static_cast<double>(ref.size());
}

}  // namespace

DenoiseProfile ProfileDenoiseCuda(const SceneData& data, const RenderOptions& options, int featureSamples,
                                  int refFactor, int repeats) {
  RenderOptions o = options;
  o.quiet = true;
  o.collectStats = false;
  o.halfBuffers = true;
  o.spp = std::max(2, o.spp);
  RenderOptions ref = o;
  ref.halfBuffers = false;
  ref.spp = o.spp * refFactor;
  ref.seed = 987654u;
  const std::vector<float> reference = RenderCuda(data, ref).rgb;
  o.firstHitSamples = featureSamples;  // (the render keeps its camera rays' hits, as --denoise's does)
  std::unique_ptr<Backend> backend = MakeCudaBackend(data, o);
  const RenderResult r = RunPasses(o, *backend, {});
  const DeviceFilmView film = DeviceFilmOf(*backend);
  DenoiseImages in;
  in.width = o.width;
  in.height = o.height;
  ResolveHalves(r.film, in.halfA, in.halfB, o.threads);
  const int pixels = o.width * o.height;
  const DeviceScene scene(data);
  DeviceFirstHit features(static_cast<size_t>(pixels));
  DeviceBuffer<float> color, halfA, halfB;
  color.Upload(r.rgb, "denoiser input");
  halfA.Upload(in.halfA, "denoiser input");
  halfB.Upload(in.halfB, "denoiser input");
  DenoiseProfile p;
  p.spp = o.spp;
  p.relMseRaw = RelMse(r.rgb, reference);
  p.featuresMs = MedianLaunchMs(0, 1, repeats, [&] { TraceFirstHit(scene.view, o, featureSamples, features); });
  p.featuresKeptMs =
      MedianLaunchMs(0, 1, repeats, [&] { TraceFirstHit(scene.view, o, featureSamples, features, 0, &film); });
  const DenoiseView v = FeaturesView(o.width, o.height, color.Get(), halfA.Get(), halfB.Get(), features);
  DeviceFilter filter(pixels);
  for (const DenoiseMethod m : {DenoiseMethod::kNfor, DenoiseMethod::kAtrous}) {
    const float* out = nullptr;
    const double ms = MedianLaunchMs(0, 1, repeats, [&] { out = filter.Run(v, m); });
    const double err = RelMse(ReadBack(out, static_cast<size_t>(pixels) * 3), reference);
    (m == DenoiseMethod::kNfor ? p.nforMs : p.atrousMs) = ms;
    (m == DenoiseMethod::kNfor ? p.relMseNfor : p.relMseAtrous) = err;
  }
  // The regression's per-pixel twin on the same inputs: its time, and how far its image is from the tiled one's.
  const std::vector<float> tiled = ReadBack(filter.Run(v, DenoiseMethod::kNfor), static_cast<size_t>(pixels) * 3);
  DenoiseView naive = v;
  naive.settings.nforPerPixel = true;
  const float* out = nullptr;
  p.nforPerPixelMs = MedianLaunchMs(0, 1, repeats, [&] { out = filter.Run(naive, DenoiseMethod::kNfor); });
  const std::vector<float> perPixel = ReadBack(out, static_cast<size_t>(pixels) * 3);
  for (size_t i = 0; i < tiled.size(); ++i)
    p.nforTwinDifference =
        std::max(p.nforTwinDifference, std::fabs(static_cast<double>(perPixel[i]) - tiled[i]) / (tiled[i] + 0.01));
  return p;
}

}  // namespace tracer
