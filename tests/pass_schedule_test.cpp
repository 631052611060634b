// @file pass_schedule_test.cpp: how LocalPassSchedule cuts a frame into passes: a few pool-fulls a pass, and with
// the tile guide no larger passes than a 2M-path pool gives, whatever the pool (the guide is refreshed between
// passes, so larger passes would leave it less learned).
#include <gtest/gtest.h>

#include <vector>

#include "tracer/host/pass_driver.h"
#include "tracer/host/render_options.h"

namespace tracer {
namespace {

// A backend that renders nothing: the schedule asks it only whether it has a tile guide.
class NoRenderBackend final : public Backend {
 public:
  explicit NoRenderBackend(bool tiles) : tiles_(tiles) {}
  std::string Name() const override { return "none"; }
  PoolPolicy Pool() const override { return PoolPolicy{1LL << 23, true, 32}; }
  void Allocate(long long) override {}
  bool HasTileGuide() const override { return tiles_; }
  void RefreshTileGuide(int, const TileStatsShare&) override {}
  void SetActivePixels(const std::vector<uint32_t>&) override {}
  void RunPass(const RenderParams&, int) override {}
  PassTotals Totals() const override { return {}; }
  void ReadFilm(unsigned long long*) override {}
  void ReadOddFilm(unsigned long long*) override {}
  void AddStats(RenderStats&) override {}

 private:
  bool tiles_;
};

// The spp of each pass the schedule hands out for a frame, and how many guide refreshes come between them.
struct Plan {
  std::vector<int> passes;
  int refreshes = 0;
};
Plan PlanFrame(const RenderOptions& opt, bool tiles, long long pool) {
  NoRenderBackend backend(tiles);
  LocalPassSchedule schedule(opt, ProgressFn{});
  schedule.Begin(backend, pool);
  RenderStats stats;
  PassReport last;
  last.stats = &stats;
  Plan plan;
  for (;;) {
    const PassStep step = schedule.Next(last);
    last = PassReport{};
    last.stats = &stats;
    if (step.kind == PassStep::Kind::kFinish) return plan;
    if (step.kind == PassStep::Kind::kRefreshGuide) ++plan.refreshes;
    if (step.kind == PassStep::Kind::kPass) {
      plan.passes.push_back(step.spp);
      last.spp = step.spp;
    }
  }
}

RenderOptions Frame(int spp) {
  RenderOptions opt;
  opt.width = 1024;
  opt.height = 1024;
  opt.spp = spp;
  return opt;
}

TEST(PassSchedule, APassFillsThePoolFourTimes) {
  EXPECT_EQ(SamplesPerPass(1000, 1000, 100), 4);
  EXPECT_EQ(SamplesPerPass(1000, 1000, 3), 3);       // never more than is left
  EXPECT_EQ(SamplesPerPass(1000000, 1000, 100), 1);  // at least one sample
  // 1M pixels with 8M paths: 32 spp a pass; with 2M paths 8 spp.
  EXPECT_EQ(PlanFrame(Frame(64), false, 1LL << 23).passes, (std::vector<int>{32, 32}));
  EXPECT_EQ(PlanFrame(Frame(64), false, 1LL << 21).passes, std::vector<int>(8, 8));
}

TEST(PassSchedule, TileGuidedPassesDoNotGrowWithThePool) {
  const Plan small = PlanFrame(Frame(64), true, kSteadyPassPool);
  const Plan large = PlanFrame(Frame(64), true, 1LL << 23);
  ASSERT_EQ(small.passes, std::vector<int>(8, 8));
  EXPECT_EQ(large.passes, small.passes);
  EXPECT_EQ(large.refreshes, small.refreshes);
  EXPECT_EQ(large.refreshes, 4);  // before the 1st, 2nd, 3rd and 5th passes (numbered 0, 1, 2 and 4)
  EXPECT_EQ(PlanFrame(Frame(64), false, 1LL << 23).refreshes, 0);
}

}  // namespace
}  // namespace tracer
