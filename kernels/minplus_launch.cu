// @file minplus_launch.cu: the min-plus propagation step C <- min(C, D (x) C): banded (what renders run) and in
// four dense versions (naive, coalesced, tiled, tiled fixed-point with DPX), its iteration, and the timing
// table that compares them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tracer/core/minplus.h"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/event_timer.h"
#include "tracer/cuda/minplus_launch.h"

namespace tracer {

namespace {

constexpr unsigned kMinPlusBlock = 256;

// ---- naive and coalesced: one thread per output -----------------------------------------------------------

// Naive twin of MinPlusCoalescedKernel: threadIdx.x -> t, so a warp reads D[t..t+31][k], 32 rows T floats
// apart (32 sectors per load instead of one broadcast); expect ~10x the coalesced time (docs/PERFORMANCE.md).
__global__ void __launch_bounds__(kMinPlusBlock)
    MinPlusNaiveKernel(const float* __restrict__ D, const float* __restrict__ C, float* __restrict__ out, int T, int K,
                       int* changed) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(T) * K) return;
  const int t = static_cast<int>(i % T), c = static_cast<int>(i / T);
  const float r = MinPlusOutput(D, C, T, K, t, c);
  const size_t o = static_cast<size_t>(t) * K + c;
  if (changed && r < C[o]) *changed = 1;
  out[o] = r;
}

// threadIdx.x -> c: a warp shares t, so D[t][k] is one broadcast and C[k][c..c+31] one 128-byte line.
// Naive twin of MinPlusTiledKernel: no reuse through shared memory or registers, two global (L1/L2) loads per
// term instead of a sixteenth of an LDS.128; expect about 4x the tiled time (docs/PERFORMANCE.md).
__global__ void __launch_bounds__(kMinPlusBlock)
    MinPlusCoalescedKernel(const float* __restrict__ D, const float* __restrict__ C, float* __restrict__ out, int T,
                           int K, int* changed) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(T) * K) return;
  const int c = static_cast<int>(i % K), t = static_cast<int>(i / K);
  const float r = MinPlusOutput(D, C, T, K, t, c);
  if (changed && r < C[i]) *changed = 1;
  out[i] = r;
}

// ---- banded: what renders run ------------------------------------------------------------------------------

// One thread per output, c fastest (as the coalesced kernel): with K >= 32 a warp shares t, so a band entry is
// one broadcast and C[k][c..c+31] one line; with fewer clusters a warp spans a few tiles, whose band rows are
// still few lines. (2r + 1)^2 terms per output instead of T.
__global__ void __launch_bounds__(kMinPlusBlock)
    MinPlusBandKernel(TileBand band, const float* __restrict__ D, const float* __restrict__ C, float* __restrict__ out,
                      int K, int* changed) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(band.NumTiles()) * K) return;
  const int c = static_cast<int>(i % K), t = static_cast<int>(i / K);
  const float r = MinPlusBandOutput(band, D, C, K, t, c);
  if (changed && r < C[i]) *changed = 1;
  out[i] = r;
}

// The dense matrix of a band, one thread per entry (+inf off the band).
__global__ void DenseFromBandKernel(TileBand band, const float* __restrict__ D, float* __restrict__ dense) {
  const size_t T = static_cast<size_t>(band.NumTiles());
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * T) return;
  const int t = static_cast<int>(i / T), k = static_cast<int>(i % T);
  const int dx = k % band.tilesX - t % band.tilesX, dy = k / band.tilesX - t / band.tilesX;
  const bool in = dx >= -band.radius && dx <= band.radius && dy >= -band.radius && dy <= band.radius;
  dense[i] = in ? D[static_cast<size_t>(t) * band.Size() + (dy + band.radius) * band.Side() + dx + band.radius] : kInf;
}

// ---- tiled: shared-memory tiles and 8x8 register blocking -------------------------------------------------
//
// Block tile 128 (rows t) x 128 (columns c), reduction slab BK = 16 values of k, 256 threads as 16 x 16, each
// thread owning 8 x 8 outputs: rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns tx*4 + {0..3} and
// 64 + tx*4 + {0..3}. The inner loop is nothing but FADD + FMNMX (or one VIADDMNMX) on registers:
//   - per 4 values of k, the thread reads its 8 rows of D as 8 LDS.128 (4 consecutive k each) and, per k,
//     its 8 columns of C as 2 LDS.128: 4 LDS.128 per 64 relaxations (128 FP32 instructions);
//   - a warp spans 2 values of ty and 16 of tx, so a D read touches 2 addresses (broadcast) and a C read 16
//     consecutive 16-byte vectors; in each 8-thread phase of an LDS.128 the addresses are equal or in distinct
//     banks. Ds rows are padded to 20 floats so rows ty*4 and ty*4 + 4 (the two addresses of a D read) fall
//     16 banks apart.
// Shared memory (36 KB): Ds[2][BM][BK + 4] (D as stored, k fastest) and Cs[2][BK][BN], double-buffered: one
// barrier per slab. Slab s + 1 is fetched while slab s is computed:
//   - kVec (T % 4 == 0, K % 4 == 0, 16-byte aligned pointers) on sm_80+: cp.async 16-byte copies straight
//     into shared memory (LDGSTS.128), so the prefetch holds no registers and the compiler cannot sink it
//     below the compute (it did with a register prefetch, a third slower at T = 8192). Each thread
//     copies two 4-groups of D (rows tid/4 and 64 + tid/4, k offset (tid%4)*4: four threads read a row's 64
//     bytes) and two of C (rows tid/32 and 8 + tid/32, 128 consecutive floats per row). A 4-group then lies
//     entirely inside or outside the matrix.
//   - otherwise (T or K not a multiple of 4, unaligned pointers, or the compute_75 PTX): the same mapping
//     through registers, bounds-checked scalar loads issued before the compute and stored after it.
// Anything outside the matrices is padded with the ring's +inf (inf + x = inf never wins a min).
// It reaches about two thirds of the FP32 issue rate counting FADD + FMNMX per term at T = 8192, K = 256, where 128
// blocks on 132 SMs cap it at 97% (docs/PERFORMANCE.md, min-plus).
constexpr int kBM = 128, kBN = 128, kBK = 16, kTM = 8, kTN = 8;
constexpr int kTiledThreads = (kBM / kTM) * (kBN / kTN);
constexpr int kDsStride = kBK + 4;
static_assert(kTiledThreads == 256, "the load mapping below assumes 256 threads");
constexpr int kGroups = kBM * kBK / (4 * kTiledThreads);  // 4-groups of D (and of C) each thread fetches per slab
static_assert(kBM == kBN && kGroups >= 1 && kBM * kBK == 4 * kTiledThreads * kGroups, "whole 4-groups per thread");
static_assert(kBK % 4 == 0, "D fragments are read 4 values of k at a time");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr bool kHaveCpAsync = true;
#else
constexpr bool kHaveCpAsync = false;  // host pass, and the compute_75 PTX: the register path
#endif

// 16-byte asynchronous global -> shared copy (bypassing L1), and its group fence. sm_80+ only.
[[maybe_unused]] __device__ __forceinline__ void CpAsync16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
#endif
}
__device__ __forceinline__ void CpAsyncCommit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
__device__ __forceinline__ void CpAsyncWaitAll() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

// (min, +) on floats: one FADD and one FMNMX per term.
struct MinPlusFloatRing {
  using Value = float;
  using Vec = float4;
  static __device__ __forceinline__ Value Pad() { return __int_as_float(0x7f800000); }  // +inf
  static __device__ __forceinline__ Value Relax(Value acc, Value d, Value c) { return fminf(acc, d + c); }
  static __device__ __forceinline__ Value Finish(Value acc, Value cin) { return fminf(acc, cin); }
};
// (min, +) on fixed point: one VIADDMNMX (DPX, sm_90) per term; on older targets the intrinsic is an add and a min.
// Float twin is MinPlusFloatRing: two instructions per term against one here. VIADDMNMX issues at half the FP32
// rate (measured ~54 terms/clock/SM of 64), so it gains only what the saved issue slots give (docs/PERFORMANCE.md,
// min-plus).
struct MinPlusFixedRing {
  using Value = int32_t;
  using Vec = int4;
  static __device__ __forceinline__ Value Pad() { return kFixInf; }
  static __device__ __forceinline__ Value Relax(Value acc, Value d, Value c) { return __viaddmin_s32(d, c, acc); }
  static __device__ __forceinline__ Value Finish(Value acc, Value cin) { return FixSaturate(min(acc, cin)); }
};

template <typename Vec>
__device__ __forceinline__ auto Component(const Vec& v, int q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;  // q is a compile-time constant after unrolling
}

// One block per SM lets the compiler use ~150 registers (64 accumulators, 32 D + 8 C fragment values, addresses)
// without spilling. Asking for two (a 128-register cap) measured the same at T = 8192, where 128 blocks fill 128 of
// 132 SMs anyway, and spills in the scalar path.
template <class Ring, bool kVec>
__global__ void __launch_bounds__(kTiledThreads, 1)
    MinPlusTiledKernel(const typename Ring::Value* __restrict__ D, const typename Ring::Value* __restrict__ C,
                       typename Ring::Value* __restrict__ out, int T, int K, int* changed) {
  using V = typename Ring::Value;
  using Vec = typename Ring::Vec;
  constexpr bool kAsync = kVec && kHaveCpAsync;
  __shared__ __align__(16) V Ds[2][kBM][kDsStride];
  __shared__ __align__(16) V Cs[2][kBK][kBN];

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = static_cast<int>(blockIdx.y) * kBM, n0 = static_cast<int>(blockIdx.x) * kBN;
  const V pad = Ring::Pad();

  // Global-load mapping (see above): group g = tid + 256 h of the slab is D row g / (BK/4), k offset
  // (g % (BK/4)) * 4, and C row g / 32, column (g % 32) * 4. Running pointers advance by one slab per fetch.
  constexpr int kDGroupsPerRow = kBK / 4;
  const int dK = (tid % kDGroupsPerRow) * 4;  // the same for every h
  const int cCol = n0 + (tid % 32) * 4;       // likewise
  const int dRow0 = tid / kDGroupsPerRow, cRow0 = tid / 32;
  constexpr int kDRowStep = kTiledThreads / kDGroupsPerRow, kCRowStep = kTiledThreads / 32;  // per h
  const V* dPtr = D + static_cast<size_t>(m0 + dRow0 < T ? m0 + dRow0 : 0) * T + dK;
  const V* cPtr = C + static_cast<size_t>(cRow0) * K + (cCol < K ? cCol : 0);
  const size_t dHStep = static_cast<size_t>(kDRowStep) * T, cHStep = static_cast<size_t>(kCRowStep) * K;
  const size_t cStep = static_cast<size_t>(kBK) * K;
  // This thread's destinations in buffer b (computed, not held in an array: a run-time index into a register
  // array would put it in local memory)
  auto dDst = [&](int b, int h) { return &Ds[b][dRow0 + h * kDRowStep][dK]; };
  auto cDst = [&](int b, int h) { return &Cs[b][cRow0 + h * kCRowStep][(tid % 32) * 4]; };

  V dReg[kGroups][4], cReg[kGroups][4];  // register path only
  auto fetchSlab = [&](int k0, int b) {  // k0 advances by kBK per call, in step with the pointers
    const int dk = k0 + dK;
#pragma unroll
    for (int h = 0; h < kGroups; ++h) {
      const int dRow = m0 + dRow0 + h * kDRowStep, ck = k0 + cRow0 + h * kCRowStep;
      const V* dp = dPtr + h * dHStep;
      const V* cp = cPtr + h * cHStep;
      if constexpr (kAsync) {
        Vec padVec;
        padVec.x = padVec.y = padVec.z = padVec.w = pad;
        if (dRow < T && dk < T)
          CpAsync16(dDst(b, h), dp);
        else
          *reinterpret_cast<Vec*>(dDst(b, h)) = padVec;
        if (ck < T && cCol < K)
          CpAsync16(cDst(b, h), cp);
        else
          *reinterpret_cast<Vec*>(cDst(b, h)) = padVec;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          dReg[h][j] = (dRow < T && dk + j < T) ? __ldg(dp + j) : pad;
          cReg[h][j] = (ck < T && cCol + j < K) ? __ldg(cp + j) : pad;
        }
      }
    }
    CpAsyncCommit();
    dPtr += kBK;
    cPtr += cStep;
  };
  auto storeSlab = [&](int b) {  // register path: registers -> shared
    if constexpr (!kAsync) {
#pragma unroll
      for (int h = 0; h < kGroups; ++h) {
        Vec dv, cv;
        dv.x = dReg[h][0], dv.y = dReg[h][1], dv.z = dReg[h][2], dv.w = dReg[h][3];
        cv.x = cReg[h][0], cv.y = cReg[h][1], cv.z = cReg[h][2], cv.w = cReg[h][3];
        *reinterpret_cast<Vec*>(dDst(b, h)) = dv;
        *reinterpret_cast<Vec*>(cDst(b, h)) = cv;
      }
    }
  };

  V acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = pad;

  fetchSlab(0, 0);
  storeSlab(0);
  CpAsyncWaitAll();
  __syncthreads();
  const int slabs = (T + kBK - 1) / kBK;
  int buf = 0;
  for (int s = 0; s < slabs; ++s) {
    const bool more = s + 1 < slabs;
    if (more) fetchSlab((s + 1) * kBK, buf ^ 1);  // in flight during the compute below
#pragma unroll
    for (int k4 = 0; k4 < kBK; k4 += 4) {
      // D fragment: this thread's 8 rows, 4 consecutive k each (8 x LDS.128)
      Vec dr[kTM];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
        dr[i] = *reinterpret_cast<const Vec*>(&Ds[buf][i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4)][k4]);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        // C fragment: this thread's 8 columns at k = k4 + q (2 x LDS.128)
        const Vec c0 = *reinterpret_cast<const Vec*>(&Cs[buf][k4 + q][tx * 4]);
        const Vec c1 = *reinterpret_cast<const Vec*>(&Cs[buf][k4 + q][64 + tx * 4]);
        const V b[kTN] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          const V a = Component(dr[i], q);
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] = Ring::Relax(acc[i][j], a, b[j]);
        }
      }
    }
    if (more) storeSlab(buf ^ 1);  // the other buffer: nobody reads it until after the barrier
    CpAsyncWaitAll();
    __syncthreads();
    buf ^= 1;
  }

  // Epilogue: min with C[t][c], flag a change, store
  bool anyChanged = false;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int t = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (t >= T) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = n0 + h * 64 + tx * 4;
      const size_t o = static_cast<size_t>(t) * K + c;
      if (kVec) {
        if (c >= K) continue;
        const Vec cin = __ldg(reinterpret_cast<const Vec*>(C + o));
        Vec r;
        r.x = Ring::Finish(acc[i][h * 4 + 0], cin.x);
        r.y = Ring::Finish(acc[i][h * 4 + 1], cin.y);
        r.z = Ring::Finish(acc[i][h * 4 + 2], cin.z);
        r.w = Ring::Finish(acc[i][h * 4 + 3], cin.w);
        anyChanged |= (r.x < cin.x) | (r.y < cin.y) | (r.z < cin.z) | (r.w < cin.w);
        *reinterpret_cast<Vec*>(out + o) = r;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (c + j >= K) continue;
          const V cin = __ldg(C + o + j);
          const V r = Ring::Finish(acc[i][h * 4 + j], cin);
          anyChanged |= r < cin;
          out[o + j] = r;
        }
      }
    }
  }
  if (changed && anyChanged) *changed = 1;
}

__global__ void FixFromFloatKernel(const float* __restrict__ src, int32_t* __restrict__ dst, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = FixFromFloat(src[i]);
}
__global__ void FloatFromFixKernel(const int32_t* __restrict__ src, float* __restrict__ dst, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = FloatFromFix(src[i]);
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

void CheckSizes(int T, int K) {
  if (T < 0 || K < 0) throw std::invalid_argument("min-plus: negative size");
  if (static_cast<long long>(T + kBM - 1) / kBM > 65535) throw std::invalid_argument("min-plus: T too large");
}

template <class Ring>
void LaunchTiled(const typename Ring::Value* dD, const typename Ring::Value* dC, typename Ring::Value* dOut, int T,
                 int K, cudaStream_t stream, int* dChanged) {
  CheckSizes(T, K);
  if (T == 0 || K == 0) return;
  const dim3 grid(static_cast<unsigned>((K + kBN - 1) / kBN), static_cast<unsigned>((T + kBM - 1) / kBM));
  const bool vec = T % 4 == 0 && K % 4 == 0 && Aligned16(dD) && Aligned16(dC) && Aligned16(dOut);
  if (vec)
    MinPlusTiledKernel<Ring, true><<<grid, kTiledThreads, 0, stream>>>(dD, dC, dOut, T, K, dChanged);
  else
    MinPlusTiledKernel<Ring, false><<<grid, kTiledThreads, 0, stream>>>(dD, dC, dOut, T, K, dChanged);
  TRACER_CHECK_LAUNCH("minplus_tiled");
}

}  // namespace

void LaunchFixFromFloat(const float* dSrc, int32_t* dDst, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  FixFromFloatKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(dSrc, dDst, n);
  TRACER_CHECK_LAUNCH("fix_from_float");
}
void LaunchFloatFromFix(const int32_t* dSrc, float* dDst, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  FloatFromFixKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(dSrc, dDst, n);
  TRACER_CHECK_LAUNCH("float_from_fix");
}

void LaunchMinPlusStepFixed(const int32_t* dD, const int32_t* dC, int32_t* dOut, int T, int K, cudaStream_t stream,
                            int* dChanged) {
  LaunchTiled<MinPlusFixedRing>(dD, dC, dOut, T, K, stream, dChanged);
}

void LaunchMinPlusStep(MinPlusKernel which, const float* dD, const float* dC, float* dOut, int T, int K,
                       cudaStream_t stream, int* dChanged) {
  if (which == MinPlusKernel::kBand)
    throw std::invalid_argument("LaunchMinPlusStep: the banded step is LaunchMinPlusBandStep");
  CheckSizes(T, K);
  const size_t n = static_cast<size_t>(T) * K;
  if (n == 0) return;
  switch (which) {
    case MinPlusKernel::kNaive:
      MinPlusNaiveKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(dD, dC, dOut, T, K, dChanged);
      TRACER_CHECK_LAUNCH("minplus_naive");
      break;
    case MinPlusKernel::kCoalesced:
      MinPlusCoalescedKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(dD, dC, dOut, T, K, dChanged);
      TRACER_CHECK_LAUNCH("minplus_coalesced");
      break;
    case MinPlusKernel::kTiled:
      LaunchTiled<MinPlusFloatRing>(dD, dC, dOut, T, K, stream, dChanged);
      break;
    case MinPlusKernel::kDpx: {
      DeviceBuffer<int32_t> fd(static_cast<size_t>(T) * T, "min-plus fixed D"), fc(n, "min-plus fixed C"),
          fo(n, "min-plus fixed out");
      LaunchFixFromFloat(dD, fd.Get(), fd.Size(), stream);
      LaunchFixFromFloat(dC, fc.Get(), n, stream);
      LaunchMinPlusStepFixed(fd.Get(), fc.Get(), fo.Get(), T, K, stream, dChanged);
      LaunchFloatFromFix(fo.Get(), dOut, n, stream);
      TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries are freed on return
      break;
    }
    case MinPlusKernel::kBand:  // refused above
      break;
  }
}

namespace {

// Ping-pong between `c` (which holds the input and must hold the result) and `scratch`.
template <typename V, typename Step>
int Iterate(V* c, V* scratch, size_t n, int maxSteps, MinPlusStop stop, cudaStream_t stream, Step step) {
  DeviceBuffer<int> flag(1, "min-plus changed flag");
  V* cur = c;
  V* next = scratch;
  int steps = 0;
  for (int s = 0; s < maxSteps; ++s) {
    const bool check = stop == MinPlusStop::kUntilConverged;
    if (check) TRACER_CUDA_CHECK(cudaMemsetAsync(flag.Get(), 0, sizeof(int), stream));
    step(cur, next, check ? flag.Get() : nullptr);
    std::swap(cur, next);
    steps = s + 1;
    if (check) {
      int changed = 0;
      TRACER_CUDA_CHECK(cudaMemcpyAsync(&changed, flag.Get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
      TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (!changed) break;
    }
  }
  if (cur != c) TRACER_CUDA_CHECK(cudaMemcpyAsync(c, cur, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
  return steps;
}

}  // namespace

void LaunchMinPlusBandStep(const TileBand& band, const float* dD, const float* dC, float* dOut, int K,
                           cudaStream_t stream, int* dChanged) {
  const size_t n = static_cast<size_t>(band.NumTiles()) * K;
  if (n == 0) return;
  MinPlusBandKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(band, dD, dC, dOut, K, dChanged);
  TRACER_CHECK_LAUNCH("minplus_band");
}

void LaunchDenseFromBand(const TileBand& band, const float* dBand, float* dDense, cudaStream_t stream) {
  const size_t n = static_cast<size_t>(band.NumTiles()) * band.NumTiles();
  if (n == 0) return;
  DenseFromBandKernel<<<GridFor(n, kMinPlusBlock), kMinPlusBlock, 0, stream>>>(band, dBand, dDense);
  TRACER_CHECK_LAUNCH("minplus_dense_from_band");
}

int MinPlusIterateBand(const TileBand& band, const float* dD, float* dC, int K, int maxSteps, MinPlusStop stop,
                       cudaStream_t stream) {
  const size_t n = static_cast<size_t>(band.NumTiles()) * K;
  if (n == 0 || maxSteps <= 0) return 0;
  DeviceBuffer<float> scratch(n, "min-plus scratch");
  const int steps = Iterate(dC, scratch.Get(), n, maxSteps, stop, stream, [&](const float* in, float* out, int* flag) {
    LaunchMinPlusBandStep(band, dD, in, out, K, stream, flag);
  });
  TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return steps;
}

int MinPlusIterate(MinPlusKernel which, const float* dD, float* dC, int T, int K, int maxSteps, MinPlusStop stop,
                   cudaStream_t stream) {
  if (which == MinPlusKernel::kBand)
    throw std::invalid_argument("MinPlusIterate: the banded step is MinPlusIterateBand");
  CheckSizes(T, K);
  const size_t n = static_cast<size_t>(T) * K;
  if (n == 0 || maxSteps <= 0) return 0;
  if (which == MinPlusKernel::kDpx) {
    DeviceBuffer<int32_t> fd(static_cast<size_t>(T) * T, "min-plus fixed D"), fc(n, "min-plus fixed C"),
        scratch(n, "min-plus fixed scratch");
    LaunchFixFromFloat(dD, fd.Get(), fd.Size(), stream);
    LaunchFixFromFloat(dC, fc.Get(), n, stream);
    const int steps =
        Iterate(fc.Get(), scratch.Get(), n, maxSteps, stop, stream, [&](const int32_t* in, int32_t* out, int* flag) {
          LaunchMinPlusStepFixed(fd.Get(), in, out, T, K, stream, flag);
        });
    LaunchFloatFromFix(fc.Get(), dC, n, stream);
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the temporaries are freed
    return steps;
  }
  DeviceBuffer<float> scratch(n, "min-plus scratch");
  const int steps = Iterate(dC, scratch.Get(), n, maxSteps, stop, stream, [&](const float* in, float* out, int* flag) {
    LaunchMinPlusStep(which, dD, in, out, T, K, stream, flag);
  });
  TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return steps;
}

// ---- timing -----------------------------------------------------------------------------------------------

namespace {}  // namespace

double TimeMinPlusBandMs(const TileBand& band, int K, int repeats) {
  const size_t nD = static_cast<size_t>(band.NumTiles()) * band.Size(), nC = static_cast<size_t>(band.NumTiles()) * K;
  if (nC == 0) return 0.0;
  std::vector<float> hD(nD), hC(nC);
  MinPlusRandomBandInputs(band, K, 12345u, 0.3f, hD.data(), hC.data());
  DeviceBuffer<float> d(nD, "min-plus band D"), c(nC, "min-plus C"), o(nC, "min-plus out");
  d.Upload(hD.data(), nD);
  c.Upload(hC.data(), nC);
  return MedianLaunchMs(0, 2, std::max(repeats, 1),
                        [&]() { LaunchMinPlusBandStep(band, d.Get(), c.Get(), o.Get(), K, 0); });
}

double TimeMinPlusMs(MinPlusKernel which, int T, int K, int repeats) {
  if (which == MinPlusKernel::kBand) throw std::invalid_argument("TimeMinPlusMs: the banded step is TimeMinPlusBandMs");
  CheckSizes(T, K);
  if (T == 0 || K == 0) return 0.0;
  repeats = std::max(repeats, 1);
  const size_t nD = static_cast<size_t>(T) * T, nC = static_cast<size_t>(T) * K;
  std::vector<float> hD(nD), hC(nC);
  MinPlusRandomInputs(T, K, 12345u, 8.0f, 0.3f, hD.data(), hC.data());
  DeviceBuffer<float> d(nD, "min-plus D"), c(nC, "min-plus C"), o(nC, "min-plus out");
  d.Upload(hD.data(), nD);
  c.Upload(hC.data(), nC);
  DeviceBuffer<int32_t> fd, fc, fo;
  const bool dpx = which == MinPlusKernel::kDpx;
  if (dpx) {
    fd.Allocate(nD, "min-plus fixed D");
    fc.Allocate(nC, "min-plus fixed C");
    fo.Allocate(nC, "min-plus fixed out");
    LaunchFixFromFloat(d.Get(), fd.Get(), nD, 0);
    LaunchFixFromFloat(c.Get(), fc.Get(), nC, 0);
  }
  auto once = [&]() {
    if (dpx)
      LaunchMinPlusStepFixed(fd.Get(), fc.Get(), fo.Get(), T, K, 0);
    else
      LaunchMinPlusStep(which, d.Get(), c.Get(), o.Get(), T, K, 0);
  };
  return MedianLaunchMs(0, 2, repeats, once);
}

std::vector<MinPlusTimingRow> PrintMinPlusTable(int T, int K, int repeats, std::FILE* out) {
  int dev = 0, sms = 0, clockKHz = 0;
  TRACER_CUDA_CHECK(cudaGetDevice(&dev));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TRACER_CUDA_CHECK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop{};
  TRACER_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  const double peak = static_cast<double>(sms) * 128.0 * clockKHz * 1e3;  // FP32 lane-instructions per second
  const double ops = 2.0 * T * static_cast<double>(T) * K;                // one add and one min per term

  std::vector<MinPlusTimingRow> rows;
  const MinPlusKernel kinds[] = {MinPlusKernel::kNaive, MinPlusKernel::kCoalesced, MinPlusKernel::kTiled,
                                 MinPlusKernel::kDpx};
  for (MinPlusKernel k : kinds) {
    const int reps = k == MinPlusKernel::kNaive ? std::min(repeats, 5) : repeats;
    const double ms = TimeMinPlusMs(k, T, K, reps);
    MinPlusTimingRow r{MinPlusKernelName(k), ms, 0.0, ops / (ms * 1e-3) * 1e-9, 0.0};
    r.percentOfFp32Peak = 100.0 * ops / (ms * 1e-3) / peak;
    rows.push_back(r);
  }
  for (auto& r : rows) r.speedupOverNaive = rows[0].ms / r.ms;

  std::fprintf(out,
               "min-plus step, T = %d tiles, K = %d clusters, %s (%d SMs at %.0f MHz: FP32 peak %.1f Tlane-op/s)\n", T,
               K, prop.name, sms, clockKHz * 1e-3, peak * 1e-12);
  std::fprintf(out, "  %-10s %10s %10s %14s %12s\n", "kernel", "ms", "speedup", "Gop-equiv/s", "% FP32 peak");
  for (const auto& r : rows)
    std::fprintf(out, "  %-10s %10.3f %9.1fx %14.0f %11.1f%%\n", r.name, r.ms, r.speedupOverNaive, r.gopsEquivalent,
                 r.percentOfFp32Peak);
  std::fprintf(out,
               "  (ops = 2*T*T*K: one add and one min per term; dpx does both in one VIADDMNMX, so it can pass 100%%;\n"
               "   dpx times the fixed-point step alone, conversions excluded)\n");
  std::fflush(out);
  return rows;
}

}  // namespace tracer
