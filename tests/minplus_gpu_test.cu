// @file minplus_gpu_test.cu: the min-plus kernels bit-exact against the host references, the block sums and
// keyed statistics against host sums, and the timing tables (label "gpu"; skips without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test_util.h"
#include "tracer/core/minplus.h"
#include "tracer/cuda/block_reduce.cuh"
#include "tracer/cuda/cuda_check.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/minplus_launch.h"
#include "tracer/cuda/tile_stats_launch.h"

using namespace tracer;

namespace {

const float inf = kInf;
const MinPlusKernel kFloatKernels[] = {MinPlusKernel::kNaive, MinPlusKernel::kCoalesced, MinPlusKernel::kTiled};

// Unstructured random inputs: half of D at +inf, 30% of C at +inf, negative costs allowed, no exact zeros in C.
void RandomInputs(int T, int K, uint32_t seed, std::vector<float>& D, std::vector<float>& C) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  D.assign(static_cast<size_t>(T) * T, inf);
  C.assign(static_cast<size_t>(T) * K, inf);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < T; ++k)
      D[static_cast<size_t>(t) * T + k] = t == k ? 0.0f : (u(rng) < 0.5f ? inf : 0.1f + 9.9f * u(rng));
  for (float& c : C) {
    if (u(rng) < 0.3f) continue;
    do c = -5.0f + 25.0f * u(rng);
    while (c == 0.0f);
  }
}

// Index of the first entry whose bits differ, or -1.
template <typename V>
long long FirstBitDifference(const std::vector<V>& a, const std::vector<V>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(V)) != 0) return static_cast<long long>(i);
  return -1;
}

// Device copy of a host vector at an element offset from a 16-byte-aligned allocation (offset 1 forces the
// tiled kernel's scalar path even when T and K are multiples of 4).
template <typename V>
struct DeviceArray {
  DeviceBuffer<V> buffer;
  int offset = 0;
  DeviceArray(const std::vector<V>& host, int off, size_t size = 0)
      : buffer(std::max(host.size(), size) + 4, "test array"), offset(off) {
    // Poison: all bits set (NaN for floats), so an output never written fails the comparison
    TRACER_CUDA_CHECK(cudaMemset(buffer.Get(), 0xFF, buffer.Bytes()));
    if (!host.empty())
      TRACER_CUDA_CHECK(cudaMemcpy(Get(), host.data(), host.size() * sizeof(V), cudaMemcpyHostToDevice));
  }
  V* Get() const { return buffer.Get() + offset; }
  std::vector<V> Read(size_t n) const {
    std::vector<V> h(n);
    if (n) TRACER_CUDA_CHECK(cudaMemcpy(h.data(), Get(), n * sizeof(V), cudaMemcpyDeviceToHost));
    return h;
  }
};

// One step of every float kernel against MinPlusStepHost, bit for bit, and the changed flag against the host's.
void ExpectStepMatches(int T, int K, const std::vector<float>& D, const std::vector<float>& C, int offset) {
  const size_t n = static_cast<size_t>(T) * K;
  std::vector<float> ref(n);
  const bool refChanged = MinPlusStepHost(D.data(), C.data(), ref.data(), T, K);
  DeviceArray<float> dD(D, offset), dC(C, offset);
  DeviceBuffer<int> flag(1, "flag");
  for (MinPlusKernel k : kFloatKernels) {
    DeviceArray<float> dOut({}, offset, n);  // poisoned
    flag.Zero();
    LaunchMinPlusStep(k, dD.Get(), dC.Get(), dOut.Get(), T, K, 0, flag.Get());
    TRACER_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got = dOut.Read(n);
    const long long bad = FirstBitDifference(got, ref);
    EXPECT_EQ(bad, -1) << MinPlusKernelName(k) << " T " << T << " K " << K << " offset " << offset
                       << ": first difference at " << bad << " (t " << (bad >= 0 ? bad / K : 0) << ", c "
                       << (bad >= 0 ? bad % K : 0) << "): got " << (bad >= 0 ? got[bad] : 0.0f) << ", host "
                       << (bad >= 0 ? ref[bad] : 0.0f);
    int changed = -1;
    TRACER_CUDA_CHECK(cudaMemcpy(&changed, flag.Get(), sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT_EQ(changed != 0, refChanged) << MinPlusKernelName(k) << " T " << T << " K " << K << ": changed flag";
  }
}

std::vector<int32_t> Fix(const std::vector<float>& v) {
  std::vector<int32_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = FixFromFloat(v[i]);
  return r;
}

}  // namespace

TEST(MinPlusGpu, OneStepMatchesHostBitForBit) {
  TRACER_REQUIRE_GPU();
  int cases = 0;
  for (int T : {1, 7, 33, 130, 1000}) {
    for (int K : {1, 3, 29, 256, 257}) {
      std::vector<float> D, C;
      RandomInputs(T, K, 1000u * T + K, D, C);
      ExpectStepMatches(T, K, D, C, 0);
      ++cases;
    }
  }
  std::printf("min-plus: %d size pairs x 3 kernels bit-identical to the host\n", cases);
}

TEST(MinPlusGpu, VectorAndScalarPathsOfTheTiledKernel) {
  TRACER_REQUIRE_GPU();
  // T and K multiples of 4: the 16-byte path at offset 0, the scalar fallback at offset 1 (unaligned)
  for (int offset : {0, 1}) {
    for (auto [T, K] : {std::pair{256, 128}, std::pair{132, 260}, std::pair{8, 4}, std::pair{516, 36}}) {
      std::vector<float> D, C;
      RandomInputs(T, K, 77u + T + K + offset, D, C);
      ExpectStepMatches(T, K, D, C, offset);
    }
  }
  // Realistic metric inputs (sparse D), one size with partial tiles
  std::vector<float> D(static_cast<size_t>(777) * 777), C(static_cast<size_t>(777) * 200);
  MinPlusRandomInputs(777, 200, 5u, 4.0f, 0.3f, D.data(), C.data());
  ExpectStepMatches(777, 200, D, C, 0);
}

TEST(MinPlusGpu, IterationMatchesHost) {
  TRACER_REQUIRE_GPU();
  // A metric graph with a small radius needs many steps to propagate; 90% of C at +inf
  for (auto [T, K] : {std::pair{300, 37}, std::pair{1024, 64}}) {
    std::vector<float> D(static_cast<size_t>(T) * T), C0(static_cast<size_t>(T) * K);
    MinPlusRandomInputs(T, K, 11u + T, 2.0f, 0.9f, D.data(), C0.data());
    std::vector<float> ref = C0;
    const int refSteps = MinPlusIterateHost(D.data(), ref.data(), T, K, 200);
    std::printf("min-plus iteration T %d K %d: host converged after %d steps\n", T, K, refSteps);
    ASSERT_LT(refSteps, 200);
    ASSERT_GT(refSteps, 2);
    DeviceArray<float> dD(D, 0);
    for (MinPlusKernel k : kFloatKernels) {
      // until converged: same step count and same bits
      DeviceArray<float> dC(C0, 0);
      const int steps = MinPlusIterate(k, dD.Get(), dC.Get(), T, K, 200, MinPlusStop::kUntilConverged, 0);
      EXPECT_EQ(steps, refSteps) << MinPlusKernelName(k);
      EXPECT_EQ(FirstBitDifference(dC.Read(C0.size()), ref), -1) << MinPlusKernelName(k) << " T " << T << " K " << K;
      // a fixed number of steps (odd, so the result has to be copied back from the scratch buffer)
      std::vector<float> ref3 = C0;
      MinPlusIterateHost(D.data(), ref3.data(), T, K, 3);
      DeviceArray<float> dC3(C0, 0);
      EXPECT_EQ(MinPlusIterate(k, dD.Get(), dC3.Get(), T, K, 3, MinPlusStop::kFixedSteps, 0), 3);
      EXPECT_EQ(FirstBitDifference(dC3.Read(C0.size()), ref3), -1) << MinPlusKernelName(k) << " 3 fixed steps";
    }
  }
}

// The banded step on the device: bit for bit the host's banded step, and so the dense step on the matrix the
// band stands for (expanded on the device, then stepped by the tiled kernel); iterated, the same steps and bits.
TEST(MinPlusGpu, BandMatchesHostAndDenseBitForBit) {
  TRACER_REQUIRE_GPU();
  for (auto [w, h] : {std::pair<int, int>{1, 1}, {3, 40}, {40, 3}, {64, 36}}) {
    for (int K : {1, 5, 64}) {
      const TileBand b{w, h, 6};
      const int T = b.NumTiles();
      std::vector<float> D(static_cast<size_t>(T) * b.Size()), C(static_cast<size_t>(T) * K);
      MinPlusRandomBandInputs(b, K, 7u * w + h + 1000u * K, 0.3f, D.data(), C.data());
      std::vector<float> ref(C.size());
      const bool refChanged = MinPlusStepBandHost(b, D.data(), C.data(), ref.data(), K);
      DeviceArray<float> dD(D, 0), dC(C, 0), dOut({}, 0, C.size());
      DeviceBuffer<int> flag(1, "flag");
      flag.Zero();
      LaunchMinPlusBandStep(b, dD.Get(), dC.Get(), dOut.Get(), K, 0, flag.Get());
      int changed = -1;
      TRACER_CUDA_CHECK(cudaMemcpy(&changed, flag.Get(), sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(FirstBitDifference(dOut.Read(C.size()), ref), -1) << w << "x" << h << " K " << K;
      EXPECT_EQ(changed != 0, refChanged) << w << "x" << h << " K " << K;
      // The dense matrix, expanded on the device, is the host's; the tiled kernel on it gives the same bits.
      std::vector<float> dense(static_cast<size_t>(T) * T);
      DenseFromBand(b, D.data(), dense.data());
      DeviceArray<float> dDense({}, 0, dense.size()), dTiled({}, 0, C.size());
      LaunchDenseFromBand(b, dD.Get(), dDense.Get(), 0);
      EXPECT_EQ(FirstBitDifference(dDense.Read(dense.size()), dense), -1) << w << "x" << h;
      LaunchMinPlusStep(MinPlusKernel::kTiled, dDense.Get(), dC.Get(), dTiled.Get(), T, K, 0);
      EXPECT_EQ(FirstBitDifference(dTiled.Read(C.size()), ref), -1) << w << "x" << h << " K " << K << " (dense tiled)";
      // Iterated until nothing changes.
      std::vector<float> it = C;
      const int refSteps = MinPlusIterateBandHost(b, D.data(), it.data(), K, 200);
      DeviceArray<float> dIt(C, 0);
      EXPECT_EQ(MinPlusIterateBand(b, dD.Get(), dIt.Get(), K, 200, MinPlusStop::kUntilConverged, 0), refSteps);
      EXPECT_EQ(FirstBitDifference(dIt.Read(C.size()), it), -1) << w << "x" << h << " K " << K << " (iterated)";
    }
  }
}

TEST(MinPlusGpu, DpxMatchesFixedPointHost) {
  TRACER_REQUIRE_GPU();
  int cases = 0;
  for (int T : {1, 7, 33, 130, 1000}) {
    for (int K : {1, 3, 29, 256, 257}) {
      std::vector<float> Df, Cf;
      RandomInputs(T, K, 31u * T + K, Df, Cf);
      const std::vector<int32_t> D = Fix(Df), C = Fix(Cf);
      std::vector<int32_t> ref(C.size());
      const bool refChanged = MinPlusStepFixedHost(D.data(), C.data(), ref.data(), T, K);
      // the device conversion equals the host one
      DeviceArray<float> dDf(Df, 0), dCf(Cf, 0);
      DeviceArray<int32_t> dD({}, 0, D.size()), dC({}, 0, C.size());
      LaunchFixFromFloat(dDf.Get(), dD.Get(), D.size(), 0);
      LaunchFixFromFloat(dCf.Get(), dC.Get(), C.size(), 0);
      EXPECT_EQ(FirstBitDifference(dD.Read(D.size()), D), -1) << "FixFromFloat of D, T " << T;
      EXPECT_EQ(FirstBitDifference(dC.Read(C.size()), C), -1) << "FixFromFloat of C, T " << T << " K " << K;
      DeviceArray<int32_t> dOut({}, 0, C.size());
      DeviceBuffer<int> flag(1, "flag");
      flag.Zero();
      LaunchMinPlusStepFixed(dD.Get(), dC.Get(), dOut.Get(), T, K, 0, flag.Get());
      const std::vector<int32_t> got = dOut.Read(C.size());
      const long long bad = FirstBitDifference(got, ref);
      EXPECT_EQ(bad, -1) << "dpx T " << T << " K " << K << " first difference at " << bad << ": got "
                         << (bad >= 0 ? got[bad] : 0) << ", host " << (bad >= 0 ? ref[bad] : 0);
      int changed = -1;
      TRACER_CUDA_CHECK(cudaMemcpy(&changed, flag.Get(), sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(changed != 0, refChanged) << "dpx changed flag, T " << T << " K " << K;
      // the float entry point decodes the same result
      DeviceArray<float> dOutF({}, 0, C.size());
      LaunchMinPlusStep(MinPlusKernel::kDpx, dDf.Get(), dCf.Get(), dOutF.Get(), T, K, 0);
      std::vector<float> refF(ref.size());
      for (size_t i = 0; i < ref.size(); ++i) refF[i] = FloatFromFix(ref[i]);
      EXPECT_EQ(FirstBitDifference(dOutF.Read(C.size()), refF), -1) << "dpx float entry, T " << T << " K " << K;
      ++cases;
    }
  }
  // Iteration in fixed point until nothing changes
  const int T = 300, K = 37;
  std::vector<float> Df(static_cast<size_t>(T) * T), Cf(static_cast<size_t>(T) * K);
  MinPlusRandomInputs(T, K, 99u, 2.0f, 0.9f, Df.data(), Cf.data());
  std::vector<int32_t> D = Fix(Df), C = Fix(Cf), next(C.size());
  int refSteps = 0;
  for (bool changed = true; changed && refSteps < 200; ++refSteps) {
    changed = MinPlusStepFixedHost(D.data(), C.data(), next.data(), T, K);
    C.swap(next);
  }
  std::vector<float> ref(C.size());
  for (size_t i = 0; i < C.size(); ++i) ref[i] = FloatFromFix(C[i]);
  DeviceArray<float> dD(Df, 0), dC(Cf, 0);
  EXPECT_EQ(MinPlusIterate(MinPlusKernel::kDpx, dD.Get(), dC.Get(), T, K, 200, MinPlusStop::kUntilConverged, 0),
            refSteps);
  EXPECT_EQ(FirstBitDifference(dC.Read(Cf.size()), ref), -1) << "dpx iteration";
  std::printf("dpx: %d size pairs exact against the fixed-point host; iteration converged in %d steps\n", cases,
              refSteps);
}

// ---- reductions -------------------------------------------------------------------------------------------

namespace {

template <bool kNaive>
__global__ void BlockSumTestKernel(const float* in, float* out) {
  extern __shared__ float smem[];
  const float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  // twice in a row on the same smem: the second call must not race with the first one's tail
  const float a = kNaive ? BlockSumNeighbored(v, smem) : BlockSumInterleaved(v, smem);
  const float b = kNaive ? BlockSumNeighbored(2.0f * v, smem) : BlockSumInterleaved(2.0f * v, smem);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = a;
    out[2 * blockIdx.x + 1] = b;
  }
}

}  // namespace

TEST(BlockReduceGpu, BlockSumsMatchHost) {
  TRACER_REQUIRE_GPU();
  std::mt19937 rng(3);
  for (unsigned block : {1u, 2u, 16u, 32u, 64u, 128u, 256u, 512u, 1024u}) {
    const unsigned blocks = 37;
    std::vector<float> in(static_cast<size_t>(block) * blocks);
    for (float& v : in) v = static_cast<float>(static_cast<int>(rng() % 201) - 100);  // integers: exact sums
    std::vector<float> ref(2 * blocks, 0.0f);
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned i = 0; i < block; ++i) {
        ref[2 * b] += in[b * block + i];
        ref[2 * b + 1] += 2.0f * in[b * block + i];
      }
    DeviceBuffer<float> dIn(in.size(), "in"), dOut(ref.size(), "out");
    dIn.Upload(in.data(), in.size());
    for (bool naive : {false, true}) {
      TRACER_CUDA_CHECK(cudaMemset(dOut.Get(), 0xFF, dOut.Bytes()));
      if (naive)
        BlockSumTestKernel<true><<<blocks, block, block * sizeof(float)>>>(dIn.Get(), dOut.Get());
      else
        BlockSumTestKernel<false><<<blocks, block, block * sizeof(float)>>>(dIn.Get(), dOut.Get());
      TRACER_CUDA_CHECK(cudaGetLastError());
      std::vector<float> got(ref.size());
      TRACER_CUDA_CHECK(cudaMemcpy(got.data(), dOut.Get(), dOut.Bytes(), cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_EQ(got[i], ref[i]) << (naive ? "neighbored" : "interleaved") << " block " << block << " result " << i;
    }
  }
}

TEST(BlockReduceGpu, TileStatisticsMatchHost) {
  TRACER_REQUIRE_GPU();
  std::mt19937 rng(5);
  const int numKeys = 64 * 37;  // 64 tiles x 37 clusters
  for (int n : {1, 255, 256, 257, 100000}) {
    for (int pattern = 0; pattern < 3; ++pattern) {  // sorted runs, random keys, all "none"
      std::vector<int> keys(static_cast<size_t>(n));
      std::vector<float> values(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        if (pattern == 0)
          keys[i] = rng() % 8 == 0 ? -1 : (i / 40) % numKeys;
        else if (pattern == 1)
          keys[i] = static_cast<int>(rng() % (numKeys + 1)) - 1;
        else
          keys[i] = -1;
        values[i] = static_cast<float>(rng() % 16);  // integer values: exact sums in any order
      }
      std::vector<float> ref(numKeys, 0.0f);
      for (int i = 0; i < n; ++i)
        if (keys[i] >= 0) ref[keys[i]] += values[i];
      DeviceBuffer<int> dKeys(keys.size(), "keys");
      DeviceBuffer<float> dValues(values.size(), "values"), dE(numKeys, "E");
      dKeys.Upload(keys.data(), keys.size());
      dValues.Upload(values.data(), values.size());
      for (bool naive : {false, true}) {
        dE.Zero();
        LaunchKeyedTileStats(naive, dKeys.Get(), dValues.Get(), n, dE.Get(), 0);
        std::vector<float> got(numKeys);
        TRACER_CUDA_CHECK(cudaMemcpy(got.data(), dE.Get(), dE.Bytes(), cudaMemcpyDeviceToHost));
        for (int k = 0; k < numKeys; ++k)
          ASSERT_EQ(got[k], ref[k]) << (naive ? "neighbored" : "interleaved") << " n " << n << " pattern " << pattern
                                    << " key " << k;
      }
    }
  }
}

// ---- timing (printed, never asserted) ---------------------------------------------------------------------

TEST(MinPlusGpu, TimingTable) {
  TRACER_REQUIRE_GPU();
  const int T = 8192, K = 256;
  // Correctness at the timed size first: the realistic D is sparse, so the host reference is quick
  std::vector<float> D(static_cast<size_t>(T) * T), C(static_cast<size_t>(T) * K), ref(C.size());
  MinPlusRandomInputs(T, K, 12345u, 8.0f, 0.3f, D.data(), C.data());
  MinPlusStepHost(D.data(), C.data(), ref.data(), T, K);
  {
    DeviceArray<float> dD(D, 0), dC(C, 0);
    for (MinPlusKernel k : kFloatKernels) {
      DeviceArray<float> dOut({}, 0, C.size());
      LaunchMinPlusStep(k, dD.Get(), dC.Get(), dOut.Get(), T, K, 0);
      EXPECT_EQ(FirstBitDifference(dOut.Read(C.size()), ref), -1)
          << MinPlusKernelName(k) << " at T " << T << " K " << K;
    }
  }
  const std::vector<MinPlusTimingRow> rows = PrintMinPlusTable(T, K, 20);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) EXPECT_GT(r.ms, 0.0) << r.name;
  PrintTileStatsTable(1 << 22, T * K, 20);
}
