// @file device_tile_guide.h: tile-guided light selection on the device: the same steps as TileGuideHost
// (host/tile_guide.h). The dissimilarities are banded (core/minplus.h): numTiles x 169 floats, 5.5 MB for the
// 8160 tiles of a 1920x1080 image at 16-pixel tiles, 88 MB at 7680x4320; a dense --minplus kernel also holds
// the numTiles^2 matrix (266 MB at 1920x1080).
#pragma once
#include "tracer/cuda/device_buffer.h"
#include "tracer/cuda/device_scene.h"
#include "tracer/cuda/tiles_launch.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/render_options.h"

namespace tracer {

class DeviceTileGuide {
 public:
  DeviceTileGuide(const DeviceScene& scene, const SceneData& data, const RenderOptions& opt, cudaStream_t stream);
  // One refresh: statistics rounds (of the tiles `share` gives this process, combined with the others'),
  // costs, min-plus propagation, and the per-tile cdfs.
  void Refresh(int refresh, const TileStatsShare& share);
  // The scene view with the guide's pointers filled in.
  const SceneView& View() const { return view_; }

 private:
  const RenderOptions& opt_;
  cudaStream_t stream_;
  TileGrid grid_;
  int k_;
  DeviceBuffer<Float4> pos_, nd_, info_;
  TileBand band_{};
  DeviceBuffer<float> d_;      // banded dissimilarities, numTiles x band_.Size()
  DeviceBuffer<float> dense_;  // numTiles^2, only for a dense --minplus kernel
  DeviceBuffer<float> sum_, count_, cost_, cdf_;
  DeviceBuffer<float> values_;  // [round][tile][2] statistics when shared with other processes
  DeviceBuffer<float> power_;   // the guide's clusters by power (GuideClusters::powerPmf)
  SceneView view_;
};

}  // namespace tracer
