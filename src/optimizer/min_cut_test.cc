// Min cut with lower bounds: the dynamic solver against brute force
// over every cut and against LEMON's Preflow, across sequences of bound
// changes like the sweep makes.
#include "optimizer/min_cut.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <utility>

namespace perseus::optimizer {
namespace {

struct RandomArc {
  int from, to;
};

double BruteForceCut(int n, const std::vector<RandomArc>& arcs, const std::vector<double>& lower,
                     const std::vector<double>& upper) {
  double best = kInfiniteCapacity;
  const int inner = n - 2;
  for (int mask = 0; mask < (1 << inner); ++mask) {
    auto in_x = [&](int v) { return v == MinCut::kSource || (v >= 2 && ((mask >> (v - 2)) & 1)); };
    double value = 0;
    bool infinite = false;
    for (size_t a = 0; a < arcs.size(); ++a) {
      bool fx = in_x(arcs[a].from), tx = in_x(arcs[a].to);
      if (fx && !tx) {
        if (upper[a] >= kInfiniteCapacity) infinite = true;
        value += upper[a];
      } else if (!fx && tx) {
        value -= lower[a];
      }
    }
    if (!infinite) best = std::min(best, value);
  }
  return best;
}

double CutValue(const std::vector<char>& side, const std::vector<RandomArc>& arcs, const std::vector<double>& lower,
                const std::vector<double>& upper) {
  double value = 0;
  for (size_t a = 0; a < arcs.size(); ++a) {
    if (side[arcs[a].from] && !side[arcs[a].to]) value += upper[a];
    if (!side[arcs[a].from] && side[arcs[a].to]) value -= lower[a];
  }
  return value;
}

TEST(MinCut, MatchesBruteForceAndPreflowAcrossBoundChanges) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 4 + trial % 9;  // source 0, sink 1, inner nodes 2..n-1 in topological order
    std::vector<RandomArc> arcs;
    for (int v = 2; v < n; ++v) {
      if (rng() % 2) arcs.push_back({MinCut::kSource, v});
      if (rng() % 2) arcs.push_back({v, MinCut::kSink});
      for (int w = v + 1; w < n; ++w) {
        if (rng() % 3 == 0) arcs.push_back({v, w});
      }
    }
    arcs.push_back({MinCut::kSource, 2});
    arcs.push_back({n - 1, MinCut::kSink});
    MinCut warm(n), cold(n);
    for (const RandomArc& a : arcs) warm.AddArc(a.from, a.to), cold.AddArc(a.from, a.to);
    std::vector<double> lower(arcs.size()), upper(arcs.size());
    for (int round = 0; round < 6; ++round) {
      for (size_t a = 0; a < arcs.size(); ++a) {
        if (round > 0 && rng() % 3) continue;  // change some bounds each round
        int kind = rng() % 6;
        lower[a] = kind == 0 ? 0 : (rng() % 50) / 10.0;
        upper[a] = kind == 1 ? kInfiniteCapacity : kind == 2 ? 0 : lower[a] + (rng() % 80) / 10.0;
        if (kind == 2) lower[a] = 0;
        warm.SetBounds(static_cast<int>(a), lower[a], upper[a]);
        cold.SetBounds(static_cast<int>(a), lower[a], upper[a]);
      }
      std::vector<char> side_warm, side_cold;
      double expected = BruteForceCut(n, arcs, lower, upper);
      double got = warm.SolveDynamic(side_warm);
      double lemon = cold.SolveWithLemonPreflow(side_cold);
      if (expected >= kInfiniteCapacity / 2) {
        EXPECT_GE(got, kInfiniteCapacity / 2) << "trial " << trial << " round " << round;
        EXPECT_GE(lemon, kInfiniteCapacity / 2);
        continue;
      }
      EXPECT_NEAR(got, expected, 1e-7) << "trial " << trial << " round " << round;
      EXPECT_NEAR(lemon, expected, 1e-7) << "trial " << trial << " round " << round;
      ASSERT_TRUE(side_warm[MinCut::kSource] && !side_warm[MinCut::kSink]);
      EXPECT_NEAR(CutValue(side_warm, arcs, lower, upper), expected, 1e-7) << "the reported side is a minimum cut";
    }
  }
}

struct Bounds {
  int from, to;
  double lower, upper;
};

// The dynamic solver's cut value on a fresh network, next to Preflow's.
std::pair<double, double> SolveBoth(int nodes, const std::vector<Bounds>& arcs) {
  MinCut dynamic(nodes), cold(nodes);
  for (const Bounds& a : arcs) dynamic.AddArc(a.from, a.to), cold.AddArc(a.from, a.to);
  for (size_t i = 0; i < arcs.size(); ++i) {
    dynamic.SetBounds(static_cast<int>(i), arcs[i].lower, arcs[i].upper);
    cold.SetBounds(static_cast<int>(i), arcs[i].lower, arcs[i].upper);
  }
  std::vector<char> side;
  return {dynamic.SolveDynamic(side), cold.SolveWithLemonPreflow(side)};
}

TEST(MinCut, LargeCapacitiesDoNotLeaveRoundingToAugmentForever) {
  // Found by review: with bounds near 1e7-1e9 the terminal sums round to
  // well above 1e-9 absolute, and the solver augmented nothing, forever.
  const double inf = kInfiniteCapacity;
  auto [got, expected] = SolveBoth(6, {{0, 2, 0, inf},
                                       {2, 5, 0, inf},
                                       {4, 1, 0, inf},
                                       {5, 1, 0, 0x1.df32425d38f4cp+28},
                                       {5, 4, 0x1.ab22ca6808493p+27, 0x1.ab22ca6808493p+27},
                                       {5, 1, 0, 0x1.1346b42906fbep+30}});
  EXPECT_NEAR(got, expected, 1e-9 * expected);
  std::tie(got, expected) = SolveBoth(6, {{0, 2, 0, 9581089.2040840313},
                                          {2, 3, 0, inf},
                                          {3, 1, 0, inf},
                                          {4, 2, 0, inf},
                                          {5, 4, 5642706.4670119975, 5642706.4670119975},
                                          {5, 4, 4382048.6105813533, 4382048.6105813533}});
  EXPECT_NEAR(got, expected, 1e-9 * expected);
}

TEST(MinCut, OneLargeBoundDoesNotBlurSmallCuts) {
  // Found by review of a first fix that scaled one global threshold with the
  // largest bound: a 1e13 arc made a cut of 5 come out as 8, even after
  // that arc shrank.
  MinCut m(4);
  const int sa = m.AddArc(0, 2), ab = m.AddArc(2, 3), bt = m.AddArc(3, 1);
  m.SetBounds(sa, 0, 1e13);
  m.SetBounds(ab, 0, 8);
  m.SetBounds(bt, 0, 5);
  std::vector<char> side;
  EXPECT_DOUBLE_EQ(m.SolveDynamic(side), 5);
  m.SetBounds(sa, 0, 100);
  EXPECT_DOUBLE_EQ(m.SolveDynamic(side), 5);
}

TEST(MinCut, MatchesPreflowOverLongSequencesOfSmallChanges) {
  // Larger networks than brute force can check, changed a few arcs at a time
  // as the sweep does, so the search trees are reused across many solves;
  // also with every bound scaled up, where rounding is larger.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const double scale = trial < 20 ? 1.0 : 1e8;
    const int n = 30 + 10 * (trial % 5);
    std::vector<RandomArc> arcs;
    for (int v = 2; v < n; ++v) {
      if (rng() % 4 == 0) arcs.push_back({MinCut::kSource, v});
      if (rng() % 4 == 0) arcs.push_back({v, MinCut::kSink});
      for (int w = v + 1; w < std::min(n, v + 6); ++w) {
        if (rng() % 2 == 0) arcs.push_back({v, w});
      }
    }
    MinCut dynamic(n), cold(n), side_only(n);
    for (const RandomArc& a : arcs) {
      dynamic.AddArc(a.from, a.to), cold.AddArc(a.from, a.to), side_only.AddArc(a.from, a.to);
    }
    std::vector<double> lower(arcs.size(), 0), upper(arcs.size(), 0);
    for (int round = 0; round < 150; ++round) {
      const int changes = round == 0 ? static_cast<int>(arcs.size()) : 1 + static_cast<int>(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        const size_t a = round == 0 ? c : rng() % arcs.size();
        const int kind = rng() % 8;
        lower[a] = kind < 3 ? 0 : scale * (rng() % 50) / 10.0;
        upper[a] = kind == 0 ? kInfiniteCapacity : kind == 1 ? lower[a] : lower[a] + scale * (rng() % 80) / 10.0;
        dynamic.SetBounds(static_cast<int>(a), lower[a], upper[a]);
        cold.SetBounds(static_cast<int>(a), lower[a], upper[a]);
        side_only.SetBounds(static_cast<int>(a), lower[a], upper[a]);
      }
      std::vector<char> side_dynamic, side_cold, side_found;
      const double got = dynamic.SolveDynamic(side_dynamic);
      const double expected = cold.SolveWithLemonPreflow(side_cold);
      const bool found = side_only.FindCut(side_found);
      if (expected >= kInfiniteCapacity / 2) {
        EXPECT_GE(got, kInfiniteCapacity / 2) << "trial " << trial << " round " << round;
        EXPECT_FALSE(found) << "trial " << trial << " round " << round;
        continue;
      }
      ASSERT_TRUE(found) << "trial " << trial << " round " << round;
      EXPECT_EQ(side_found, side_dynamic) << "trial " << trial << " round " << round;
      const double tolerance = 1e-7 * scale * std::max(1.0, std::abs(expected) / scale);
      ASSERT_NEAR(got, expected, tolerance) << "trial " << trial << " round " << round;
      EXPECT_NEAR(CutValue(side_dynamic, arcs, lower, upper), expected, tolerance) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace perseus::optimizer
