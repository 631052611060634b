// @file device_tile_guide.cu: the device tile guide: G-buffer, tile means and dissimilarities once, then
// per refresh the statistics, costs, min-plus propagation and cdfs.
#include <cstdio>
#include <vector>

#include "tracer/cuda/device_tile_guide.h"
#include "tracer/cuda/minplus_launch.h"
#include "tracer/host/tile_guide.h"

namespace tracer {

DeviceTileGuide::DeviceTileGuide(const DeviceScene& scene, const SceneData& data, const RenderOptions& opt,
                                 cudaStream_t stream)
    : opt_(opt), stream_(stream) {
  grid_ = TileGrid{opt.width, opt.height, opt.tileSize, (opt.width + opt.tileSize - 1) / opt.tileSize,
                   (opt.height + opt.tileSize - 1) / opt.tileSize};
  const GuideClusters clusters = MakeGuideClusters(data, opt);
  k_ = clusters.Count();
  power_.Upload(clusters.powerPmf, "tile guide clusters");
  // On the default stream: the guide's kernels (on `stream`, non-blocking) must not start before it has landed.
  TRACER_CUDA_CHECK(cudaStreamSynchronize(0));
  const size_t pixels = static_cast<size_t>(opt.width) * opt.height, T = grid_.NumTiles();
  pos_.Allocate(pixels, "tile G-buffer");
  nd_.Allocate(pixels, "tile G-buffer");
  info_.Allocate(T, "tile info");
  band_ = TileBand{grid_.tilesX, grid_.tilesY, kTileRadius};
  d_.Allocate(T * band_.Size(), "tile dissimilarities");
  sum_.Allocate(T * k_, "tile statistics");
  count_.Allocate(T * k_, "tile statistics");
  cost_.Allocate(T * k_, "tile costs");
  cdf_.Allocate(T * k_, "tile cdfs");
  sum_.Zero(stream);
  count_.Zero(stream);
  view_ = scene.view;
  view_.tiles.cdf = cdf_.Get();
  view_.tiles.numClusters = k_;
  view_.tiles.envCluster = clusters.envCluster;
  view_.tiles.deltaCluster = clusters.deltaCluster;
  view_.tiles.clusterPowerPmf = power_.Get();
  view_.tiles.tileSize = opt.tileSize;
  view_.tiles.tilesX = grid_.tilesX;
  view_.tiles.numTiles = static_cast<int32_t>(T);
  LaunchGBuffer(view_, grid_, pos_.Get(), nd_.Get(), stream);
  LaunchTileInfo(pos_.Get(), nd_.Get(), grid_, info_.Get(), stream);
  LaunchDissimilarity(info_.Get(), band_, d_.Get(), stream);
  if (opt.minPlus != MinPlusKernel::kBand) {
    // A dense kernel, asked for by name (the profile's teaching pairs): the T x T matrix the band stands for.
    char what[160];
    std::snprintf(what, sizeof what,
                  "dense tile dissimilarity matrix for --minplus %s (%zu x %zu floats; --minplus band needs none)",
                  MinPlusKernelName(opt.minPlus), T, T);
    dense_.Allocate(T * T, what);
    LaunchDenseFromBand(band_, d_.Get(), dense_.Get(), stream);
  }
}

void DeviceTileGuide::Refresh(int refresh, const TileStatsShare& share) {
  const int T = grid_.NumTiles(), rounds = TileRoundsForRefresh(refresh, k_);
  if (share.parts == 1 && !share.combine) {
    LaunchTileStats(view_, pos_.Get(), nd_.Get(), grid_, refresh, rounds, opt_.seed, opt_.naiveReduction, sum_.Get(),
                    count_.Get(), stream_);
  } else {
    // This process's tiles, combined on the host with the other processes' values, then added in round order.
    std::vector<float> values(static_cast<size_t>(rounds) * T * 2);
    if (values_.Size() < values.size()) values_.Allocate(values.size(), "tile statistics exchange");
    values_.Zero(stream_);
    LaunchTileStatsShared(view_, pos_.Get(), nd_.Get(), grid_, refresh, rounds, opt_.seed, opt_.naiveReduction,
                          share.part, share.parts, values_.Get(), sum_.Get(), count_.Get(), stream_);
    TRACER_CUDA_CHECK(
        cudaMemcpyAsync(values.data(), values_.Get(), values.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (share.combine) share.combine(values);
    values_.Upload(values.data(), values.size(), stream_);
    LaunchApplyTileStats(values_.Get(), grid_, refresh, rounds, k_, view_.tiles.envCluster, view_.tiles.deltaCluster,
                         sum_.Get(), count_.Get(), stream_);
    // values (pageable) must outlive the asynchronous upload.
    TRACER_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  LaunchTileCost(sum_.Get(), count_.Get(), cost_.Get(), static_cast<size_t>(T) * k_, stream_);
  if (opt_.minPlus == MinPlusKernel::kBand)
    MinPlusIterateBand(band_, d_.Get(), cost_.Get(), k_, kMinPlusSteps, MinPlusStop::kFixedSteps, stream_);
  else
    MinPlusIterate(opt_.minPlus, dense_.Get(), cost_.Get(), T, k_, kMinPlusSteps, MinPlusStop::kFixedSteps, stream_);
  LaunchTileCdf(cost_.Get(), view_.tiles.clusterPowerPmf, T, k_, opt_.tileGuideMix, cdf_.Get(), stream_);
}

}  // namespace tracer
