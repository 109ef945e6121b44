// Per-computation cost curves: the Pareto list and its lower convex hull,
// and the searches the discretisation relies on, against plain scans.
#include "optimizer/node_costs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace perseus::optimizer {
namespace {

std::vector<FreqPoint> RandomOptions(std::mt19937& rng, int count) {
  std::vector<FreqPoint> options;
  std::uniform_real_distribution<> time(0.01, 0.05), energy(1, 10);
  for (int k = 0; k < count; ++k) options.push_back({1410 - 15 * k, time(rng), energy(rng)});
  return options;
}

TEST(NodeCosts, ParetoAndHullAreOrderedAndBelowEveryOption) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<FreqPoint> options = RandomOptions(rng, 1 + trial % 40);
    NodeCosts c(options, 50);
    for (size_t k = 1; k < c.pareto().size(); ++k) {
      EXPECT_LT(c.pareto()[k - 1].time_s, c.pareto()[k].time_s);
      EXPECT_GT(c.pareto()[k - 1].cost_j, c.pareto()[k].cost_j);
    }
    for (const FreqPoint& o : options) {
      if (o.time_s < c.min_time_s()) continue;
      EXPECT_LE(c.HullCost(o.time_s), o.energy_j - 50 * o.time_s + 1e-9);
    }
  }
}

TEST(NodeCosts, CheapestWithinNearMatchesFromAnyGuess) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    NodeCosts c(RandomOptions(rng, 1 + trial % 70), 50);
    const int n = static_cast<int>(c.pareto().size());
    std::uniform_real_distribution<> d(0.005, 0.06);
    for (int q = 0; q < 20; ++q) {
      double limit = q % 4 == 0 ? c.pareto()[q % n].time_s : d(rng);  // exact option times too
      int expected = -1;
      for (int k = 0; k < n; ++k) {
        if (c.pareto()[k].time_s <= limit * (1 + kTimeEps)) expected = k;
      }
      EXPECT_EQ(c.CheapestWithin(limit), expected);
      for (int guess = -3; guess <= n + 2; ++guess) {
        EXPECT_EQ(c.CheapestWithinNear(limit, guess), expected) << "trial " << trial << " guess " << guess;
      }
    }
  }
}

TEST(SeriesCosts, CheapestWithinIsTheCheapestPairThatFits) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    NodeCosts a(RandomOptions(rng, 1 + trial % 30), 50), b(RandomOptions(rng, 1 + trial % 23), trial % 2 ? 50 : 0);
    SeriesCosts series(a, b);
    std::uniform_real_distribution<> total(0.01, 0.11);
    for (int q = 0; q < 30; ++q) {
      // Exact sums of two option times too, where rounding decides.
      const double limit = q % 3 == 0 ? a.pareto()[q % a.pareto().size()].time_s + b.pareto()[q % b.pareto().size()].time_s
                                      : total(rng);
      double expected = std::numeric_limits<double>::infinity();
      for (const CostPoint& x : a.pareto()) {
        for (const CostPoint& y : b.pareto()) {
          if (x.time_s + y.time_s <= limit) expected = std::min(expected, x.cost_j + y.cost_j);
        }
      }
      EXPECT_EQ(series.CheapestWithin(limit), expected) << "trial " << trial << " limit " << limit;
    }
  }
}

TEST(SeriesCosts, TimeToBeatIsWhereAPairFirstCostsLess) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 200; ++trial) {
    NodeCosts a(RandomOptions(rng, 1 + trial % 30), 50), b(RandomOptions(rng, 1 + trial % 23), trial % 2 ? 50 : 0);
    SeriesCosts series(a, b);
    for (int q = 0; q < 30; ++q) {
      // Exact pair costs too (a pair costing exactly that does not beat it),
      // and costs beyond every pair's either way.
      const CostPoint& x = a.pareto()[q % a.pareto().size()];
      const CostPoint& y = b.pareto()[(q * 7) % b.pareto().size()];
      const double cost_j = q % 3 == 0 ? x.cost_j + y.cost_j : q % 3 == 1 ? (x.cost_j + y.cost_j) * 1.01 : -1e9 + q * 1e9;
      double expected = std::numeric_limits<double>::infinity();
      for (const CostPoint& p : a.pareto()) {
        for (const CostPoint& o : b.pareto()) {
          if (p.cost_j + o.cost_j < cost_j) expected = std::min(expected, p.time_s + o.time_s);
        }
      }
      const double beat_s = series.TimeToBeat(cost_j);
      EXPECT_EQ(beat_s, expected) << "trial " << trial << " cost " << cost_j;
      // The two lookups agree at, and just below, that time.
      if (std::isfinite(beat_s)) {
        EXPECT_LT(series.CheapestWithin(beat_s), cost_j);
        EXPECT_GE(series.CheapestWithin(std::nextafter(beat_s, 0.0)), cost_j);
      } else {
        EXPECT_GE(series.CheapestWithin(1e9), cost_j);
      }
    }
  }
}

TEST(NodeCosts, AVertexTheRatesLookPastCountsAsReached) {
  // Hull vertices at 0.04 s, 0.05 s and 0.06 s. From a hair above the middle
  // one (within the relative window kTimeEps x d, 5e-11 s here), ShortenRate
  // already prices the segment below it, so the next vertex below must be
  // 0.04 s, not the middle one 2e-11 s away (the sweep once stalled on such
  // a step).
  NodeCosts c({{1410, 0.04, 10}, {1200, 0.05, 7}, {1000, 0.06, 5}}, 0);
  ASSERT_EQ(c.hull().size(), 3u);
  const double d = 0.05 + 2e-11;
  EXPECT_DOUBLE_EQ(c.ShortenRate(d), (10.0 - 7.0) / 0.01);
  EXPECT_EQ(c.HullVertexBelow(d), 0.04);
  EXPECT_EQ(c.HullVertexAbove(0.05 - 2e-11), 0.06);
  EXPECT_DOUBLE_EQ(c.LengthenRate(0.05 - 2e-11), (7.0 - 5.0) / 0.01);
  // Past the window (relative, so that clocks whose times differ by about
  // 1e-9 s stay apart; found in review) the vertex is still ahead, and the
  // rate is the segment's this side of it.
  const double outside = 0.05 + 8e-11;
  EXPECT_DOUBLE_EQ(c.ShortenRate(outside), (7.0 - 5.0) / 0.01);
  EXPECT_EQ(c.HullVertexBelow(outside), 0.05);
  EXPECT_EQ(c.HullVertexAbove(0.05 - 8e-11), 0.05);
  // Well away from a vertex, the nearest one on each side.
  EXPECT_EQ(c.HullVertexBelow(0.055), 0.05);
  EXPECT_EQ(c.HullVertexAbove(0.045), 0.05);
  EXPECT_EQ(c.HullVertexBelow(0.04), 0.04);  // none below: d itself
  EXPECT_EQ(c.HullVertexAbove(0.06), 0.06);
}

}  // namespace
}  // namespace perseus::optimizer
