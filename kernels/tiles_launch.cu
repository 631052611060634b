// @file tiles_launch.cu: the GPU side of tile-guided light selection: primary-hit G-buffer, per-tile means,
// dissimilarities, statistics (one block per tile, block reduction, one atomic per block), costs and cdfs.
#include "tracer/core/light_tiles.h"
#include "tracer/cuda/block_reduce.cuh"
#include "tracer/cuda/kernel_common.cuh"
#include "tracer/cuda/tiles_launch.h"

namespace tracer {

constexpr unsigned kTileBlock = 256;

__global__ void GBufferKernel(SceneView s, int w, int h, Float4* pos, Float4* nd) {
  const int i = ThreadIndex();
  if (i >= w * h) return;
  Float4 a, b;
  GBufferItem<true>(s, i % w, i / w, a, b);
  pos[i] = a;
  nd[i] = b;
}

// One block per tile: mean normal (renormalised) and mean depth of the tile's primary hits.
__global__ void __launch_bounds__(kTileBlock)
    TileInfoKernel(const Float4* pos, const Float4* nd, TileGrid g, Float4* info) {
  __shared__ float smem[kTileBlock];
  const int t = blockIdx.x, tx = t % g.tilesX, ty = t / g.tilesX;
  float n[4] = {0, 0, 0, 0}, count = 0;
  for (int p = threadIdx.x; p < g.tileSize * g.tileSize; p += blockDim.x) {
    const int x = tx * g.tileSize + p % g.tileSize, y = ty * g.tileSize + p / g.tileSize;
    if (x >= g.width || y >= g.height) continue;
    const size_t i = static_cast<size_t>(y) * g.width + x;
    if (pos[i].w == 0.0f) continue;
    n[0] += nd[i].x, n[1] += nd[i].y, n[2] += nd[i].z, n[3] += nd[i].w, count += 1.0f;
  }
  float r[5];
  for (int k = 0; k < 4; ++k) r[k] = BlockSumInterleaved(n[k], smem);
  r[4] = BlockSumInterleaved(count, smem);
  if (threadIdx.x == 0) {
    float len = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    float inv = len > 0.0f ? 1.0f / len : 0.0f;
    info[t] = r[4] > 0.0f ? Float4{r[0] * inv, r[1] * inv, r[2] * inv, r[3] / r[4]} : Float4{0, 0, 0, 0};
  }
}

// One thread per band entry: a one-dimensional grid, since a grid's y and z are at most 65535 (an 8K image at
// 16-pixel tiles has 129,600 tiles; the dense kernel this replaces put them on y and failed to launch).
__global__ void DissimilarityKernel(const Float4* info, TileBand band, float* D) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(band.NumTiles()) * band.Size()) return;
  const int t = static_cast<int>(i / band.Size()), k = band.Neighbour(t, static_cast<int>(i % band.Size()));
  D[i] = k < 0 ? kInf : TileDissimilarity(t, k, band.tilesX, info[t], info[k]);
}

// Statistics: block (t, round) tests cluster TileRoundCluster(t, round) from every primary hit of tile t,
// sums the unoccluded contributions and the sample count over the block (interleaved + shuffle, or the naive
// neighbored reduction), and thread 0 adds both with one atomic each. Shared with other processes
// (TileStatsShare), only the blocks of this process's tiles run, and thread 0 writes the pair to values
// [round][tile][2] instead, for ApplyTileStatsKernel to add after every process's are combined.
template <bool kNaive>
__global__ void __launch_bounds__(kTileBlock)
    TileStatsKernel(SceneView s, const Float4* pos, const Float4* nd, TileGrid g, int refresh, uint32_t seed,
                    float* sum, float* count, float* values, int part, int parts) {
  __shared__ float smem[kTileBlock];
  const int t = blockIdx.x, round = blockIdx.y, tx = t % g.tilesX, ty = t / g.tilesX;
  if (t % parts != part) return;  // the whole block: another process's tile
  const int K = s.tiles.numClusters;
  const int c = TileRoundCluster(t, round, refresh, K, s.tiles.envCluster, s.tiles.deltaCluster);
  float v = 0.0f, n = 0.0f;
  for (int p = threadIdx.x; p < g.tileSize * g.tileSize; p += blockDim.x) {
    const int x = tx * g.tileSize + p % g.tileSize, y = ty * g.tileSize + p / g.tileSize;
    if (x >= g.width || y >= g.height) continue;
    const size_t i = static_cast<size_t>(y) * g.width + x;
    const Float4 a = pos[i];
    if (a.w == 0.0f) continue;
    const Float4 b = nd[i];
    PathRng rng{seed, static_cast<uint32_t>(i), TileStatSampleIndex(refresh, round)};
    v += TileStatSample<true>(s, Vec3(a.x, a.y, a.z), Vec3(b.x, b.y, b.z), c, rng.Get(0), rng.Get(1), rng.Get(2));
    n += 1.0f;
  }
  const float vs = kNaive ? BlockSumNeighbored(v, smem) : BlockSumInterleaved(v, smem);
  const float ns = kNaive ? BlockSumNeighbored(n, smem) : BlockSumInterleaved(n, smem);
  if (threadIdx.x != 0) return;
  if (values) {
    float* out = values + (static_cast<size_t>(round) * g.NumTiles() + t) * 2;
    out[0] = vs;
    out[1] = ns;
  } else if (ns > 0.0f) {
    atomicAdd(&sum[static_cast<size_t>(t) * K + c], vs);
    atomicAdd(&count[static_cast<size_t>(t) * K + c], ns);
  }
}

// Adds combined statistics ([round][tile][2]), one thread per tile, round after round: the order TileGuideHost
// adds them in, so every process gets the same sums whatever the number of processes.
__global__ void ApplyTileStatsKernel(const float* values, int T, int rounds, int refresh, int K, int envCluster,
                                     int deltaCluster, float* sum, float* count) {
  const int t = ThreadIndex();
  if (t >= T) return;
  for (int round = 0; round < rounds; ++round) {
    const float* v = values + (static_cast<size_t>(round) * T + t) * 2;
    const size_t tc = static_cast<size_t>(t) * K + TileRoundCluster(t, round, refresh, K, envCluster, deltaCluster);
    sum[tc] += v[0];
    count[tc] += v[1];
  }
}

__global__ void CostKernel(const float* sum, const float* count, float* cost, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) cost[i] = TileCost(sum[i], count[i]);
}

__global__ void CdfKernel(const float* cost, const float* powerPmf, int T, int K, float alpha, float* cdf) {
  const int t = ThreadIndex();
  if (t >= T) return;
  TileCdfRow(cost + static_cast<size_t>(t) * K, powerPmf, K, alpha, cdf + static_cast<size_t>(t) * K);
}

void LaunchGBuffer(const SceneView& s, const TileGrid& g, Float4* pos, Float4* nd, cudaStream_t st) {
  GBufferKernel<<<GridFor(static_cast<size_t>(g.width) * g.height, kBlock), kBlock, 0, st>>>(s, g.width, g.height, pos,
                                                                                             nd);
  TRACER_CHECK_LAUNCH("gbuffer");
}
void LaunchTileInfo(const Float4* pos, const Float4* nd, const TileGrid& g, Float4* info, cudaStream_t st) {
  TileInfoKernel<<<g.NumTiles(), kTileBlock, 0, st>>>(pos, nd, g, info);
  TRACER_CHECK_LAUNCH("tile_info");
}
void LaunchDissimilarity(const Float4* info, const TileBand& band, float* D, cudaStream_t st) {
  DissimilarityKernel<<<GridFor(static_cast<size_t>(band.NumTiles()) * band.Size(), kBlock), kBlock, 0, st>>>(info,
                                                                                                              band, D);
  TRACER_CHECK_LAUNCH("dissimilarity");
}
void LaunchTileStats(const SceneView& s, const Float4* pos, const Float4* nd, const TileGrid& g, int refresh,
                     int rounds, uint32_t seed, bool naiveReduction, float* sum, float* count, cudaStream_t st) {
  LaunchTileStatsShared(s, pos, nd, g, refresh, rounds, seed, naiveReduction, 0, 1, nullptr, sum, count, st);
}
void LaunchTileStatsShared(const SceneView& s, const Float4* pos, const Float4* nd, const TileGrid& g, int refresh,
                           int rounds, uint32_t seed, bool naiveReduction, int part, int parts, float* values,
                           float* sum, float* count, cudaStream_t st) {
  dim3 grid(g.NumTiles(), rounds);
  if (naiveReduction)
    TileStatsKernel<true><<<grid, kTileBlock, 0, st>>>(s, pos, nd, g, refresh, seed, sum, count, values, part, parts);
  else
    TileStatsKernel<false><<<grid, kTileBlock, 0, st>>>(s, pos, nd, g, refresh, seed, sum, count, values, part, parts);
  TRACER_CHECK_LAUNCH("tile_stats");
}
void LaunchApplyTileStats(const float* values, const TileGrid& g, int refresh, int rounds, int K, int envCluster,
                          int deltaCluster, float* sum, float* count, cudaStream_t st) {
  ApplyTileStatsKernel<<<GridFor(g.NumTiles(), kBlock), kBlock, 0, st>>>(values, g.NumTiles(), rounds, refresh, K,
                                                                         envCluster, deltaCluster, sum, count);
  TRACER_CHECK_LAUNCH("tile_stats_apply");
}
void LaunchTileCost(const float* sum, const float* count, float* cost, size_t n, cudaStream_t st) {
  CostKernel<<<GridFor(n, kBlock), kBlock, 0, st>>>(sum, count, cost, n);
  TRACER_CHECK_LAUNCH("tile_cost");
}
void LaunchTileCdf(const float* cost, const float* powerPmf, int T, int K, float alpha, float* cdf, cudaStream_t st) {
  CdfKernel<<<GridFor(T, kBlock), kBlock, 0, st>>>(cost, powerPmf, T, K, alpha, cdf);
  TRACER_CHECK_LAUNCH("tile_cdf");
}

}  // namespace tracer
