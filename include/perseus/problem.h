// The optimisation problem: one training iteration's computation DAG, the
// time/energy options of every computation, and the energy model.
//
// Nodes are computations; arcs are pipeline dependencies (forward(s,m) ->
// forward(s+1,m), backward(s+1,m) -> backward(s,m), forward(last,m) ->
// backward(last,m); with a split backward its input half carries the
// gradient on and its weight half follows its input half) and each GPU's
// execution order. Iteration time T is the
// longest path; energy is
//     E = sum_i e_i + P_block * (S * T - sum_i t_i)
// (a GPU that is not computing draws blocking power until the iteration ends),
// all multiplied by gpus_per_stage for tensor parallelism.
// A Problem is immutable once built and safe to share between threads.
#pragma once

#include <string>
#include <vector>

#include "perseus/profile.h"
#include "perseus/schedule.h"
#include "perseus/status.h"

namespace perseus {

struct ProblemNode {
  int stage = 0;          // GPU (pipeline stage) that runs it
  int virtual_stage = 0;  // position along the model: ScheduleSpec::VirtualStage(stage, chunk)
  Computation comp;
  int position = 0;                // index in its GPU's execution order
  std::vector<FreqPoint> options;  // highest frequency first; energy already x gpus_per_stage
  std::vector<int> preds, succs;   // node ids
};

struct Problem {
  Schedule schedule;
  double blocking_power_w = 0;  // per stage, already x gpus_per_stage
  int gpus_per_stage = 1;
  std::vector<ProblemNode> nodes;            // in a topological order
  std::vector<std::vector<int>> gpu_order;   // [stage] -> node ids in execution order
  int num_stages() const { return schedule.spec.stages; }
  int num_nodes() const { return static_cast<int>(nodes.size()); }
  // What the whole pipeline draws while none of its GPUs computes.
  double pipeline_blocking_power_w() const { return blocking_power_w * num_stages(); }
};

struct ProblemSpec {
  ScheduleSpec schedule;
  double blocking_power_w = 0;  // per GPU, watts
  int gpus_per_stage = 1;
};

// Builds the DAG. The profile must list either `stages` stages or, for the
// interleaved schedule, `stages * chunks` virtual stages; with only `stages`
// stages each chunk takes 1/chunks of the stage's time and energy.
Result<Problem> BuildProblem(const Profile& profile, const ProblemSpec& spec);

// A plan: for every node (by id), the index into its options.
using PlanChoice = std::vector<int>;

// Ok when `choice` has one option index per node, each within the node's
// options; otherwise InvalidArgument naming the first bad entry ("plan:
// computation 12 (backward of microbatch 3, stage 1): option 9 out of range (7 options)"). Every
// reader of a plan from outside the optimizer (plans.json, the server's
// stored frontier, Python) checks with this before indexing options.
Status ValidatePlan(const Problem& problem, const PlanChoice& choice);

struct PlanCost {
  double time_s = 0;
  double energy_j = 0;
};

// Replays a plan on the real option values: iteration time is the longest
// path, energy follows the model above. Shares no code with the solver.
PlanCost EvaluatePlan(const Problem& problem, const PlanChoice& choice);
// Start time of every node when each starts as early as possible.
std::vector<double> EarliestStarts(const Problem& problem, const PlanChoice& choice);

// Node `i`'s time and energy on a GPU whose clock changes take effect
// `clock_latency_s` after the computation that needs them starts (the lock
// call is made at its start): it runs its first clock_latency_s at the
// previous computation's clock (on its GPU, the last one of the iteration for
// the first), so with work W = t_new * f_new it lasts
// t_new + L (1 - f_old / f_new) (or W / f_old when it ends within the latency),
// drawing the previous option's power meanwhile. The planned option when the
// clock does not change or the latency is 0. An approximation when the latency
// spans several computations (the previous one is taken to have reached its
// clock).
FreqPoint OptionWithClockLatency(const Problem& problem, const PlanChoice& choice, int i, double clock_latency_s);
// EvaluatePlan with every computation's time and energy from
// OptionWithClockLatency: what the plan costs on GPUs with slow clock
// switches. Equals EvaluatePlan at latency 0.
PlanCost EvaluatePlanWithClockLatency(const Problem& problem, const PlanChoice& choice, double clock_latency_s);
// The plan that runs every computation at its highest listed frequency.
PlanChoice AllMaxPlan(const Problem& problem);
// `choice` with every computation's clock held at most `ceiling_mhz`: a
// computation above it runs at its highest option at or below it (its lowest
// when it has none). Slower than `choice` and, past the minimum-energy plan,
// costlier in energy but lower in power: what a deep power cap runs.
PlanChoice WithClockCeiling(const Problem& problem, const PlanChoice& choice, int ceiling_mhz);

// How often each GPU changes its SM clock in one iteration of steady
// training: between consecutive computations, and from the last computation
// to the next iteration's first. Each change is a lock call that takes
// effect after a delay (NCCL is known to stall when clocks change often).
std::vector<int> ClockChangesPerGpu(const Problem& problem, const PlanChoice& choice);

}  // namespace perseus
