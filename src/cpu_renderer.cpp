// @file cpu_renderer.cpp: the reference renderer: the GPU's wavefront (generate, intersect, shade per
// material class, shadow) run over the same queues and the same header functions on a thread pool.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include "thread_pool.h"
#include "tracer/light_tiles_host.h"
#include "tracer/render_host.h"

namespace tracer {
namespace {

using L = AlignedLayout;

// A queue filled by many threads: each chunk gathers its pushes locally and reserves one range.
template <typename T>
struct Queue {
  std::vector<T> items;
  std::atomic<size_t> count{0};
  void Resize(size_t n) { items.resize(n); }
  void Clear() { count.store(0); }
  size_t Size() const { return count.load(); }
};

template <typename T>
struct LocalPush {
  Queue<T>& q;
  std::vector<T> local;
  explicit LocalPush(Queue<T>& queue) : q(queue) { local.reserve(256); }
  void Push(const T& v) {
    local.push_back(v);
    if (local.size() == 256) Flush();
  }
  void Flush() {
    if (local.empty()) return;
    size_t base = q.count.fetch_add(local.size());
    std::copy(local.begin(), local.end(), q.items.begin() + static_cast<std::ptrdiff_t>(base));
    local.clear();
  }
  ~LocalPush() { Flush(); }
};

struct Wavefront {
  size_t pool;
  std::vector<RayState> rays[2];
  std::vector<Float4> pathA[2];
  std::vector<Int4> pathB[2];
  std::vector<Hit> hits;
  Queue<int32_t> classQueue[kNumMaterialClasses];
  Queue<int32_t> missQueue;
  Queue<ShadowItem> shadowQueue;
  std::atomic<size_t> nextCount{0};

  explicit Wavefront(size_t n) : pool(n) {
    for (int b = 0; b < 2; ++b) {
      rays[b].resize(n);
      pathA[b].resize(n);
      pathB[b].resize(n);
    }
    hits.resize(n);
    for (auto& q : classQueue) q.Resize(n);
    missQueue.Resize(n);
    shadowQueue.Resize(n);
  }
  L::PathBuffers Paths(int b) { return L::PathBuffers{pathA[b].data(), pathB[b].data()}; }
};

}  // namespace

RenderResult RenderCpu(const SceneData& data, const RenderOptions& opt, const ProgressFn& progress) {
  int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ThreadPool tp(threads);
  SceneView scene = data.View();
  // Tile-guided light selection: the guide is refreshed between passes, never during one, so each pass
  // samples from one fixed distribution and stays unbiased.
  std::unique_ptr<TileGuideHost> guide;
  if (opt.lightSampling == LightSampling::kTiles && data.clusters.Count() > 0) guide = std::make_unique<TileGuideHost>(data, opt);
  int pass = 0, refreshes = 0;
  const long long pixels = static_cast<long long>(opt.width) * opt.height;
  const size_t pool = static_cast<size_t>(opt.pathsInFlight > 0 ? opt.pathsInFlight
                                                                 : std::min<long long>(pixels, 1LL << 17));
  Wavefront wf(pool);
  HostFilm film;
  film.Reset(opt.width, opt.height);
  if (opt.resume) film = *opt.resume;
  unsigned long long dropped = film.dropped;
  unsigned long long firstBad = kNoBadSample;
  FilmView fv{film.sum.data(), &dropped, &firstBad, opt.width, opt.height};

  RenderParams rp = MakeRenderParams(opt);

  RenderResult result;
  result.backend = "cpu (" + std::to_string(threads) + " threads)";
  RenderStats& st = result.stats;
  const size_t chunk = 256;
  auto t0 = std::chrono::steady_clock::now();
  auto lastCheckpoint = t0;

  while (film.sppDone < opt.spp) {
    const int passSpp = SamplesPerPass(pixels, static_cast<long long>(pool), opt.spp - film.sppDone);
    if (guide && IsTileRefreshPass(pass)) {
      guide->Refresh(refreshes++);
      scene = guide->View();
      rp.guideLights = 1;
    }
    ++pass;
    rp.sampleBase = static_cast<uint32_t>(film.sppDone);
    const uint64_t total = static_cast<uint64_t>(pixels) * passSpp;
    uint64_t nextWork = 0;
    size_t live = 0;
    int cur = 0;
    for (int bounce = 0;; ++bounce) {
      // generate: fill the free end of the pool with new camera paths
      const size_t fresh = static_cast<size_t>(std::min<uint64_t>(pool - live, total - nextWork));
      {
        L::PathBuffers paths = wf.Paths(cur);
        RayState* rays = wf.rays[cur].data();
        tp.ParallelFor(fresh, chunk, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            Ray r;
            PathState ps;
            GenerateItem(scene, rp, nextWork + i, r, ps);
            int slot = static_cast<int>(live + i);
            r.index = slot;
            L::StoreRay(rays, slot, r);
            L::StorePath(paths, slot, ps);
          }
        });
      }
      nextWork += fresh;
      st.primaryRays += fresh;
      const size_t n = live + fresh;
      if (n == 0) break;
      if (opt.collectStats) {
        if (st.livePerBounce.size() <= static_cast<size_t>(bounce)) st.livePerBounce.resize(bounce + 1);
        st.livePerBounce[bounce] += n;
      }
      st.extensionRays += n;

      // intersect: closest hit, then sort into one queue per material class (or the miss queue)
      for (auto& q : wf.classQueue) q.Clear();
      wf.missQueue.Clear();
      wf.shadowQueue.Clear();
      tp.ParallelFor(n, chunk, [&](size_t b, size_t e) {
        std::vector<LocalPush<int32_t>> push;
        for (auto& q : wf.classQueue) push.emplace_back(q);
        LocalPush<int32_t> miss(wf.missQueue);
        for (size_t i = b; i < e; ++i) {
          Ray r = L::LoadRay(wf.rays[cur].data(), static_cast<int>(i));
          HitRecord h = TraverseBvh<false, false>(scene.bvh, r);
          L::StoreHit(wf.hits.data(), static_cast<int>(i), h);
          int32_t cls = ClassOfHit<false>(scene, h);
          if (cls < 0)
            miss.Push(static_cast<int32_t>(i));
          else
            push[static_cast<size_t>(cls)].Push(static_cast<int32_t>(i));
        }
      });

      // miss: the environment
      if (!IsBlack(scene.environment)) {
        L::PathBuffers paths = wf.Paths(cur);
        tp.ParallelFor(wf.missQueue.Size(), chunk, [&](size_t b, size_t e) {
          for (size_t j = b; j < e; ++j) {
            Ray r = L::LoadRay(wf.rays[cur].data(), wf.missQueue.items[j]);
            MissItem(scene, rp, fv, L::LoadPath(paths, r.index));
          }
        });
      }

      // shade, one pass per material class, as the GPU runs one kernel per class
      wf.nextCount.store(0);
      const int nxt = 1 - cur;
      L::PathBuffers inPaths = wf.Paths(cur), outPaths = wf.Paths(nxt);
      for (int c = 0; c < kNumMaterialClasses; ++c) {
        Queue<int32_t>& q = wf.classQueue[c];
        tp.ParallelFor(q.Size(), chunk, [&](size_t b, size_t e) {
          LocalPush<ShadowItem> shadows(wf.shadowQueue);
          for (size_t j = b; j < e; ++j) {
            int i = q.items[j];
            Ray r = L::LoadRay(wf.rays[cur].data(), i);
            HitRecord h = L::LoadHit(wf.hits.data(), i);
            PathState ps = L::LoadPath(inPaths, r.index);
            ShadeOutput out = ShadeItem<false>(scene, rp, r, h, ps);
            if (!IsBlack(out.emitted)) FilmAdd(fv, rp, ps.pixel, ps.depth, out.emitted);
            if (out.hasShadow) {
              ShadowItem s;
              L::StoreShadow(&s, 0, out.shadow);
              shadows.Push(s);
            }
            if (out.continues) {
              int slot = static_cast<int>(wf.nextCount.fetch_add(1));
              out.next.index = slot;
              L::StoreRay(wf.rays[nxt].data(), slot, out.next);
              L::StorePath(outPaths, slot, out.nextState);
            }
          }
        });
      }

      // shadow: any hit; unoccluded samples reach the film
      const size_t ns = wf.shadowQueue.Size();
      st.shadowRays += ns;
      tp.ParallelFor(ns, chunk, [&](size_t b, size_t e) {
        for (size_t j = b; j < e; ++j) {
          Shadow s = L::LoadShadow(wf.shadowQueue.items.data(), static_cast<int>(j));
          if (ShadowItemVisible<false>(scene, s)) FilmAdd(fv, rp, static_cast<uint32_t>(s.ray.index), s.depth, s.contribution);
        }
      });
      live = wf.nextCount.load();
      cur = nxt;
    }
    film.sppDone += passSpp;
    film.dropped = dropped;
    st.droppedSamples = dropped;
    auto now = std::chrono::steady_clock::now();
    if (opt.checkpoint && std::chrono::duration<double>(now - lastCheckpoint).count() >= opt.checkpointSeconds) {
      opt.checkpoint(film);
      lastCheckpoint = now;
    }
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opt.checkNan && firstBad != kNoBadSample) break;  // --check-nan: stop at the pass that found one
    if (progress && !progress(film.sppDone, opt.spp, st)) break;
    if (opt.timeLimit > 0.0 && st.seconds >= opt.timeLimit) break;
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.droppedSamples = dropped;
  result.width = opt.width;
  result.height = opt.height;
  result.sppDone = film.sppDone;
  film.dropped = dropped;
  result.rgb = film.Resolve();
  result.film = std::move(film);
  result.firstNonFinite = NonFiniteSample::Decode(firstBad);
  return result;
}

}  // namespace tracer
