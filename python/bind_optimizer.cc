// perseus.load_profile / build_problem / solve_frontier / ...: the offline
// optimizer, for choosing plans from Python.
#include <pybind11/stl.h>

#include "bindings.h"
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
py::list StagePlans(const Problem& problem, const PlanChoice& choice) {
  if (static_cast<int>(choice.size()) != problem.num_nodes()) {
    throw py::value_error("plan has " + std::to_string(choice.size()) + " choices for " +
                          std::to_string(problem.num_nodes()) + " computations");
  }
  py::list stages;
  for (int s = 0; s < problem.num_stages(); ++s) {
    py::list steps;
    for (int id : problem.gpu_order[s]) {
      const ProblemNode& n = problem.nodes[id];
      if (choice[id] < 0 || choice[id] >= static_cast<int>(n.options.size())) {
        throw py::value_error("plan: computation " + std::to_string(id) + ": option out of range");
      }
      steps.append(py::make_tuple(InstructionName(n.comp.instruction), n.comp.microbatch,
                                  n.options[choice[id]].freq_mhz));
    }
    stages.append(steps);
  }
  return stages;
}

}  // namespace

void BindOptimizer(py::module_& m) {
  py::class_<FreqPoint>(m, "FreqPoint")
      .def_readonly("freq_mhz", &FreqPoint::freq_mhz)
      .def_readonly("time_s", &FreqPoint::time_s)
      .def_readonly("energy_j", &FreqPoint::energy_j)
      .def("__repr__", [](const FreqPoint& p) {
        return "FreqPoint(freq_mhz=" + std::to_string(p.freq_mhz) + ", time_s=" + std::to_string(p.time_s) +
               ", energy_j=" + std::to_string(p.energy_j) + ")";
      });

  py::class_<Profile>(m, "Profile", "Measured time and energy per stage, instruction and SM clock.")
      .def_property_readonly("num_stages", &Profile::num_stages)
      .def("points", [](const Profile& p, int stage, const std::string& instruction) {
        if (stage < 0 || stage >= p.num_stages()) throw py::index_error("stage " + std::to_string(stage));
        if (instruction != "forward" && instruction != "backward") {
          throw py::value_error("instruction: expected 'forward' or 'backward', got '" + instruction + "'");
        }
        return p.stages[stage].at(instruction == "forward" ? Instruction::kForward : Instruction::kBackward);
      }, py::arg("stage"), py::arg("instruction"))
      .def("to_csv", &ProfileToCsv);

  m.def("load_profile", [](const std::string& path, int stages) { return Unwrap(LoadProfileCsv(path, stages)); },
        py::arg("path"), py::arg("stages") = 0, "Reads a Zeus-format profile CSV.");
  m.def("parse_profile_csv",
        [](const std::string& text, const std::string& source, int stages) {
          return Unwrap(ParseProfileCsv(text, source, stages));
        },
        py::arg("text"), py::arg("source") = "<string>", py::arg("stages") = 0);

  py::class_<Problem, ProblemPtr>(m, "Problem", "One iteration's computation DAG with time/energy options.")
      .def_property_readonly("num_stages", &Problem::num_stages)
      .def_property_readonly("num_nodes", &Problem::num_nodes)
      .def_readonly("blocking_power_w", &Problem::blocking_power_w);
  m.def("build_problem", &MakeProblem, py::arg("profile"), py::arg("schedule") = "1f1b", py::arg("stages") = 0,
        py::arg("microbatches"), py::arg("chunks") = 1, py::arg("blocking_power_w") = 0.0,
        py::arg("gpus_per_stage") = 1);

  py::class_<FrontierPlan>(m, "FrontierPlan")
      .def_readonly("time_s", &FrontierPlan::time_s)
      .def_readonly("energy_j", &FrontierPlan::energy_j)
      .def_readonly("lower_bound_j", &FrontierPlan::lower_bound_j)
      .def_readonly("choice", &FrontierPlan::choice)
      .def("__repr__", [](const FrontierPlan& p) {
        return "FrontierPlan(time_s=" + std::to_string(p.time_s) + ", energy_j=" + std::to_string(p.energy_j) + ")";
      });
  py::class_<Frontier>(m, "Frontier", "Pareto-optimal plans, time ascending, energy descending.")
      .def_readonly("all_max", &Frontier::all_max)
      .def_readonly("plans", &Frontier::plans)
      .def("plan_for_time", &Frontier::PlanForTime, py::arg("time_s"), py::return_value_policy::reference_internal,
           "The least-energy plan whose time is <= time_s, or None.")
      .def("no_slowdown_plan", &Frontier::NoSlowdownPlan, py::return_value_policy::reference_internal)
      .def("min_energy_plan", &Frontier::MinEnergyPlan, py::return_value_policy::reference_internal);
  m.def("solve_frontier",
        [](const ProblemPtr& problem, double unit_time_s, int lower_bound_samples) {
          FrontierOptions o;
          o.unit_time_s = unit_time_s;
          o.lower_bound_samples = lower_bound_samples;
          py::gil_scoped_release release;
          return Unwrap(SolveFrontier(*problem, o));
        },
        py::arg("problem"), py::arg("unit_time_s") = 1e-3, py::arg("lower_bound_samples") = -1);
  m.def("evaluate_plan",
        [](const ProblemPtr& problem, const PlanChoice& choice) {
          if (static_cast<int>(choice.size()) != problem->num_nodes()) throw py::value_error("plan: wrong length");
          PlanCost c = EvaluatePlan(*problem, choice);
          return py::make_tuple(c.time_s, c.energy_j);
        },
        py::arg("problem"), py::arg("choice"), "(time_s, energy_j) of a plan replayed on the profile.");
  m.def("stage_plans", [](const ProblemPtr& p, const FrontierPlan& plan) { return StagePlans(*p, plan.choice); },
        py::arg("problem"), py::arg("plan"),
        "Per stage, the (instruction, microbatch, sm_clock_mhz) list a GPU runs under `plan`.");
}

}  // namespace perseus::python
