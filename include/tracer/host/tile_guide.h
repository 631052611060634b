// @file tile_guide.h: light clusters (host) and the CPU renderer's tile guide.
#pragma once
#include <algorithm>
#include <vector>

#include "tracer/core/light_tiles.h"
#include "tracer/core/minplus.h"
#include "tracer/host/pass_driver.h"
#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

// Groups the emitters into at most maxClusters clusters by a spatial median split of their centroids
// (always splitting the cluster with the most emitters, along its longest axis), renumbers the emitters
// cluster by cluster (PermuteEmitters), and fills data.clusters. Within a cluster, emitters are picked by
// power through a per-cluster alias table.
void BuildLightClusters(SceneData& data, int maxClusters);

// The clusters a tile guide chooses among: the scene's emitter clusters, then the delta lights as one more when there
// are any, and, when next-event estimation samples the environment (a positive power share and not --env-sampling
// uniform), the environment as one more, the last. powerPmf is their selection by power (light.h's EnvPick and
// DeltaShare by power): the emitter clusters' shares times (1 - the delta lights') times (1 - the environment's), the
// delta lights' share times (1 - the environment's), then the environment's own.
struct GuideClusters {
  int envCluster = 0;
  int deltaCluster = 0;
  std::vector<float> powerPmf;
  int Count() const { return static_cast<int>(powerPmf.size()); }
};
GuideClusters MakeGuideClusters(const SceneData& data, const RenderOptions& opt);
// Whether a tile guide has lights to choose among: emitter clusters (BuildLightClusters) or delta lights.
bool WantsTileGuide(const SceneData& data);

// Statistics rounds per refresh: each round tests one cluster per tile with every pixel of the tile.
inline int TileRoundsForRefresh(int refresh, int clusters) { return std::min(clusters, refresh == 0 ? 32 : 8); }
constexpr int kMinPlusSteps = 3;

// The CPU renderer's guide: the same steps as the GPU's, as plain loops over the host arrays.
class TileGuideHost {
 public:
  // With a pool, the G-buffer, the dissimilarities and the statistics run over tiles on its threads (each
  // tile's values are summed by one thread in pixel order, so the guide does not depend on the thread count).
  TileGuideHost(const SceneData& data, const RenderOptions& opt, ThreadPool* pool = nullptr);
  // One refresh: statistics rounds (of the tiles `share` gives this process, combined with the others'),
  // costs, min-plus propagation, and the per-tile cdfs.
  void Refresh(int refresh, const TileStatsShare& share = {});
  // The scene view with the guide's pointers filled in.
  SceneView View() const { return view_; }
  int NumTiles() const { return numTiles_; }
  const std::vector<float>& Cost() const { return cost_; }

 private:
  template <class Fn>
  void ForEachTile(Fn&& fn) const;  // fn(t) for every tile, on the pool when there is one
  template <class Fn>
  void ForEachPixel(int t, Fn&& fn) const;  // fn(x, y, pixel index) over tile t, row by row

  const SceneData& data_;
  SceneView view_;
  ThreadPool* pool_;
  float alpha_;
  uint32_t seed_;
  int width_, height_, tileSize_, tilesX_, tilesY_, numTiles_, k_;
  GuideClusters clusters_;
  TileBand band_{};
  std::vector<Float4> posValid_, normalDepth_, tileInfo_;
  std::vector<float> sum_, count_, cost_, cdf_;
  std::vector<float> d_;  // banded dissimilarities (band_), numTiles x band_.Size()
};

}  // namespace tracer
