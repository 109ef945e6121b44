// --straggler and --throttle parsing, with the exact error texts.
#include <gtest/gtest.h>

#include "perseus/emulator.h"

namespace perseus {
namespace {

TEST(ParseStragglerFlag, BareFactorSlowsPipelineZeroForever) {
  Result<SlowPipelineEvent> e = ParseStragglerFlag("1.2");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_DOUBLE_EQ(e->factor, 1.2);
  EXPECT_EQ(e->first_pipeline, 0);
  EXPECT_EQ(e->last_pipeline, 0);
  EXPECT_EQ(e->start_iteration, 0);
  EXPECT_EQ(e->end_iteration, -1);
}

TEST(ParseStragglerFlag, KeyValueForm) {
  Result<SlowPipelineEvent> e = ParseStragglerFlag("factor=1.5,pipelines=2-5,iterations=10-20");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_DOUBLE_EQ(e->factor, 1.5);
  EXPECT_EQ(e->first_pipeline, 2);
  EXPECT_EQ(e->last_pipeline, 5);
  EXPECT_EQ(e->start_iteration, 10);
  EXPECT_EQ(e->end_iteration, 20);
  Result<SlowPipelineEvent> open = ParseStragglerFlag("factor=1.1,pipeline=7,iterations=30-");
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->first_pipeline, 7);
  EXPECT_EQ(open->last_pipeline, 7);
  EXPECT_EQ(open->start_iteration, 30);
  EXPECT_EQ(open->end_iteration, -1);
}

TEST(ParseStragglerFlag, ErrorsQuoteTheFlagAndTheValue) {
  EXPECT_EQ(ParseStragglerFlag("abc").status().message(),
            "--straggler 'abc': factor: expected a number in [1, 100], got 'abc'");
  EXPECT_EQ(ParseStragglerFlag("0.5").status().message(),
            "--straggler '0.5': factor: expected a number in [1, 100], got '0.5'");
  EXPECT_EQ(ParseStragglerFlag("pipelines=1").status().message(), "--straggler 'pipelines=1': missing key 'factor'");
  EXPECT_EQ(ParseStragglerFlag("factor=1.2,speed=3").status().message(),
            "--straggler 'factor=1.2,speed=3': unknown key 'speed' (known: factor, iterations, pipeline, pipelines)");
  EXPECT_EQ(ParseStragglerFlag("factor=1.2,iterations=20-10").status().message(),
            "--straggler 'factor=1.2,iterations=20-10': iterations: expected START-END with END > START (END "
            "excluded) or START-, got '20-10'");
  EXPECT_EQ(ParseStragglerFlag("factor=1.2,pipelines=5-2").status().message(),
            "--straggler 'factor=1.2,pipelines=5-2': pipelines: expected P or FIRST-LAST, got '5-2'");
  EXPECT_EQ(ParseStragglerFlag("factor=1.2,factor=1.3").status().message(),
            "--straggler 'factor=1.2,factor=1.3': key 'factor' given twice");
  EXPECT_EQ(ParseStragglerFlag("factor=1.2,").status().message(),
            "--straggler 'factor=1.2,': expected key=value, got ''");
}

TEST(ParseThrottleFlag, AllKeys) {
  Result<GpuCapEvent> e = ParseThrottleFlag("pipeline=3,stage=5,gpu=2,freq=1100,iterations=10-20");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->pipeline, 3);
  EXPECT_EQ(e->stage, 5);
  EXPECT_EQ(e->gpu, 2);
  EXPECT_EQ(e->max_freq_mhz, 1100);
  EXPECT_EQ(e->start_iteration, 10);
  EXPECT_EQ(e->end_iteration, 20);
}

TEST(ParseThrottleFlag, PipelineAndGpuDefaultToZero) {
  Result<GpuCapEvent> e = ParseThrottleFlag("stage=1,freq=900");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->pipeline, 0);
  EXPECT_EQ(e->gpu, 0);
  EXPECT_EQ(e->end_iteration, -1);
}

TEST(ParseThrottleFlag, Errors) {
  EXPECT_EQ(ParseThrottleFlag("freq=900").status().message(), "--throttle 'freq=900': missing key 'stage'");
  EXPECT_EQ(ParseThrottleFlag("stage=1").status().message(), "--throttle 'stage=1': missing key 'freq'");
  EXPECT_EQ(ParseThrottleFlag("stage=-1,freq=900").status().message(),
            "--throttle 'stage=-1,freq=900': stage: expected a non-negative integer, got '-1'");
  EXPECT_EQ(ParseThrottleFlag("stage=1,freq=0").status().message(),
            "--throttle 'stage=1,freq=0': freq: expected a positive clock in MHz");
  EXPECT_EQ(ParseThrottleFlag("1100").status().message(), "--throttle '1100': expected key=value, got '1100'");
}

}  // namespace
}  // namespace perseus
