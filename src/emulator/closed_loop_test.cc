// The closed loop: with every part made ideal it is the idealised policy;
// each part costs what it should; accounting identities; clock latency.
#include <gtest/gtest.h>


#include "emulator/pipeline_run.h"
#include "emulator/test_job.h"
#include "perseus/emulator.h"
#include "perseus/gpu_model.h"
#include "perseus/optimizer.h"
#include "control/power_cap.h"

namespace perseus {
namespace {

using emulator::ExampleSpec;
using emulator::FindPolicy;
using emulator::SmallSpec;
using emulator::Sum;

// Everything ideal: no profiling, no optimisation time, no latency, no noise.
ClosedLoopOptions Ideal() {
  ClosedLoopOptions o;
  o.enabled = true;
  o.profiling_s = 0;
  o.optimization_s = 0;
  o.plan_delivery_s = 0;
  o.clock_latency_s = 0;
  o.iteration_jitter = 0;
  return o;
}

TEST(ClosedLoop, WithEverythingIdealAndNoStragglerItIsTheIdealisedPolicy) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 6, 50);
  spec.closed_loop = Ideal();
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->closed_loop.has_value());
  const PolicyResult& ideal = FindPolicy(*r, "perseus");
  const PolicyResult& loop = FindPolicy(*r, "perseus-closed-loop");
  EXPECT_NEAR(loop.total_energy_j, ideal.total_energy_j, 1e-9 * ideal.total_energy_j);
  EXPECT_NEAR(loop.total_time_s, ideal.total_time_s, 1e-9 * ideal.total_time_s);
  EXPECT_EQ(r->closed_loop->off_ideal_iterations, 0);
  EXPECT_EQ(r->closed_loop->detections, 0);
  EXPECT_EQ(r->closed_loop->plan_switches, 6);  // every pipeline once, from all-max to its plan
  // Per-GPU and per-pipeline energies add up to the total.
  EXPECT_NEAR(Sum(loop.energy_per_gpu_j), loop.total_energy_j, 1e-6 * loop.total_energy_j);
  EXPECT_NEAR(Sum(loop.energy_per_pipeline_j), loop.total_energy_j, 1e-6 * loop.total_energy_j);
}

TEST(ClosedLoop, AStragglerIsDetectedAfterItsWindowAndOthersFollowIt) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 6, 60);
  spec.stragglers.push_back({1.3, 2, 2, 20, 40});
  spec.closed_loop = Ideal();
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClosedLoopReport& c = *r->closed_loop;
  EXPECT_EQ(c.detections, 2);  // found, then recovered
  // The median of the last 5 iterations moves after 3 of them: the straggler
  // is found on its third iteration and its recovery on the third after it,
  // each acted on from the next iteration (delivery is instant here).
  EXPECT_EQ(c.off_ideal_iterations, 2 * 3);
  const PolicyResult& ideal = FindPolicy(*r, "perseus");
  EXPECT_LT(c.result.savings_vs_allmax, ideal.savings_vs_allmax);  // the delay costs something
  EXPECT_GT(c.result.savings_vs_allmax, FindPolicy(*r, "perseus-intrinsic").savings_vs_allmax - 0.01);
}

TEST(ClosedLoop, ProfilingRunsAtItsMeasuredFactorsOfAllMax) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 3, 40);
  spec.closed_loop = Ideal();
  spec.closed_loop.profiling_s = 1e6;  // longer than the emulation: profiling throughout
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const PolicyResult& allmax = FindPolicy(*r, "allmax");
  const PolicyResult& loop = FindPolicy(*r, "perseus-closed-loop");
  EXPECT_EQ(r->closed_loop->profiling_iterations, 40);
  EXPECT_NEAR(loop.total_time_s, allmax.total_time_s * 1.20, 1e-9 * allmax.total_time_s);
  EXPECT_NEAR(loop.total_energy_j, allmax.total_energy_j * 0.91, 1e-9 * allmax.total_energy_j);
  EXPECT_NEAR(Sum(loop.energy_per_gpu_j), loop.total_energy_j, 1e-6 * loop.total_energy_j);
}

TEST(ClosedLoop, EachRealisticPartCostsAndTheAblationsShowIt) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 6, 400);
  spec.stragglers.push_back({1.2, 1, 1, 100, 200});
  spec.closed_loop.enabled = true;
  Result<EmulationResult> probe = Emulate(SmallSpec(4, 8, 1, 6, 1));
  ASSERT_TRUE(probe.ok());
  const double iteration_s = FindPolicy(*probe, "allmax").iteration_time_s;
  spec.closed_loop.profiling_s = 10 * iteration_s;  // a few iterations of the small job
  spec.closed_loop.optimization_s = 5 * iteration_s;
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClosedLoopReport& c = *r->closed_loop;
  EXPECT_GT(c.profiling_iterations, 0);
  EXPECT_GT(c.optimizing_iterations, 0);
  EXPECT_GT(c.clock_changes_per_gpu_iteration, 1);
  // Profiling lengthens the job; a clock latency slows speed-ups down.
  EXPECT_GT(c.result.slowdown_vs_allmax, c.without_profiling.slowdown_vs_allmax);
  EXPECT_GT(c.result.slowdown_vs_allmax, c.without_clock_latency.slowdown_vs_allmax);
  // Deterministic for a seed.
  Result<EmulationResult> again = Emulate(spec);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->closed_loop->result.total_energy_j, c.result.total_energy_j);
}

TEST(ClosedLoop, ProfilingLastsTheServersSweepByDefault) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 3, 200);
  spec.closed_loop.enabled = true;  // profiling_s -1: the sweep
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClosedLoopReport& c = *r->closed_loop;
  // SmallProfile has 4 clocks per stage: the base design's windows, each a
  // warm-up, two measured iterations and one for the switch, at 1.2x all-max.
  ASSERT_GT(c.profiling_windows, 4);
  const double allmax_s = FindPolicy(*r, "allmax").iteration_time_s;
  EXPECT_NEAR(c.profiling_s, c.profiling_windows * 4 * allmax_s * 1.2, 1e-9 * c.profiling_s);
  EXPECT_EQ(c.profiling_iterations, c.profiling_windows * 4);
}

TEST(ClosedLoop, BadOptionsNameTheirFlag) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 3, 10);
  spec.closed_loop.enabled = true;
  spec.closed_loop.plan_delivery_s = -1;
  EXPECT_EQ(Emulate(spec).status().message(), "--plan-delivery-s: expected seconds in [0, 1e5]");
  spec.closed_loop.plan_delivery_s = 0.2;
  spec.closed_loop.iteration_jitter = 2;
  EXPECT_EQ(Emulate(spec).status().message(), "--iteration-jitter: expected a fraction in [0, 1]");
}

// A computation whose clock rises runs its first `latency` at the old clock.
TEST(ClockLatency, AComputationStartsAtThePreviousClock) {
  Problem problem = emulator::SmallProblem(2, 2, 1);
  PlanChoice plan = AllMaxPlan(problem);
  // Stage 0's second computation (position 1) at the lowest clock: two changes on that GPU.
  int slow = -1, next = -1;
  for (int i = 0; i < problem.num_nodes(); ++i) {
    if (problem.nodes[i].stage == 0 && problem.nodes[i].position == 1) slow = i;
    if (problem.nodes[i].stage == 0 && problem.nodes[i].position == 2) next = i;
  }
  ASSERT_GE(slow, 0);
  ASSERT_GE(next, 0);
  plan[slow] = static_cast<int>(problem.nodes[slow].options.size()) - 1;
  const emulator::PipelineRun at_once = emulator::RunPipeline(problem, plan, {});
  const emulator::PipelineRun late = emulator::RunPipeline(problem, plan, {}, 0.002);
  const FreqPoint& lo = problem.nodes[slow].options.back();
  const FreqPoint& hi_next = problem.nodes[next].options.front();
  const FreqPoint& hi_slow = problem.nodes[slow].options.front();
  // Slowing down: the first 2 ms still run fast.
  const double ratio_down = static_cast<double>(hi_slow.freq_mhz) / lo.freq_mhz;
  EXPECT_NEAR(late.duration_s[slow], 0.002 + lo.time_s - 0.002 * ratio_down, 1e-12);
  // Speeding up again: the first 2 ms of the next computation still run slow.
  const double ratio_up = static_cast<double>(lo.freq_mhz) / hi_next.freq_mhz;
  EXPECT_NEAR(late.duration_s[next], 0.002 + hi_next.time_s - 0.002 * ratio_up, 1e-12);
  EXPECT_GT(late.duration_s[next], at_once.duration_s[next]);
  EXPECT_LT(late.duration_s[slow], at_once.duration_s[slow]);
}

// Under a power cap the loop runs the server's capped mix: every complete
// window within 1% of the cap, slower and cheaper than without it; a cap
// below the least power the frontier offers is reported as missed.
TEST(ClosedLoop, APowerCapHoldsInEveryWindow) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 4, 600);
  spec.closed_loop = Ideal();
  spec.closed_loop.clock_latency_s = 0.005;
  Result<EmulationResult> free = Emulate(spec);
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  const ClosedLoopReport& f = *free->closed_loop;
  EXPECT_EQ(f.cap_windows, 0);
  ASSERT_GT(f.running_power_w, 0);
  const double iteration_s = FindPolicy(*free, "allmax").iteration_time_s;
  spec.closed_loop.power_cap_window_s = std::max(1.0, 10 * iteration_s);
  spec.closed_loop.power_cap_w = 0.9 * f.running_power_w;
  Result<EmulationResult> capped = Emulate(spec);
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  const ClosedLoopReport& c = *capped->closed_loop;
  ASSERT_GT(c.cap_windows, 10);
  EXPECT_EQ(c.cap_windows_over, 0);
  EXPECT_LE(c.worst_window_power_w, spec.closed_loop.power_cap_w * 1.01);
  EXPECT_NEAR(c.running_power_w, spec.closed_loop.power_cap_w, 0.02 * spec.closed_loop.power_cap_w);
  EXPECT_GT(c.result.slowdown_vs_allmax, f.result.slowdown_vs_allmax + 0.01);
  // Below the frontier's least power: every window over, and the report says so.
  spec.closed_loop.power_cap_w = 0.3 * f.running_power_w;
  Result<EmulationResult> tight = Emulate(spec);
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->closed_loop->cap_windows_over, tight->closed_loop->cap_windows);
  spec.closed_loop.power_cap_window_s = 0.5;
  EXPECT_EQ(Emulate(spec).status().message(), "--power-cap-window-s: expected seconds in [1, 3600]");
}

// Below the frontier's least power the loop holds clocks lower, as the
// server does (the GPT-3 example: its frontier ends at ~66% of all-max power).
TEST(ClosedLoop, ACapBelowTheFrontiersLeastPowerIsMet) {
  EmulationSpec spec = ExampleSpec("gpt3-175b-a100", 4, 1500);
  spec.closed_loop.enabled = true;
  spec.closed_loop.profiling_s = 0;  // the first window is the cap's from its first iteration
  spec.closed_loop.optimization_s = 0;
  spec.closed_loop.plan_delivery_s = 0;
  Result<Problem> problem = BuildProblem(spec.profile, spec.problem);
  ASSERT_TRUE(problem.ok());
  Result<Frontier> f = SolveFrontier(*problem, FrontierOptions{});
  ASSERT_TRUE(f.ok());
  const double least_w =
      control::CapSettings(*f, problem->pipeline_blocking_power_w(), std::vector<double>(4, 1.0))
          .front()
          .power_w;
  spec.closed_loop.power_cap_w = 0.97 * least_w;
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClosedLoopReport& c = *r->closed_loop;
  ASSERT_GT(c.cap_windows, 50);
  EXPECT_EQ(c.cap_windows_over, 0);
  EXPECT_NEAR(c.running_power_w, 0.97 * least_w, 0.01 * least_w);
}

// The replay and the optimizer's check of slow switches share one model.
TEST(ClockLatency, TheReplayAndThePlanEvaluationAgree) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 1, 1);
  Result<Problem> problem = BuildProblem(spec.profile, spec.problem);
  ASSERT_TRUE(problem.ok());
  Result<Frontier> f = SolveFrontier(*problem, FrontierOptions{});
  ASSERT_TRUE(f.ok());
  for (const FrontierPlan& plan : f->plans) {
    const PlanCost nominal = EvaluatePlan(*problem, plan.choice);
    const PlanCost at_zero = EvaluatePlanWithClockLatency(*problem, plan.choice, 0);
    EXPECT_EQ(at_zero.time_s, nominal.time_s);
    EXPECT_EQ(at_zero.energy_j, nominal.energy_j);
    for (double latency_s : {0.001, 0.01, 0.1}) {
      const emulator::PipelineRun run = emulator::RunPipeline(*problem, plan.choice, {}, latency_s);
      const PlanCost late = EvaluatePlanWithClockLatency(*problem, plan.choice, latency_s);
      EXPECT_NEAR(late.time_s, run.time_s, 1e-12 * run.time_s);
      EXPECT_NEAR(late.energy_j, emulator::PipelineEnergyJ(run, run.time_s, problem->blocking_power_w),
                  1e-9 * late.energy_j);
    }
  }
}

// Switches slower than the computations: the closed loop limits clock
// changes as the server does, and the ablation shows what that recovers.
TEST(ClosedLoop, SlowSwitchesLimitClockChangesAsTheServerDoes) {
  EmulationSpec spec = SmallSpec(4, 8, 1, 4, 300);
  spec.closed_loop = Ideal();
  Result<EmulationResult> probe = Emulate(SmallSpec(4, 8, 1, 4, 1));
  ASSERT_TRUE(probe.ok());
  const double iteration_s = FindPolicy(*probe, "allmax").iteration_time_s;
  spec.closed_loop.clock_latency_s = iteration_s / 20;  // several computations long
  Result<EmulationResult> r = Emulate(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ClosedLoopReport& c = *r->closed_loop;
  ASSERT_GE(c.clock_change_limit, 0);
  ASSERT_TRUE(c.without_clock_change_limit.has_value());
  EXPECT_LE(c.clock_changes_per_gpu_iteration, c.clock_change_limit);
  EXPECT_LE(c.result.slowdown_vs_allmax, 0.005 + 1e-9);
  EXPECT_GT(c.without_clock_change_limit->slowdown_vs_allmax, c.result.slowdown_vs_allmax + 0.01);
  // The spec's own limit is kept, and fast switches are not limited.
  spec.max_clock_changes_per_gpu = 6;
  r = Emulate(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->closed_loop->clock_change_limit, 6);
  EXPECT_FALSE(r->closed_loop->without_clock_change_limit.has_value());
  EXPECT_LE(r->closed_loop->clock_changes_per_gpu_iteration, 6);
  // A spec naming the limit the latency chose runs the same plans: the runs
  // are moved, or not, as the chosen limit's were (until 2026-11-30 a spec's
  // limit always moved them, which late switches then delayed).
  spec.max_clock_changes_per_gpu = c.clock_change_limit;
  r = Emulate(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->closed_loop->clock_runs_moved, c.clock_runs_moved);
  EXPECT_EQ(r->closed_loop->result.savings_vs_allmax, c.result.savings_vs_allmax);
  EXPECT_EQ(r->closed_loop->result.slowdown_vs_allmax, c.result.slowdown_vs_allmax);

  spec.max_clock_changes_per_gpu = -1;
  spec.closed_loop.clock_latency_s = 0.005;
  r = Emulate(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->closed_loop->clock_change_limit, -1);
}

// A spec's limit under slow switches runs the plans the latency would choose
// for that limit. On the bundled GPT-3 175B job (8 x 12, 100 ms switches, as
// in docs/schedules.md) the limit chosen, 2, keeps its runs in place: moved,
// they spend the slack that absorbs the late switches. Until 2026-11-30 a
// spec's limit always moved them: 2.40% slower than all-max instead of 1.66%.
TEST(ClosedLoop, ASpecsLimitUnderSlowSwitchesRunsTheChosenLimitsPlans) {
  EmulationSpec spec = ExampleSpec("gpt3-175b-a100", 4, 300);
  spec.problem.schedule.stages = 8;
  spec.problem.schedule.microbatches = 12;
  spec.closed_loop = Ideal();
  spec.closed_loop.clock_latency_s = 0.1;
  Result<EmulationResult> chosen = Emulate(spec);
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  const ClosedLoopReport& c = *chosen->closed_loop;
  ASSERT_GE(c.clock_change_limit, 1);
  ASSERT_FALSE(c.clock_runs_moved) << "the case must keep its runs in place";
  spec.max_clock_changes_per_gpu = c.clock_change_limit;
  Result<EmulationResult> given = Emulate(spec);
  ASSERT_TRUE(given.ok());
  const ClosedLoopReport& g = *given->closed_loop;
  EXPECT_EQ(g.clock_change_limit, c.clock_change_limit);
  EXPECT_FALSE(g.clock_runs_moved);
  EXPECT_FALSE(g.without_clock_change_limit.has_value());  // the spec's, not chosen
  EXPECT_EQ(g.result.savings_vs_allmax, c.result.savings_vs_allmax);
  EXPECT_EQ(g.result.slowdown_vs_allmax, c.result.slowdown_vs_allmax);
  EXPECT_LE(g.clock_changes_per_gpu_iteration, c.clock_change_limit);
}

}  // namespace
}  // namespace perseus
