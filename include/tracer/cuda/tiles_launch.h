// @file tiles_launch.h: host launchers of the tile-guide kernels (kernels/tiles_launch.cu).
#pragma once
#include <cuda_runtime.h>

#include "tracer/core/minplus.h"
#include "tracer/core/scene_view.h"

namespace tracer {

struct TileGrid {
  int width, height, tileSize, tilesX, tilesY;
  TRACER_HD int NumTiles() const { return tilesX * tilesY; }
};

void LaunchGBuffer(const SceneView& s, const TileGrid& g, Float4* pos, Float4* nd, cudaStream_t st);
void LaunchTileInfo(const Float4* pos, const Float4* nd, const TileGrid& g, Float4* info, cudaStream_t st);
// The banded dissimilarities (core/minplus.h): D[t][j] for the tile in slot j of row t, +inf off the screen.
void LaunchDissimilarity(const Float4* info, const TileBand& band, float* D, cudaStream_t st);
void LaunchTileStats(const SceneView& s, const Float4* pos, const Float4* nd, const TileGrid& g, int refresh,
                     int rounds, uint32_t seed, bool naiveReduction, float* sum, float* count, cudaStream_t st);
// The statistics of the tiles t with t % parts == part only, written to values [round][tile][2] (sum, count)
// when values is set (a TileStatsShare), else added to sum and count as LaunchTileStats does.
void LaunchTileStatsShared(const SceneView& s, const Float4* pos, const Float4* nd, const TileGrid& g, int refresh,
                           int rounds, uint32_t seed, bool naiveReduction, int part, int parts, float* values,
                           float* sum, float* count, cudaStream_t st);
// Adds values [round][tile][2] to sum and count, round by round (deterministic).
void LaunchApplyTileStats(const float* values, const TileGrid& g, int refresh, int rounds, int K, int envCluster,
                          int deltaCluster, float* sum, float* count, cudaStream_t st);
void LaunchTileCost(const float* sum, const float* count, float* cost, size_t n, cudaStream_t st);
void LaunchTileCdf(const float* cost, const float* powerPmf, int T, int K, float alpha, float* cdf, cudaStream_t st);

}  // namespace tracer
