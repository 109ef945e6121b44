// perseus.load_profile / build_problem / solve_frontier / ...: the offline
// optimizer, for choosing plans from Python.
#include <pybind11/stl.h>

#include "bindings.h"
#include "common/strings.h"
#include "perseus/frontier_io.h"
#include "perseus/optimizer.h"
#include "perseus/problem.h"
#include "perseus/profile.h"

namespace perseus::python {

namespace {

using ProblemPtr = std::shared_ptr<Problem>;

ProblemPtr MakeProblem(const Profile& profile, const std::string& schedule, int stages, int microbatches,
                       int chunks, double blocking_power_w, int gpus_per_stage) {
  ProblemSpec spec;
  spec.schedule.kind = Unwrap(ParseScheduleKind(schedule));
  spec.schedule.stages = stages > 0 ? stages : profile.num_stages();
  spec.schedule.microbatches = microbatches;
  spec.schedule.chunks = chunks;
  spec.blocking_power_w = blocking_power_w;
  spec.gpus_per_stage = gpus_per_stage;
  return std::make_shared<Problem>(Unwrap(BuildProblem(profile, spec)));
}

// [stage] -> [(instruction, microbatch, sm_clock_mhz)] in execution order.
// A plan must have one valid option index per computation (ValueError otherwise).
void CheckChoice(const Problem& problem, const PlanChoice& choice) {
  Status valid = ValidatePlan(problem, choice);
  if (!valid.ok()) throw py::value_error(valid.message());
}

py::list StagePlans(const Problem& problem, const PlanChoice& choice) {
  CheckChoice(problem, choice);
  // PlanByStage is the one per-stage list (plans.json and the server's rank
  // plans use it too); with model chunks each entry also names its chunk.
  const bool chunked = problem.schedule.spec.chunks > 1;
  py::list stages;
  for (const std::vector<PlannedComputation>& stage : PlanByStage(problem, choice)) {
    py::list steps;
    for (const PlannedComputation& c : stage) {
      if (chunked) {
        steps.append(py::make_tuple(InstructionName(c.instruction), c.microbatch, c.freq_mhz, c.chunk));
      } else {
        steps.append(py::make_tuple(InstructionName(c.instruction), c.microbatch, c.freq_mhz));
      }
    }
    stages.append(steps);
  }
  return stages;
}

}  // namespace

void BindOptimizer(py::module_& m) {
  py::class_<FreqPoint>(m, "FreqPoint", "One SM clock of a computation: its time and energy there.")
      .def_readonly("freq_mhz", &FreqPoint::freq_mhz, "SM clock (MHz).")
      .def_readonly("time_s", &FreqPoint::time_s, "Time of the computation at this clock (s).")
      .def_readonly("energy_j", &FreqPoint::energy_j, "Energy of the computation at this clock (J).")
      .def("__repr__", [](const FreqPoint& p) {
        return Format("FreqPoint(freq_mhz=%d, time_s=%.9g, energy_j=%.9g)", p.freq_mhz, p.time_s, p.energy_j);
      });

  py::class_<Profile>(m, "Profile", "Measured time and energy per stage, instruction and SM clock.")
      .def_property_readonly("num_stages", &Profile::num_stages, "Pipeline stages the profile covers.")
      .def("points", [](const Profile& p, int stage, const std::string& instruction) {
        if (stage < 0 || stage >= p.num_stages()) {
          throw py::index_error(Format("stage: expected 0 to %d (the profile has %d stages), got %d", p.num_stages() - 1,
                                       p.num_stages(), stage));
        }
        Result<Instruction> ins = ParseInstruction(instruction);
        if (!ins.ok()) throw py::value_error("instruction: " + ins.status().message());
        return p.stages[stage].at(*ins);
      }, py::arg("stage"), py::arg("instruction"),
      "The FreqPoints (one per SM clock) of `stage`'s 'forward', 'backward', 'backward_input' or\n"
      "'backward_weight' (the split halves are empty unless the profile lists them).")
      .def("to_csv", &ProfileToCsv, "The profile as Zeus-format CSV text (load_profile reads it back).");

  m.def("load_profile", [](const std::string& path, int stages) { return Unwrap(LoadProfileCsv(path, stages)); },
        py::arg("path"), py::arg("stages") = 0,
        "Reads a Zeus-format profile CSV (docs/formats.md). stages > 0 checks the stage count;\n"
        "errors name the file and line (ValueError) or the I/O failure (OSError).");
  m.def("parse_profile_csv",
        [](const std::string& text, const std::string& source, int stages) {
          return Unwrap(ParseProfileCsv(text, source, stages));
        },
        py::arg("text"), py::arg("source") = "<string>", py::arg("stages") = 0,
        "Parses Zeus-format profile CSV text; `source` names it in errors.");

  py::class_<ProblemNode>(m, "Computation", "One computation of an iteration: a node of the problem's DAG.")
      .def_readonly("stage", &ProblemNode::stage, "GPU (pipeline stage) that runs it.")
      .def_property_readonly("instruction", [](const ProblemNode& n) { return InstructionName(n.comp.instruction); },
                             "'forward', 'backward', 'backward_input' or 'backward_weight'.")
      .def_property_readonly("microbatch", [](const ProblemNode& n) { return n.comp.microbatch; }, "Microbatch.")
      .def_property_readonly("chunk", [](const ProblemNode& n) { return n.comp.chunk; }, "Model chunk on its GPU.")
      .def_readonly("position", &ProblemNode::position, "Index in its GPU's execution order.")
      .def_readonly("options", &ProblemNode::options,
                    "Its clocks, highest first, with time and energy (x gpus_per_stage); a plan's choice indexes these.")
      .def_readonly("succs", &ProblemNode::succs, "Computations that wait for it (indices into Problem.computations).");
  py::class_<Problem, ProblemPtr>(m, "Problem", "One iteration's computation DAG with time/energy options.")
      .def_property_readonly("computations", [](const Problem& p) { return p.nodes; },
                             "Every computation, in a topological order (a copy).")
      .def_property_readonly("num_stages", &Problem::num_stages, "Pipeline stages.")
      .def_property_readonly("num_nodes", &Problem::num_nodes, "Computations in one iteration (the length of a plan's choice).")
      .def_readonly("blocking_power_w", &Problem::blocking_power_w, "GPU power while blocked on communication (W).");
  m.def("build_problem", &MakeProblem, py::arg("profile"), py::arg("schedule") = "1f1b", py::arg("stages") = 0,
        py::arg("microbatches"), py::arg("chunks") = 1, py::arg("blocking_power_w") = 0.0,
        py::arg("gpus_per_stage") = 1,
        "One iteration's computation DAG: schedule '1f1b', 'gpipe', 'interleaved-1f1b' (chunks > 1),\n"
        "'zb-h1', 'dualpipev' or 'zb-v' (both chunks=2; all three need the profile's backward_input and\n"
        "backward_weight rows),\n"
        "`microbatches` per iteration, stages from the profile unless given.");

  py::class_<FrontierPlan>(m, "FrontierPlan", "One plan on the frontier: an SM clock per computation.")
      .def_readonly("time_s", &FrontierPlan::time_s, "Iteration time (s).")
      .def_readonly("energy_j", &FrontierPlan::energy_j, "Energy per iteration (J).")
      .def_readonly("lower_bound_j", &FrontierPlan::lower_bound_j,
                    "No plan of this time or less uses less energy (J); 0 when not computed.")
      .def_readonly("choice", &FrontierPlan::choice, "Per computation (problem node), the index of its FreqPoint.")
      .def("__repr__", [](const FrontierPlan& p) {
        return Format("FrontierPlan(time_s=%.9g, energy_j=%.9g)", p.time_s, p.energy_j);
      });
  py::class_<FrontierStats>(m, "FrontierStats", "How a frontier was solved, and whether its bound was checked.")
      .def_readonly("sweep_steps", &FrontierStats::sweep_steps, "Steps of the relaxation's sweep.")
      .def_readonly("candidate_plans", &FrontierStats::candidate_plans, "Plans made before the Pareto filter.")
      .def_readonly("solve_s", &FrontierStats::solve_s, "Wall time of the sweep and the plans (s).")
      .def_readonly("plans_s", &FrontierStats::plans_s, "Of solve_s, the plans made after the sweep (s).")
      .def_readonly("plan_threads", &FrontierStats::plan_threads, "Threads the plans were made on.")
      .def_readonly("plans_during_sweep", &FrontierStats::plans_during_sweep,
                    "Of candidate_plans, those made while the sweep ran (on plan_threads - 1 threads).")
      .def_readonly("lower_bound_s", &FrontierStats::lower_bound_s, "Time the lower bound's check took (s).")
      .def_readonly("lower_bound_checked", &FrontierStats::lower_bound_checked,
                    "The bound was certified (dual certificate or min-cost-flow solves agreed).")
      .def_readonly("lower_bound_max_error", &FrontierStats::lower_bound_max_error,
                    "Largest relative difference the check saw.")
      .def_readonly("clock_limit_s", &FrontierStats::clock_limit_s, "Time max_clock_changes_per_gpu took (s).")
      .def_readonly("sweep_complete", &FrontierStats::sweep_complete,
                    "The sweep reached the fastest possible time (False: plans faster than the first may be missing).")
      .def("__repr__", [](const FrontierStats& s) {
        return Format("FrontierStats(sweep_steps=%d, candidate_plans=%d, solve_s=%.3f, lower_bound_checked=%s)",
                      s.sweep_steps, s.candidate_plans, s.solve_s, s.lower_bound_checked ? "True" : "False");
      });
  py::class_<Frontier>(m, "Frontier", "Pareto-optimal plans, time ascending, energy descending.")
      .def_readonly("all_max", &Frontier::all_max, "Every computation at the maximum clock (the baseline).")
      .def_readonly("plans", &Frontier::plans, "The frontier's plans, time ascending.")
      .def_readonly("stats", &Frontier::stats, "How it was solved (FrontierStats).")
      .def("plan_for_time", &Frontier::PlanForTime, py::arg("time_s"), py::return_value_policy::reference_internal,
           "The least-energy plan whose time is <= time_s, or None.")
      .def("no_slowdown_plan", &Frontier::NoSlowdownPlan, py::return_value_policy::reference_internal,
           "The least-energy plan no slower than all_max (every computation at the maximum clock).")
      .def("min_energy_plan", &Frontier::MinEnergyPlan, py::return_value_policy::reference_internal,
           "The plan with the least energy (the slowest).");
  m.def("solve_frontier",
        [](const ProblemPtr& problem, double unit_time_s, int lower_bound_samples, int max_clock_changes_per_gpu,
           int threads, int max_plans) {
          FrontierOptions o;
          o.unit_time_s = unit_time_s;
          o.lower_bound_samples = lower_bound_samples;
          o.max_clock_changes_per_gpu = max_clock_changes_per_gpu;
          o.threads = threads;
          o.max_plans = max_plans;
          py::gil_scoped_release release;
          return Unwrap(SolveFrontier(*problem, o));
        },
        py::arg("problem"), py::arg("unit_time_s") = 1e-3, py::arg("lower_bound_samples") = -1,
        py::arg("max_clock_changes_per_gpu") = -1, py::arg("threads") = 0, py::arg("max_plans") = 0,
        "The iteration time-energy Pareto frontier of `problem` (releases the GIL while it runs).\n"
        "unit_time_s: the time quantum; lower_bound_samples: times at which the lower bound is solved\n"
        "again as a min-cost flow (-1: the default, a dual-flow certificate at the all-max time; 0: no\n"
        "check); max_clock_changes_per_gpu: at most this many clock\n"
        "changes per GPU per iteration in every plan (-1: no limit); threads: threads that make the\n"
        "discrete plans, all but one beside the sweep (0: every CPU this process may run on; the plans\n"
        "are the same for any count);\n"
        "max_plans: make plans at no more than about this many evenly spaced times (0: every unit time).");
  m.def("clock_changes_per_gpu",
        [](const ProblemPtr& problem, const PlanChoice& choice) {
          CheckChoice(*problem, choice);
          return ClockChangesPerGpu(*problem, choice);
        },
        py::arg("problem"), py::arg("choice"),
        "Clock changes per GPU in one iteration of the plan (the last computation to the next iteration's first counts).");
  m.def("evaluate_plan",
        [](const ProblemPtr& problem, const PlanChoice& choice) {
          CheckChoice(*problem, choice);
          PlanCost c = EvaluatePlan(*problem, choice);
          return py::make_tuple(c.time_s, c.energy_j);
        },
        py::arg("problem"), py::arg("choice"), "(time_s, energy_j) of a plan replayed on the profile.");
  m.def("stage_plans", [](const ProblemPtr& p, const FrontierPlan& plan) { return StagePlans(*p, plan.choice); },
        py::arg("problem"), py::arg("plan"),
        "Per stage, the (instruction, microbatch, sm_clock_mhz) list a GPU runs under `plan`, in execution\n"
        "order; with model chunks (interleaved-1f1b, dualpipev, zb-v) each entry ends with its chunk.");
}

}  // namespace perseus::python
