// report.md.
#include "emulator/report_markdown.h"

#include <cstdio>

#include "emulator/markdown.h"

namespace perseus::emulator {
namespace {

std::string Until(int end, int iterations) { return std::to_string((end < 0 ? iterations : end) - 1); }

std::string EventsText(const EmulationSpec& s) {
  std::string out;
  for (const SlowPipelineEvent& e : s.stragglers) {
    std::string who = e.first_pipeline == e.last_pipeline
                          ? "pipeline " + std::to_string(e.first_pipeline)
                          : "pipelines " + std::to_string(e.first_pipeline) + "-" + std::to_string(e.last_pipeline);
    out += (out.empty() ? "" : "; ") + who + " slowed x" + Fixed(e.factor, 3) + " in iterations " +
           std::to_string(e.start_iteration) + "-" + Until(e.end_iteration, s.iterations);
  }
  for (const GpuCapEvent& e : s.throttles) {
    out += (out.empty() ? "" : "; ") + std::string("pipeline ") + std::to_string(e.pipeline) + " stage " +
           std::to_string(e.stage) + " gpu " + std::to_string(e.gpu) + " capped at " + std::to_string(e.max_freq_mhz) +
           " MHz in iterations " + std::to_string(e.start_iteration) + "-" + Until(e.end_iteration, s.iterations);
  }
  return out.empty() ? "none" : out;
}

std::string JobSection(const EmulationResult& r) {
  const EmulationSpec& s = r.spec;
  MarkdownTable t({"Job", ""});
  t.AddRow({"Profile", "`" + s.job_name + "`"});
  t.AddRow({"Pipeline", std::to_string(r.stages) + " stages x " + std::to_string(r.microbatches) + " microbatches, " +
                            ScheduleName(s.problem.schedule.kind)});
  t.AddRow({"Data parallel", std::to_string(s.pipelines) + " pipelines"});
  t.AddRow({"GPUs", std::to_string(r.gpus_per_stage) + " per stage (tensor parallel), " + Thousands(r.total_gpus) +
                        " in total"});
  t.AddRow({"Blocking power", Fixed(s.problem.blocking_power_w, 2) + " W per GPU"});
  t.AddRow({"Profile scale", "time and energy x" + Fixed(s.profile_scale, 3)});
  t.AddRow({"Iterations", std::to_string(s.iterations)});
  t.AddRow({"Stragglers and throttling", EventsText(s)});
  t.AddRow({"Zeus slowdown budget", Percent(s.slowdown_budget, 1)});
  if (s.max_clock_changes_per_gpu >= 0) {
    t.AddRow({"Clock changes per GPU per iteration", "at most " + std::to_string(s.max_clock_changes_per_gpu)});
  }
  return "## Job\n\n" + t.Render();
}

std::string PoliciesSection(const EmulationResult& r) {
  MarkdownTable t(
      {"Policy", "Iteration time (s)", "Energy per iteration (MJ)", "Savings vs AllMax", "Slowdown vs AllMax"});
  for (const PolicyResult& p : r.policies) {
    t.AddRow({"`" + p.name + "`", Fixed(p.iteration_time_s, 4), Fixed(p.energy_per_iteration_j / 1e6, 4),
              Percent(p.savings_vs_allmax), Percent(p.slowdown_vs_allmax)});
  }
  std::string notes;
  for (const PolicyResult& p : r.policies) {
    if (p.name == "perseus" && p.lower_bound_energy_j > 0) {
      const double lb_j = p.lower_bound_energy_j / r.spec.iterations;
      t.AddRow({"ideal (lower bound)", Fixed(p.iteration_time_s, 4), Fixed(lb_j / 1e6, 4),
                Percent(1 - lb_j / r.policies.front().energy_per_iteration_j), Percent(p.slowdown_vs_allmax)});
    }
    notes += "- `" + p.name + "`: " + p.description + ".\n";
  }
  return "## Policies on the same job (all GPUs, mean per iteration)\n\n" + t.Render() + "\n" + notes +
         "\n![Policies on the time-energy plane](policies.svg)\n";
}

// How the closed loop's plans were limited (docs/schedules.md, "Clock changes").
std::string ClockChangeLimitLine(const ClosedLoopReport& c) {
  if (c.clock_change_limit < 0) return "";
  return "Clock changes: at most " + std::to_string(c.clock_change_limit) + " per GPU per iteration (" +
         (c.without_clock_change_limit ? "chosen for the clock latency" : "the spec's limit") + "), the limited plans' " +
         (c.clock_runs_moved ? "runs of one clock moved within each plan's time.\n"
                             : "runs of one clock left in place.\n");
}

std::string ClosedLoopSection(const EmulationResult& r) {
  if (!r.closed_loop) return "";
  const ClosedLoopReport& c = *r.closed_loop;
  const ClosedLoopOptions& o = r.spec.closed_loop;
  LoopFigures ideal;
  for (const PolicyResult& p : r.policies) {
    if (p.name == "perseus") ideal = {p.savings_vs_allmax, p.slowdown_vs_allmax};
  }
  MarkdownTable t({"", "Savings vs AllMax", "Slowdown vs AllMax"});
  auto row = [&t](const std::string& name, const LoopFigures& f) {
    t.AddRow({name, Percent(f.savings_vs_allmax), Percent(f.slowdown_vs_allmax)});
  };
  row("`perseus` (idealised: every decision instant and free)", ideal);
  row("`perseus-closed-loop` (as the server runs it)", {c.result.savings_vs_allmax, c.result.slowdown_vs_allmax});
  row("closed loop without the profiling and optimisation phases", c.without_profiling);
  row("closed loop with clock changes taking effect at once", c.without_clock_latency);
  row("closed loop with noise-free times and plans delivered at once", c.instant_detection);
  if (c.without_clock_change_limit) {
    row("closed loop without the automatic limit of " + std::to_string(c.clock_change_limit) +
            " clock changes per GPU per iteration",
        *c.without_clock_change_limit);
  }
  char buf[1200];
  std::snprintf(buf, sizeof buf,
                "Profiling %.0f s%s (%d iterations, time x%.2f, energy x%.2f over all-max), optimisation %.3g s (%d "
                "iterations at all-max); plan delivery %.3g s; clock latency %.3g ms; iteration-time noise %.2g%%; "
                "detection over %d iterations at threshold %.3g. While running: %d iterations with some pipeline "
                "on a plan more than 1%% off in time from the one the rule gives with the true slowdowns, %d detections, %d plan switches delivered, %.1f clock changes "
                "per GPU per iteration.\n",
                c.profiling_s, c.profiling_windows > 0 ? (", the server's sweep of " + std::to_string(c.profiling_windows) + " windows").c_str() : "",
                c.profiling_iterations, o.profiling_time_factor, o.profiling_energy_factor,
                c.optimization_s, c.optimizing_iterations, o.plan_delivery_s, 1000 * o.clock_latency_s,
                100 * o.iteration_jitter, o.detection_window, o.detection_threshold, c.off_ideal_iterations,
                c.detections, c.plan_switches, c.clock_changes_per_gpu_iteration);
  std::string cap;
  if (o.power_cap_w > 0) {
    char head[200], running[120], windows[300];
    std::snprintf(head, sizeof head, "\nPower cap %.0f W over %.0f s windows (the rows above run under it too): ",
                  o.power_cap_w, o.power_cap_window_s);
    if (c.running_power_w > 0) {
      std::snprintf(running, sizeof running, "running average %.0f W", c.running_power_w);
    } else {
      std::snprintf(running, sizeof running, "no iteration ran under a plan (the run ended before profiling did)");
    }
    if (c.cap_windows > 0) {
      std::snprintf(windows, sizeof windows, ", worst complete window %.0f W, %d of %d windows above the cap by more than 1%%.\n",
                    c.worst_window_power_w, c.cap_windows_over, c.cap_windows);
    } else {
      std::snprintf(windows, sizeof windows, "; no window ran long enough to judge (half a window at least): run more "
                                             "iterations or give a shorter --power-cap-window-s.\n");
    }
    cap = std::string(head) + running + windows;
  }
  return "## Closed loop\n\nPerseus as `perseus serve` runs it, in virtual time (docs/emulator.md, \"Closed "
         "loop\"), next to the idealised policy; each row below the second makes one part of the loop ideal.\n\n" +
         t.Render() + "\n" + buf + ClockChangeLimitLine(c) + cap;
}

std::string SweepSection(const EmulationResult& r) {
  if (r.sweep.empty()) return "";
  std::vector<std::string> header{"Straggler factor"};
  for (const auto& [name, s] : r.sweep.front().savings_vs_allmax) {
    if (name != "allmax") header.push_back("`" + name + "`");
  }
  header.push_back("ideal");
  MarkdownTable t(header);
  for (const SweepPoint& p : r.sweep) {
    std::vector<std::string> row{Fixed(p.factor, 2)};
    for (const auto& [name, s] : p.savings_vs_allmax) {
      if (name != "allmax") row.push_back(Percent(s));
    }
    row.push_back(p.lower_bound_savings > 0 ? Percent(p.lower_bound_savings) : "n/a");
    t.AddRow(row);
  }
  return "## Savings against the straggler factor\n\nOne iteration with pipeline 0 slowed by the factor (1.00: no "
         "straggler), savings of the whole job against AllMax with the same straggler.\n\n"
         "![Savings against straggler factor](savings_vs_straggler.svg)\n\n" +
         t.Render();
}

std::string FrontierSection(const EmulationResult& r) {
  const FrontierSummary& f = r.frontier;
  MarkdownTable t({"One pipeline, one iteration", "Time (s)", "Energy (J)", "Savings vs AllMax"});
  t.AddRow({"all-max", Fixed(f.all_max_time_s, 4), Fixed(f.all_max_energy_j, 1), Percent(0)});
  t.AddRow({"fastest frontier plan (intrinsic)", Fixed(f.fastest_time_s, 4), Fixed(f.fastest_energy_j, 1),
            Percent(1 - f.fastest_energy_j / f.all_max_energy_j)});
  t.AddRow({"minimum energy (T*)", Fixed(f.min_energy_time_s, 4), Fixed(f.min_energy_j, 1),
            Percent(1 - f.min_energy_j / f.all_max_energy_j)});
  char buf[160];
  std::snprintf(buf, sizeof buf, "\n%d Pareto-optimal plans, solved in %.2f s.\n", f.plans, f.solve_s);
  return "## Frontier of one pipeline\n\n" + t.Render() + buf;
}

std::string PlotsSection(const EmulationResult& r) {
  std::string out = "## Energy per GPU over iterations\n\n![Energy per GPU](energy_per_gpu.svg)\n\n";
  out += "Per-GPU totals for every policy are in `energy_per_gpu.csv`";
  out += r.total_gpus > 65536 ? " (not written: more than 65,536 GPUs).\n\n" : ".\n\n";
  out += "## Timeline of one pipeline\n\n";
  for (const PipelineTimeline& t : r.timelines) {
    out += "![" + t.title + "](timeline_" + t.policy + ".svg)\n\n";
  }
  return out;
}

}  // namespace

std::string DefinitionsMarkdown() {
  return "## Definitions\n\n"
         "- **Energy** of a GPU in an iteration: the profiled energy of its computations at their planned clocks "
         "plus blocking power for every other moment until the job's iteration ends (waiting inside the pipeline "
         "and at the data-parallel gradient synchronisation). Job energy sums all GPUs of all pipelines.\n"
         "- **Iteration time**: when the slowest pipeline finishes (the gradient synchronisation itself is not "
         "modelled).\n"
         "- **Savings vs AllMax** = 1 - E(policy) / E(AllMax), on the same job with the same stragglers; "
         "**slowdown** = T(policy) / T(AllMax) - 1.\n"
         "- **Intrinsic savings** (the paper's Table 6): the fastest frontier plan (least energy with no slowdown) "
         "against all-max, no straggler; identical for one pipeline and the whole job.\n"
         "- **Straggler** (the paper's model): a pipeline whose every computation takes `factor` times longer at "
         "unchanged power, so its time and energy grow by `factor`. Under every policy the straggler runs that "
         "policy's own plan, slowed. Perseus' other pipelines switch to the frontier plan with time "
         "min(T_straggler, T*).\n"
         "- **Throttled GPU**: one GPU whose SM clock is capped; its computations run at min(planned, cap) and the "
         "rest of its tensor-parallel group waits for it at blocking power.\n"
         "- **Ideal (lower bound)**: per pipeline, the frontier's certified lower bound at the time Perseus runs "
         "it (stretched for a straggler), plus blocking power to the end of the iteration; not computed with "
         "throttled GPUs.\n";
}

std::string EmulationMarkdown(const EmulationResult& r) {
  const PolicyResult* perseus = nullptr;
  for (const PolicyResult& p : r.policies) {
    if (p.name == "perseus") perseus = &p;
  }
  std::string out = "# Emulation: " + r.spec.job_name + "\n\n";
  if (perseus) {
    out += "Perseus uses **" + Percent(perseus->savings_vs_allmax) + " less energy** than AllMax on this " +
           Thousands(r.total_gpus) + "-GPU job, at " + Percent(perseus->slowdown_vs_allmax) + " slowdown.\n\n";
  }
  out += JobSection(r) + "\n" + PoliciesSection(r) + "\n" + ClosedLoopSection(r) + "\n" + SweepSection(r) + "\n" +
         PlotsSection(r) +
         FrontierSection(r) + "\n" + DefinitionsMarkdown();
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "\n## Emulation\n\n%s GPUs x %d iterations x %zu policies in %.3f s "
                "(%.3g GPU-iterations per second).\n",
                Thousands(r.total_gpus).c_str(), r.spec.iterations, r.policies.size(), r.emulation_s,
                r.gpu_iterations_per_s);
  return out + buf;
}

}  // namespace perseus::emulator
