// @file tile_guide.cpp: light clustering, and the CPU renderer's tile guide (statistics, costs, min-plus
// propagation with the host banded step, per-tile cluster cdfs).
#include "tracer/host/tile_guide.h"

#include <algorithm>
#include <numeric>
#include <queue>

#include "tracer/core/minplus.h"

namespace tracer {

void BuildLightClusters(SceneData& d, int maxClusters) {
  const int n = static_cast<int>(d.emitterTri.size());
  d.clusters = LightClusters{};
  if (n == 0) return;
  std::vector<Vec3> centroid(n);
  for (int e = 0; e < n; ++e) {
    Vec3 v0, v1, v2;
    LoadTriangle<false>(d.bvh.tris.data(), d.emitterTri[e], v0, v1, v2);
    centroid[e] = (v0 + v1 + v2) / 3.0f;
  }
  // Groups are ranges of `order`; split the largest until there are maxClusters or none can be split.
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  using Range = std::pair<int, int>;
  auto bigger = [](const Range& a, const Range& b) { return a.second - a.first < b.second - b.first; };
  std::priority_queue<Range, std::vector<Range>, decltype(bigger)> open(bigger);
  std::vector<Range> done;
  open.push({0, n});
  while (!open.empty() && static_cast<int>(open.size() + done.size()) < maxClusters) {
    Range r = open.top();
    open.pop();
    if (r.second - r.first < 2) {
      done.push_back(r);
      continue;
    }
    Vec3 lo(kInf), hi(-kInf);
    for (int i = r.first; i < r.second; ++i) {
      lo = Min(lo, centroid[order[i]]);
      hi = Max(hi, centroid[order[i]]);
    }
    Vec3 ext = hi - lo;
    int axis = ext.x > ext.y ? (ext.x > ext.z ? 0 : 2) : (ext.y > ext.z ? 1 : 2);
    int mid = (r.first + r.second) / 2;
    std::nth_element(order.begin() + r.first, order.begin() + mid, order.begin() + r.second,
                     [&](int a, int b) { return centroid[a][axis] < centroid[b][axis]; });
    open.push({r.first, mid});
    open.push({mid, r.second});
  }
  while (!open.empty()) {
    done.push_back(open.top());
    open.pop();
  }
  std::sort(done.begin(), done.end());
  PermuteEmitters(d, order);  // emitters are now numbered cluster by cluster

  LightClusters& lc = d.clusters;
  lc.emitterCluster.assign(n, 0);
  lc.emitterInClusterPmf.assign(n, 0.0f);
  double total = std::accumulate(d.emitterPower.begin(), d.emitterPower.end(), 0.0);
  for (size_t c = 0; c < done.size(); ++c) {
    const int b = done[c].first, e = done[c].second;
    lc.clusterStart.push_back(b);
    std::vector<double> w(d.emitterPower.begin() + b, d.emitterPower.begin() + e);
    std::vector<AliasEntry> alias = BuildAliasTable(w);
    lc.clusterAlias.insert(lc.clusterAlias.end(), alias.begin(), alias.end());
    double cp = std::accumulate(w.begin(), w.end(), 0.0);
    lc.clusterPowerPmf.push_back(static_cast<float>(cp / total));
    for (int i = b; i < e; ++i) {
      lc.emitterCluster[i] = static_cast<int32_t>(c);
      lc.emitterInClusterPmf[i] = alias[i - b].pmf;
    }
  }
  lc.clusterStart.push_back(n);
}

bool WantsTileGuide(const SceneData& data) { return data.clusters.Count() > 0 || !data.deltaLights.empty(); }

GuideClusters MakeGuideClusters(const SceneData& data, const RenderOptions& opt) {
  GuideClusters g;
  const float env = opt.envSampling == EnvSampling::kBsdfOnly ? 0.0f : data.env.params.pick;
  const float delta = data.deltaLights.empty() ? 0.0f : data.deltaShare;
  g.deltaCluster = delta > 0.0f ? 1 : 0;
  g.envCluster = env > 0.0f && (data.clusters.Count() > 0 || g.deltaCluster) ? 1 : 0;
  // By power: an emitter cluster's share of the emitters, times theirs of what is not the environment (1 - delta),
  // times that (1 - env); the delta lights' (1 - env) delta; the environment's env.
  for (float p : data.clusters.clusterPowerPmf)
    g.powerPmf.push_back((g.envCluster ? p * (1.0f - env) : p) * (1.0f - delta));
  if (g.deltaCluster) g.powerPmf.push_back(g.envCluster ? (1.0f - env) * delta : delta);
  if (g.envCluster) g.powerPmf.push_back(env);
  return g;
}

TileGuideHost::TileGuideHost(const SceneData& data, const RenderOptions& opt, ThreadPool* pool)
    : data_(data),
      view_(data.View()),
      pool_(pool),
      alpha_(opt.tileGuideMix),
      seed_(opt.seed),
      width_(opt.width),
      height_(opt.height),
      tileSize_(opt.tileSize) {
  tilesX_ = (width_ + tileSize_ - 1) / tileSize_;
  tilesY_ = (height_ + tileSize_ - 1) / tileSize_;
  numTiles_ = tilesX_ * tilesY_;
  clusters_ = MakeGuideClusters(data, opt);
  k_ = clusters_.Count();
  const size_t pixels = static_cast<size_t>(width_) * height_;
  posValid_.resize(pixels);
  normalDepth_.resize(pixels);
  // Per tile: its G-buffer, then the mean normal (renormalised) and mean depth of its primary hits.
  tileInfo_.assign(numTiles_, Float4{0, 0, 0, 0});
  ForEachTile([&](int t) {
    Float4& ti = tileInfo_[t];
    int hits = 0;
    ForEachPixel(t, [&](int x, int y, size_t i) {
      GBufferItem<false>(view_, x, y, posValid_[i], normalDepth_[i]);
      if (posValid_[i].w == 0.0f) return;
      ti.x += normalDepth_[i].x;
      ti.y += normalDepth_[i].y;
      ti.z += normalDepth_[i].z;
      ti.w += normalDepth_[i].w;
      ++hits;
    });
    if (hits == 0) return;
    float len = std::sqrt(ti.x * ti.x + ti.y * ti.y + ti.z * ti.z);
    float inv = len > 0.0f ? 1.0f / len : 0.0f;
    ti = Float4{ti.x * inv, ti.y * inv, ti.z * inv, ti.w / hits};
  });
  band_ = TileBand{tilesX_, tilesY_, kTileRadius};
  d_.resize(static_cast<size_t>(numTiles_) * band_.Size());
  ForEachTile([&](int t) {
    for (int j = 0; j < band_.Size(); ++j) {
      const int k = band_.Neighbour(t, j);
      d_[static_cast<size_t>(t) * band_.Size() + j] =
          k < 0 ? kInf : TileDissimilarity(t, k, tilesX_, tileInfo_[t], tileInfo_[k]);
    }
  });
  sum_.assign(static_cast<size_t>(numTiles_) * k_, 0.0f);
  count_.assign(sum_.size(), 0.0f);
  cost_.assign(sum_.size(), kInf);
  cdf_.assign(sum_.size(), 0.0f);
  view_.tiles.cdf = cdf_.data();
  view_.tiles.numClusters = k_;
  view_.tiles.envCluster = clusters_.envCluster;
  view_.tiles.deltaCluster = clusters_.deltaCluster;
  view_.tiles.clusterPowerPmf = clusters_.powerPmf.data();
  view_.tiles.tileSize = tileSize_;
  view_.tiles.tilesX = tilesX_;
  view_.tiles.numTiles = numTiles_;
}

template <class Fn>
void TileGuideHost::ForEachTile(Fn&& fn) const {
  auto range = [&](size_t b, size_t e) {
    for (size_t t = b; t < e; ++t) fn(static_cast<int>(t));
  };
  if (pool_)
    pool_->ParallelFor(static_cast<size_t>(numTiles_), 16, range);
  else
    range(0, static_cast<size_t>(numTiles_));
}

template <class Fn>
void TileGuideHost::ForEachPixel(int t, Fn&& fn) const {
  const int tx = t % tilesX_, ty = t / tilesX_;
  for (int y = ty * tileSize_; y < std::min(height_, (ty + 1) * tileSize_); ++y)
    for (int x = tx * tileSize_; x < std::min(width_, (tx + 1) * tileSize_); ++x)
      fn(x, y, static_cast<size_t>(y) * width_ + x);
}

void TileGuideHost::Refresh(int refresh, const TileStatsShare& share) {
  // Statistics of this process's tiles, a (sum, count) pair per round and tile, then every process's.
  const int rounds = TileRoundsForRefresh(refresh, k_);
  std::vector<float> values(static_cast<size_t>(rounds) * numTiles_ * 2, 0.0f);
  ForEachTile([&](int t) {
    if (!share.Mine(t)) return;
    for (int round = 0; round < rounds; ++round) {
      const int c = TileRoundCluster(t, round, refresh, k_, clusters_.envCluster, clusters_.deltaCluster);
      float s = 0.0f, n = 0.0f;
      ForEachPixel(t, [&](int, int, size_t i) {
        if (posValid_[i].w == 0.0f) return;
        // Random numbers keyed like path samples, on a sample index no render pass uses.
        PathRng rng{seed_, static_cast<uint32_t>(i), TileStatSampleIndex(refresh, round)};
        Vec3 p(posValid_[i].x, posValid_[i].y, posValid_[i].z),
            nn(normalDepth_[i].x, normalDepth_[i].y, normalDepth_[i].z);
        s += TileStatSample<false>(view_, p, nn, c, rng.Get(0), rng.Get(1), rng.Get(2));
        n += 1.0f;
      });
      float* v = &values[(static_cast<size_t>(round) * numTiles_ + t) * 2];
      v[0] = s;
      v[1] = n;
    }
  });
  if (share.combine) share.combine(values);
  // Added round by round, as one process alone adds them.
  for (int round = 0; round < rounds; ++round)
    for (int t = 0; t < numTiles_; ++t) {
      const size_t tc = static_cast<size_t>(t) * k_ +
                        TileRoundCluster(t, round, refresh, k_, clusters_.envCluster, clusters_.deltaCluster);
      const float* v = &values[(static_cast<size_t>(round) * numTiles_ + t) * 2];
      sum_[tc] += v[0];
      count_[tc] += v[1];
    }
  for (size_t i = 0; i < cost_.size(); ++i) cost_[i] = TileCost(sum_[i], count_[i]);
  MinPlusIterateBandHost(band_, d_.data(), cost_.data(), k_, kMinPlusSteps);
  for (int t = 0; t < numTiles_; ++t)
    TileCdfRow(&cost_[static_cast<size_t>(t) * k_], clusters_.powerPmf.data(), k_, alpha_,
               &cdf_[static_cast<size_t>(t) * k_]);
}

}  // namespace tracer
