// Tests of the window design: every clock seen as a diagonal and a cross
// window, reference spacing, blocking windows, interleaving (clock not
// confounded with time), and the repeat design.
#include "profiling/window_design.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace perseus::profiling {
namespace {

// Spearman's rank correlation of x and y (no ties in x; ties in y get mean ranks).
double Spearman(const std::vector<double>& x, const std::vector<double>& y) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<int> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < order.size();) {
      size_t j = i;
      while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
      for (size_t k = i; k < j; ++k) r[order[k]] = (i + j - 1) / 2.0;
      i = j;
    }
    return r;
  };
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / rx.size();
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / ry.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

TEST(InterleavedOrder, IsAPermutationSpreadEvenly) {
  EXPECT_EQ(InterleavedOrder(8), (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_EQ(InterleavedOrder(5), (std::vector<int>{0, 4, 2, 1, 3}));
  EXPECT_TRUE(InterleavedOrder(0).empty());
  EXPECT_EQ(InterleavedOrder(1), (std::vector<int>{0}));
  for (int n = 1; n < 120; ++n) {
    std::vector<int> order = InterleavedOrder(n);
    std::sort(order.begin(), order.end());
    std::vector<int> all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(order, all) << n;
  }
}

// Per stage: how often each clock runs as (i,i), as (i,0) and as (0,i).
struct Roles {
  std::map<int, int> diagonal, cross_forward, cross_backward;
};

Roles StageRoles(const std::vector<WindowPlan>& design, int stage) {
  Roles r;
  for (const WindowPlan& w : design) {
    const WindowConfig c = w.stages[stage];
    if (c.forward_index == c.backward_index) {
      ++r.diagonal[c.forward_index];
    } else if (c.backward_index == 0) {
      ++r.cross_forward[c.forward_index];
    } else if (c.forward_index == 0) {
      ++r.cross_backward[c.backward_index];
    } else {
      ADD_FAILURE() << "unexpected config (" << c.forward_index << "," << c.backward_index << ")";
    }
  }
  return r;
}

TEST(BaseDesign, EveryStageRunsEveryClockOnceDiagonalAndOnceCross) {
  for (bool stagger : {false, true}) {
    for (int clocks : {2, 3, 10, 38, 81}) {
      const std::vector<WindowPlan> design = BaseDesign(4, clocks, DesignOptions{8, true, stagger});
      for (int s = 0; s < 4; ++s) {
        Roles r = StageRoles(design, s);
        for (int i = 1; i < clocks; ++i) {
          // Plus one diagonal at the lowest clock from the blocking windows.
          EXPECT_EQ(r.diagonal[i], i == clocks - 1 ? 2 : 1) << clocks << " clocks, stage " << s << ", clock " << i;
          EXPECT_EQ(r.cross_forward[i] + r.cross_backward[i], 1) << clocks << " clocks, clock " << i;
          EXPECT_EQ(r.cross_forward[i], i % 2) << "forwards alone at odd clocks";
        }
      }
      for (const WindowPlan& w : design) {
        if (w.purpose != WindowPurpose::kReference) continue;
        for (const WindowConfig& c : w.stages) {
          EXPECT_EQ(c, (WindowConfig{0, 0}));
        }
      }
    }
  }
}

TEST(BaseDesign, WithoutCrossWindowsEveryClockRunsTwiceDiagonalAndNothingSwitchesInAWindow) {
  for (bool stagger : {false, true}) {
    for (int clocks : {2, 3, 10, 38}) {
      DesignOptions single{8, true, stagger};
      single.cross_windows = false;
      const std::vector<WindowPlan> design = BaseDesign(4, clocks, single);
      EXPECT_EQ(design.size(), BaseDesign(4, clocks, DesignOptions{8, true, stagger}).size()) << "same length";
      for (int s = 0; s < 4; ++s) {
        Roles r = StageRoles(design, s);
        EXPECT_TRUE(r.cross_forward.empty() && r.cross_backward.empty());
        for (int i = 1; i < clocks; ++i) {
          EXPECT_EQ(r.diagonal[i], i == clocks - 1 ? 3 : 2) << clocks << " clocks, stage " << s << ", clock " << i;
        }
      }
    }
  }
}

TEST(BaseDesign, UnstaggeredStagesSwitchTogether) {
  for (const WindowPlan& w : BaseDesign(4, 38, DesignOptions{8, true, false})) {
    if (w.purpose == WindowPurpose::kBlocking) continue;
    for (const WindowConfig& c : w.stages) {
      EXPECT_EQ(c, w.stages[0]) << WindowPurposeName(w.purpose);
    }
    if (w.purpose == WindowPurpose::kDiagonal) {
      EXPECT_EQ(w.stages[0].forward_index, w.stages[0].backward_index);
    }
  }
}

TEST(BaseDesign, StaggeredStagesRunDifferentClocksInEveryBodyWindow) {
  const std::vector<WindowPlan> design = BaseDesign(8, 38);
  for (const WindowPlan& w : design) {
    if (w.purpose == WindowPurpose::kReference) continue;
    EXPECT_EQ(w.purpose, WindowPurpose::kStaggered);
    std::set<std::pair<int, int>> distinct;
    for (const WindowConfig& c : w.stages) distinct.insert({c.forward_index, c.backward_index});
    EXPECT_GE(distinct.size(), 6u);
  }
  // One stage: nothing to stagger.
  for (const WindowPlan& w : BaseDesign(1, 10)) {
    EXPECT_NE(w.purpose, WindowPurpose::kStaggered);
  }
}

TEST(BaseDesign, ReferenceFirstLastAndEveryRWindows) {
  for (int every : {2, 5, 8}) {
    const std::vector<WindowPlan> design = BaseDesign(2, 38, DesignOptions{every, true});
    EXPECT_EQ(design.front().purpose, WindowPurpose::kReference);
    EXPECT_EQ(design.back().purpose, WindowPurpose::kReference);
    for (size_t k = 0; k + 1 < design.size(); ++k) {
      EXPECT_EQ(design[k].purpose == WindowPurpose::kReference, k % every == 0) << "every " << every << " window " << k;
    }
  }
  // 37 diagonal + 37 cross + 2 blocking = 76 body windows, 11 references in between, one last.
  EXPECT_EQ(BaseDesign(8, 38).size(), 76u + 11u + 1u);
}

TEST(BaseDesign, BlockingWindowsAlternateStagesBetweenHighestAndLowest) {
  const std::vector<WindowPlan> design = BaseDesign(5, 10, DesignOptions{8, true, false});
  std::vector<WindowPlan> blocking;
  for (const WindowPlan& w : design) {
    if (w.purpose == WindowPurpose::kBlocking) blocking.push_back(w);
  }
  ASSERT_EQ(blocking.size(), 2u);
  for (int s = 0; s < 5; ++s) {
    const WindowConfig high{0, 0}, low{9, 9};
    EXPECT_EQ(blocking[0].stages[s], s % 2 == 0 ? high : low);
    EXPECT_EQ(blocking[1].stages[s], s % 2 == 0 ? low : high);
  }
  for (const WindowPlan& w : BaseDesign(3, 10, DesignOptions{8, false, false})) {
    EXPECT_NE(w.purpose, WindowPurpose::kBlocking);
  }
}

TEST(BaseDesign, ClockIsNotConfoundedWithTime) {
  for (int clocks : {10, 38, 81, 110}) {
    const std::vector<WindowPlan> design = BaseDesign(4, clocks);
    for (int s = 0; s < 4; ++s) {
      std::vector<double> position, clock;
      for (size_t k = 0; k < design.size(); ++k) {
        if (design[k].purpose == WindowPurpose::kReference) continue;
        position.push_back(static_cast<double>(k));
        clock.push_back(std::max(design[k].stages[s].forward_index, design[k].stages[s].backward_index));
      }
      // A sweep from high to low clocks would score 1; random orders of 20 windows score about +-0.23.
      EXPECT_LT(std::abs(Spearman(position, clock)), clocks < 20 ? 0.3 : 0.15) << clocks << " clocks, stage " << s;
    }
  }
}

TEST(BaseDesign, DegenerateSizes) {
  EXPECT_TRUE(BaseDesign(0, 10).empty());
  EXPECT_TRUE(BaseDesign(3, 0).empty());
  const std::vector<WindowPlan> one = BaseDesign(3, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].purpose, WindowPurpose::kReference);
}

TEST(RepeatDesign, DiagonalRepeatsPerStageAndReferences) {
  const std::vector<WindowPlan> design = RepeatDesign(3, {{5, 7, 5}, {}, {2}}, DesignOptions{3, true});
  // Body: 3 repeat windows; references at 0 and 3 and last.
  ASSERT_EQ(design.size(), 6u);
  const std::vector<WindowPurpose> purposes = {WindowPurpose::kReference, WindowPurpose::kRepeat,
                                               WindowPurpose::kRepeat,    WindowPurpose::kReference,
                                               WindowPurpose::kRepeat,    WindowPurpose::kReference};
  for (size_t k = 0; k < design.size(); ++k) {
    EXPECT_EQ(design[k].purpose, purposes[k]) << k;
  }
  EXPECT_EQ(design[1].stages, (std::vector<WindowConfig>{{5, 5}, {0, 0}, {2, 2}}));
  EXPECT_EQ(design[2].stages, (std::vector<WindowConfig>{{7, 7}, {0, 0}, {0, 0}}));
  EXPECT_EQ(design[4].stages, (std::vector<WindowConfig>{{5, 5}, {0, 0}, {0, 0}}));
  EXPECT_TRUE(RepeatDesign(3, {{}, {}, {}}).empty());
  EXPECT_STREQ(WindowPurposeName(WindowPurpose::kRepeat), "repeat");
}

}  // namespace
}  // namespace perseus::profiling
