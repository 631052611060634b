// @file denoise.cu: --denoise on the GPU (host/denoise.h): the CPU's per-pixel code (core/denoise.h,
// core/denoise_nfor.h), pass after pass: the variance, then five a-trous levels (a thread a pixel) or the regression (a
// block a tile, its inputs and each offset's patch terms in shared memory). After a render on the GPU
// (DenoiseFrameCuda) the first-hit features are traced into device memory and read there: only the half-buffers go
// up and the image comes back.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tracer/core/denoise_nfor.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/event_timer.h"
#include "tracer/cuda/first_hit_launch.h"
#include "tracer/cuda/kernel_common.cuh"
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

// The naive twin (settings.nforPerPixel, --profile's "regression: tiled vs per-pixel"): NforPixel, each patch distance
// summed on its own from global memory ((2f + 1)^2 pair terms a neighbour); the same image as the tiled kernel up to
// rounding, several times slower.
__global__ void NforKernel(DenoiseView v, float* out, int pixels) {
  const int p = ThreadIndex();
  if (p < pixels) StoreRgb(out, p, NforPixel(v, p));
}

// ---- the regression over tiles in shared memory ----------------------------------------------------------------
// A block filters a tile of kNforTileW x kNforTileH pixels. Its inputs over the tile and an apron of r + f pixels
// (edges clamped) are staged in shared memory once; then, for each window offset o, the block computes the pair terms
// of (s, s + o) over the tile and its patch apron (NlmPairTerms: one term per pixel instead of (2f + 1)^2), and each
// thread box-sums its patch's and adds the neighbour to both halves' systems, which stay in its registers. The terms
// alternate between two buffers, so one barrier per offset suffices: a buffer is written again only after the next
// offset's barrier, which every thread reaches after reading it.
constexpr int kNforTileW = 16, kNforTileH = 8;

// Where each staged array starts in the block's shared memory, in floats.
struct NforTileLayout {
  int apron, sw, ns, pw, np;
  explicit NforTileLayout(const DenoiseSettings& s)
      : apron(s.nforRadius + s.nforPatch),
        sw(kNforTileW + 2 * apron),
        ns(sw * (kNforTileH + 2 * apron)),
        pw(kNforTileW + 2 * s.nforPatch),
        np(pw * (kNforTileH + 2 * s.nforPatch)) {}
  // halfA, halfB, variance, albedo, normal (3 each), depth, emission (1 each); then 2 buffers x 2 guides of terms
  TRACER_HD int Depth() const { return 15 * ns; }
  TRACER_HD int Emission() const { return 16 * ns; }
  TRACER_HD int Terms() const { return 17 * ns; }
  size_t Bytes() const { return static_cast<size_t>(17 * ns + 4 * np) * sizeof(float); }
};

__device__ Vec3 Staged(const float* a, int i) { return Vec3(a[3 * i], a[3 * i + 1], a[3 * i + 2]); }

__global__ void __launch_bounds__(kNforTileW* kNforTileH) NforTiledKernel(DenoiseView v, NforTileLayout l, float* out) {
  extern __shared__ float smem[];
  const DenoiseSettings& s = v.settings;
  float *sA = smem, *sB = smem + 3 * l.ns, *sVar = smem + 6 * l.ns, *sAlbedo = smem + 9 * l.ns;
  float *sNormal = smem + 12 * l.ns, *sDepth = smem + l.Depth(), *sEmission = smem + l.Emission();
  const int x0 = static_cast<int>(blockIdx.x) * kNforTileW, y0 = static_cast<int>(blockIdx.y) * kNforTileH;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int tid = ty * kNforTileW + tx, threads = kNforTileW * kNforTileH;
  for (int i = tid; i < l.ns; i += threads) {
    const int gx = ClampInt(x0 - l.apron + i % l.sw, 0, v.width - 1);
    const int gy = ClampInt(y0 - l.apron + i / l.sw, 0, v.height - 1);
    const int g = gy * v.width + gx;
    for (int c = 0; c < 3; ++c) {
      sA[3 * i + c] = v.halfA[3 * g + c];
      sB[3 * i + c] = v.halfB[3 * g + c];
      sVar[3 * i + c] = v.variance[3 * g + c];
      sAlbedo[3 * i + c] = v.albedo[3 * g + c];
      sNormal[3 * i + c] = v.normal[3 * g + c];
    }
    sDepth[i] = v.depth[g];
    sEmission[i] = Sum3(PixelRgb(v.emission, g));
  }
  __syncthreads();
  const int x = x0 + tx, y = y0 + ty, f = s.nforPatch;
  const bool inside = x < v.width && y < v.height;
  const int c = (ty + l.apron) * l.sw + tx + l.apron;  // the centre's staged index
  const NforPoint centre{Staged(sAlbedo, c), Staged(sNormal, c), sDepth[c], sEmission[c]};
  const float depthScale = inside ? NforDepthScale(v, x, y) : 0.0f;
  const float k2 = s.nforK * s.nforK, invCount = NlmInvCount(s);
  NforSystem fitA, fitB;
  NforClear(fitA);
  NforClear(fitB);
  int buffer = 0;
  for (int oy = -s.nforRadius; oy <= s.nforRadius; ++oy)
    for (int ox = -s.nforRadius; ox <= s.nforRadius; ++ox) {
      float* termA = smem + l.Terms() + buffer * 2 * l.np;
      float* termB = termA + l.np;
      for (int i = tid; i < l.np; i += threads) {
        const int a = (i / l.pw + l.apron - f) * l.sw + i % l.pw + l.apron - f, b = a + oy * l.sw + ox;
        NlmPairTerms(Staged(sA, a), Staged(sB, a), Staged(sVar, a), Staged(sA, b), Staged(sB, b), Staged(sVar, b), k2,
                     termA[i], termB[i]);
      }
      __syncthreads();
      buffer ^= 1;
      const int qx = x + ox, qy = y + oy;
      if (!inside || qx < 0 || qy < 0 || qx >= v.width || qy >= v.height) continue;
      float patchA = 0.0f, patchB = 0.0f;
      for (int dy = 0; dy <= 2 * f; ++dy) {
        float rowA = 0.0f, rowB = 0.0f;
        for (int dx = 0; dx <= 2 * f; ++dx) {
          rowA += termA[(ty + dy) * l.pw + tx + dx];
          rowB += termB[(ty + dy) * l.pw + tx + dx];
        }
        patchA += rowA;
        patchB += rowB;
      }
      const int q = c + oy * l.sw + ox;
      const NforPoint neighbour{Staged(sAlbedo, q), Staged(sNormal, q), sDepth[q], sEmission[q]};
      NforAddNeighbour(s, centre, depthScale, neighbour, Staged(sA, q), Staged(sB, q), patchA, patchB, invCount, fitA,
                       fitB);
    }
  if (inside) StoreRgb(out, y * v.width + x, NforFinish(s, fitA, fitB));
}

// Launches the tiled kernel, opting into more than 48 KB of shared memory where the window needs it; false (nothing
// launched) where the device cannot give the block that much.
bool LaunchNforTiled(const DenoiseView& v, float* out) {
  const NforTileLayout layout(v.settings);
  const size_t bytes = layout.Bytes();
  int device = 0, most = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&device));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > static_cast<size_t>(most)) return false;
  if (bytes > 48 * 1024)
    TRACER_CUDA_CHECK(
        cudaFuncSetAttribute(NforTiledKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  const dim3 block(kNforTileW, kNforTileH);
  const dim3 grid((v.width + kNforTileW - 1) / kNforTileW, (v.height + kNforTileH - 1) / kNforTileH);
  NforTiledKernel<<<grid, block, bytes>>>(v, layout, out);
  TRACER_CHECK_LAUNCH("denoise_nfor_tiled");
  return true;
}

// The filter's own buffers, and its kernels over a view whose images are on the device.
class DeviceFilter {
 public:
  explicit DeviceFilter(int pixels)
      : pixels_(pixels),
        var3_(static_cast<size_t>(pixels) * 3, "denoiser variance"),
        varA_(pixels, "denoiser variance"),
        varB_(pixels, "denoiser variance"),
        out_(static_cast<size_t>(pixels) * 3, "denoiser output"),
        tmp_(static_cast<size_t>(pixels) * 3, "denoiser output") {}

  // Runs the filter on `v` (its variance set here; `v.color`, the raw image, read by a-trous only); returns the
  // device image holding the result, which lives as long as this filter.
  const float* Run(DenoiseView v, DenoiseMethod method) {
    v.variance = var3_.Get();
    const unsigned grid = GridFor(static_cast<size_t>(pixels_), kBlock);
    DenoiseVarianceKernel<<<grid, kBlock>>>(v, var3_.Get(), varA_.Get(), pixels_);
    TRACER_CHECK_LAUNCH("denoise_variance");
    if (method == DenoiseMethod::kNfor) {
      if (v.settings.nforPerPixel || !LaunchNforTiled(v, out_.Get())) {
        NforKernel<<<grid, kBlock>>>(v, out_.Get(), pixels_);
        TRACER_CHECK_LAUNCH("denoise_nfor");
      }
      return out_.Get();
    }
    // Ping-pong: level 0 reads the image, each next level the one before.
    const float* src = v.color;
    float* colors[2] = {out_.Get(), tmp_.Get()};
    float* vars[2] = {varB_.Get(), varA_.Get()};
    const float* srcVar = varA_.Get();
    for (int level = 0; level < kAtrousLevels; ++level) {
      float* dst = colors[level & 1];
      float* dstVar = vars[level & 1];
      AtrousKernel<<<grid, kBlock>>>(v, src, srcVar, level, dst, dstVar, pixels_);
      TRACER_CHECK_LAUNCH("denoise_atrous");
      src = dst;
      srcVar = dstVar;
    }
    return src;
  }

 private:
  int pixels_;
  DeviceBuffer<float> var3_, varA_, varB_, out_, tmp_;
};

// The device image `image` (`values` floats) into `host` (resized to `values`; written in place when it has that size
// already, which spares a new buffer's page faults: about 10 ms for a 1080p image), through `staging` (pinned, at least
// `values` floats) when given: the device writes that at full speed, and host threads copy it out.
void ReadBackInto(const float* image, size_t values, float* staging, std::vector<float>& host) {
  host.resize(values);
  if (!staging) {
    TRACER_CUDA_CHECK(cudaMemcpy(host.data(), image, values * sizeof(float), cudaMemcpyDeviceToHost));
    return;
  }
  TRACER_CUDA_CHECK(cudaMemcpy(staging, image, values * sizeof(float), cudaMemcpyDeviceToHost));
  ThreadPool pool(ThreadPool::ThreadsFor(8));
  pool.ParallelFor(values, size_t(1) << 18,
                   [&](size_t begin, size_t end) { std::copy(staging + begin, staging + end, host.data() + begin); });
}

// The raw image and the half-buffers from a film on the device, as the host resolves them (HostFilm::Resolve and
// ResolveHalves: the same double arithmetic, so the same floats), n samples in every pixel.
__global__ void ResolveFilmKernel(const unsigned long long* sum, const unsigned long long* odd, unsigned n,
                                  float* color, float* halfA, float* halfB, int values) {
  const int i = ThreadIndex();
  if (i >= values) return;
  color[i] = static_cast<float>(static_cast<double>(sum[i]) * (1.0 / (kFilmScale * n)));
  HalfBufferValues(sum[i], odd[i], n, halfA[i], halfB[i]);
}

// The same into a new host vector, without staging.
std::vector<float> ReadBack(const float* image, size_t values) {
  std::vector<float> host;
  ReadBackInto(image, values, nullptr, host);
  return host;
}

// The filter's view of a frame whose images are on the device: the raw image (a-trous only), the halves and the
// first-hit features traced there (its variance set by DeviceFilter::Run).
DenoiseView FeaturesView(int width, int height, const DeviceBuffer<float>& color, const DeviceBuffer<float>& halfA,
                         const DeviceBuffer<float>& halfB, const DeviceFirstHit& f) {
  return DenoiseView{width,          height,           color.Get(),   halfA.Get(),      halfB.Get(), f.albedo.Get(),
                     f.normal.Get(), f.position.Get(), f.depth.Get(), f.emission.Get(), nullptr,     DenoiseSettings{}};
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
  DeviceFirstHit features(static_cast<size_t>(pixels));
  {
    std::unique_ptr<DeviceScene> uploaded;
    if (!resident) resident = (uploaded = std::make_unique<DeviceScene>(scene)).get();
    TraceFirstHit(resident->view, options, featureSamples, features);
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  }
  t.features = clock.Ms();
  clock.Restart();
  DeviceBuffer<float> color, halfA, halfB;
  if (onDevice) {
    color.Allocate(n3, "denoiser input");
    halfA.Allocate(n3, "denoiser input");
    halfB.Allocate(n3, "denoiser input");
    ResolveFilmKernel<<<GridFor(n3, kBlock), kBlock>>>(film->sum, film->odd, static_cast<unsigned>(sppDone),
                                                       color.Get(), halfA.Get(), halfB.Get(), static_cast<int>(n3));
    TRACER_CHECK_LAUNCH("denoise_resolve_film");
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    halfA.Upload(in.halfA, "denoiser input");
    halfB.Upload(in.halfB, "denoiser input");
    if (method == DenoiseMethod::kAtrous) color.Upload(in.color, "denoiser input");
  }
  t.inputs = clock.Ms();
  clock.Restart();
  const DenoiseView v = FeaturesView(options.width, options.height, color, halfA, halfB, features);
  DeviceFilter filter(pixels);
  const float* result = filter.Run(v, method);
  TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  t.filter = clock.Ms();
  clock.Restart();
  const bool staged = onDevice && film->staging && film->stagingBytes >= n3 * sizeof(float);
  ReadBackInto(result, n3, staged ? static_cast<float*>(film->staging) : nullptr, image);
  t.readback = clock.Ms();
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
  const RenderResult r = RenderCuda(data, o);
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
  const DenoiseView v = FeaturesView(o.width, o.height, color, halfA, halfB, features);
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
