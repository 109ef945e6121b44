// Tests of the profile checks: each fires on a constructed case and all stay
// silent on a clean profile.
#include "profiling/profile_checks.h"

#include <gtest/gtest.h>

namespace perseus::profiling {
namespace {

TEST(CheckStage, SilentOnAnEmptyEstimate) { EXPECT_TRUE(CheckStage(0, StageEstimate{}, PlausibilityLimits{}).empty()); }

}  // namespace
}  // namespace perseus::profiling
