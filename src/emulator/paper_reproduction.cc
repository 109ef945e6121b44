// ReproducePaper: the paper's large-scale emulation, ours beside theirs.
#include <cmath>

#include <nlohmann/json.hpp>

#include "emulator/markdown.h"
#include "emulator/paper_figures.h"
#include "emulator/report_json.h"
#include "emulator/report_markdown.h"
#include "emulator/report_plots.h"
#include "perseus/emulator.h"
#include "report/color_scale.h"

namespace perseus {
namespace {

using emulator::Fixed;
using emulator::kPaperModels;
using emulator::PaperModel;
using emulator::Percent;
using nlohmann::json;

struct PaperRun {
  const PaperModel* model;
  int microbatches;
  double paper_intrinsic;
  EmulationResult result;
};

const PolicyResult* FindPolicy(const EmulationResult& r, const std::string& policy) {
  for (const PolicyResult& p : r.policies) {
    if (p.name == policy) return &p;
  }
  return nullptr;
}

double Savings(const EmulationResult& r, const std::string& policy) {
  const PolicyResult* p = FindPolicy(r, policy);
  return p ? p->savings_vs_allmax : 0;
}

double SweepSavings(const EmulationResult& r, double factor, const std::string& policy) {
  for (const SweepPoint& p : r.sweep) {
    if (std::abs(p.factor - factor) > 1e-9) continue;
    for (const auto& [name, s] : p.savings_vs_allmax) {
      if (name == policy) return s;
    }
  }
  return 0;
}

Result<EmulationResult> RunOne(const PaperReproductionOptions& o, const PaperModel& m, int microbatches,
                               const Profile& profile) {
  EmulationSpec spec;
  spec.job_name = o.sosp24_dir + "/" + m.profile_file;
  spec.profile = profile;
  spec.problem.schedule = ScheduleSpec{ScheduleKind::k1F1B, emulator::kPaperStages, microbatches, 1};
  spec.problem.blocking_power_w = emulator::kPaperBlockingPowerW;
  spec.problem.gpus_per_stage = emulator::kPaperGpusPerStage;
  spec.profile_scale = emulator::kPaperProfileScale;
  spec.pipelines = emulator::kPaperGlobalBatch / microbatches;
  spec.iterations = o.iterations;
  spec.slowdown_budget = o.slowdown_budget;
  spec.sweep_factors = {1.0, emulator::kPaperStragglerFactor};
  if (microbatches == emulator::kPaperStragglerMicrobatches) spec.sweep_factors = o.sweep_factors;
  Result<EmulationResult> r = Emulate(spec);
  if (!r.ok())
    return r.status().WithContext(std::string(m.name) + ", " + std::to_string(microbatches) + " microbatches");
  return r;
}

json Table6Json(const std::vector<PaperRun>& runs) {
  json rows = json::array();
  for (const PaperRun& run : runs) {
    const EmulationResult& r = run.result;
    rows.push_back({{"model", run.model->name},
                    {"microbatches", run.microbatches},
                    {"pipelines", r.spec.pipelines},
                    {"gpus", r.total_gpus},
                    {"intrinsic_savings", Savings(r, "perseus-intrinsic")},
                    {"paper_intrinsic_savings", run.paper_intrinsic},
                    {"envpipe_savings", Savings(r, "envpipe")},
                    {"zeus_global_savings", Savings(r, "zeus-global")},
                    {"zeus_per_stage_savings", Savings(r, "zeus-per-stage")},
                    {"perseus_savings_straggler_1_2", SweepSavings(r, emulator::kPaperStragglerFactor, "perseus")}});
  }
  return rows;
}

const PaperRun* StragglerRun(const std::vector<PaperRun>& runs, const PaperModel& m) {
  for (const PaperRun& run : runs) {
    if (run.model == &m && run.microbatches == emulator::kPaperStragglerMicrobatches) return &run;
  }
  return nullptr;
}

json Figure7Json(const std::vector<PaperRun>& runs) {
  json rows = json::array();
  for (const PaperModel& m : kPaperModels) {
    const PaperRun* run = StragglerRun(runs, m);
    if (!run) continue;
    json sweep = json::array();
    for (const SweepPoint& p : run->result.sweep) {
      json s = json::object();
      for (const auto& [name, v] : p.savings_vs_allmax) s[name] = v;
      sweep.push_back({{"factor", p.factor}, {"savings_vs_allmax", s}});
    }
    rows.push_back({{"model", m.name},
                    {"pipelines", run->result.spec.pipelines},
                    {"gpus", run->result.total_gpus},
                    {"factor", emulator::kPaperStragglerFactor},
                    {"perseus_savings", SweepSavings(run->result, emulator::kPaperStragglerFactor, "perseus")},
                    {"paper_perseus_savings", m.straggler_savings},
                    {"envpipe_savings", SweepSavings(run->result, emulator::kPaperStragglerFactor, "envpipe")},
                    {"zeus_global_savings", SweepSavings(run->result, emulator::kPaperStragglerFactor, "zeus-global")},
                    {"sweep", sweep}});
  }
  return rows;
}

std::string ReproductionJson(const std::vector<PaperRun>& runs) {
  json list = json::array();
  for (const PaperRun& run : runs) {
    json policies = json::array();
    for (const PolicyResult& p : run.result.policies) policies.push_back(emulator::PolicyJson(run.result, p));
    list.push_back(
        {{"schema", "perseus.emulation/v1"}, {"job", emulator::JobJson(run.result)}, {"policies", policies}});
  }
  json doc = {{"schema", "perseus.paper-reproduction/v1"},
              {"setup",
               {{"stages", emulator::kPaperStages},
                {"gpus_per_stage", emulator::kPaperGpusPerStage},
                {"profile_scale", emulator::kPaperProfileScale},
                {"blocking_power_w", emulator::kPaperBlockingPowerW},
                {"global_batch_sequences", emulator::kPaperGlobalBatch}}},
              {"table6", Table6Json(runs)},
              {"figure7", Figure7Json(runs)},
              {"runs", list}};
  return doc.dump(2) + "\n";
}

std::string Check(double ours, double paper) { return ours >= paper - 5e-5 ? "yes" : "**no**"; }

std::string Table6Markdown(const std::vector<PaperRun>& runs) {
  emulator::MarkdownTable t({"Model", "Microbatches", "Pipelines", "GPUs", "Perseus intrinsic (ours)",
                             "Paper (Table 6)", "Ours >= paper", "EnvPipe (ours)", "Zeus global (ours)",
                             "Perseus, 1.2x straggler (ours)"});
  for (const PaperRun& run : runs) {
    const EmulationResult& r = run.result;
    const double ours = Savings(r, "perseus-intrinsic");
    const PolicyResult* zeus = FindPolicy(r, "zeus-global");
    std::string zeus_text =
        zeus ? Percent(zeus->savings_vs_allmax) + " at " + Percent(zeus->slowdown_vs_allmax, 1) + " slowdown" : "n/a";
    t.AddRow({run.model->display, std::to_string(run.microbatches), std::to_string(r.spec.pipelines),
              emulator::Thousands(r.total_gpus), Percent(ours), Percent(run.paper_intrinsic, 1),
              Check(ours, run.paper_intrinsic), Percent(Savings(r, "envpipe")), zeus_text,
              Percent(SweepSavings(r, emulator::kPaperStragglerFactor, "perseus"))});
  }
  return "## Table 6: intrinsic savings, no straggler, no slowdown\n\n"
         "Savings of the whole job against AllMax when every pipeline runs the fastest frontier plan.\n\n"
         "![Intrinsic savings against microbatches](table6.svg)\n\n" +
         t.Render();
}

std::string Figure7Markdown(const std::vector<PaperRun>& runs) {
  emulator::MarkdownTable t({"Model", "Pipelines", "GPUs", "Perseus at 1.2x (ours)", "Paper (Fig. 7)", "Ours >= paper",
                             "EnvPipe at 1.2x (ours)", "Zeus global at 1.2x (ours)"});
  std::string plots;
  for (const PaperModel& m : kPaperModels) {
    const PaperRun* run = StragglerRun(runs, m);
    if (!run) continue;
    const double ours = SweepSavings(run->result, emulator::kPaperStragglerFactor, "perseus");
    t.AddRow({m.display, std::to_string(run->result.spec.pipelines), emulator::Thousands(run->result.total_gpus),
              Percent(ours), Percent(m.straggler_savings, 1), Check(ours, m.straggler_savings),
              Percent(SweepSavings(run->result, emulator::kPaperStragglerFactor, "envpipe")),
              Percent(SweepSavings(run->result, emulator::kPaperStragglerFactor, "zeus-global"))});
    plots += std::string("![Savings against straggler factor, ") + m.display + "](savings_vs_straggler_" + m.name +
             ".svg)\n\n";
  }
  return "## Fig. 7: total savings with one straggler pipeline\n\n"
         "One of 16 pipelines (1,024 GPUs, 96 microbatches) slowed by the factor; savings of the whole job against "
         "AllMax with the same straggler.\n\n" +
         plots + t.Render();
}

std::string Table6Svg(const std::vector<PaperRun>& runs) {
  report::LineChart chart;
  chart.title = "Intrinsic savings without slowdown (Table 6)";
  chart.x_label = "microbatches per iteration (pipelines = 1536 / microbatches)";
  chart.y_label = "energy savings vs AllMax (%)";
  for (size_t k = 0; k < kPaperModels.size(); ++k) {
    const PaperModel& m = kPaperModels[k];
    const std::string perseus_color = report::CategoricalColor(3 * k),
                      envpipe_color = report::CategoricalColor(3 * k + 1);
    report::Series ours{std::string(m.display) + ", Perseus (ours)", {}, perseus_color, true, true, false};
    report::Series paper{std::string(m.display) + ", Perseus (paper)", {}, perseus_color, true, true, true};
    report::Series envpipe{std::string(m.display) + ", EnvPipe (ours)", {}, envpipe_color, true, true, false};
    for (const PaperRun& run : runs) {
      if (run.model != &m) continue;
      ours.points.emplace_back(run.microbatches, 100 * Savings(run.result, "perseus-intrinsic"));
      paper.points.emplace_back(run.microbatches, 100 * run.paper_intrinsic);
      envpipe.points.emplace_back(run.microbatches, 100 * Savings(run.result, "envpipe"));
    }
    chart.series.push_back(std::move(ours));
    chart.series.push_back(std::move(paper));
    chart.series.push_back(std::move(envpipe));
  }
  return report::RenderLineChart(chart);
}

std::string Summary(const std::vector<PaperRun>& runs) {
  std::string out = "model        microbatches  pipelines  intrinsic (ours / paper)  1.2x straggler (ours / paper)\n";
  char line[200];
  for (const PaperRun& run : runs) {
    const bool fig7 = run.microbatches == emulator::kPaperStragglerMicrobatches;
    std::snprintf(line, sizeof line, "%-12s %12d %10d  %8s / %-13s  %8s / %s\n", run.model->name, run.microbatches,
                  run.result.spec.pipelines, Percent(Savings(run.result, "perseus-intrinsic")).c_str(),
                  Percent(run.paper_intrinsic, 1).c_str(),
                  Percent(SweepSavings(run.result, emulator::kPaperStragglerFactor, "perseus")).c_str(),
                  fig7 ? Percent(run.model->straggler_savings, 1).c_str() : "-");
    out += line;
  }
  return out;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ReproducePaper(const PaperReproductionOptions& options,
                                                                        std::string* summary) {
  std::vector<PaperRun> runs;
  for (const PaperModel& m : kPaperModels) {
    Result<Profile> profile = LoadProfileCsv(options.sosp24_dir + "/" + m.profile_file, emulator::kPaperStages);
    if (!profile.ok()) return profile.status();
    for (size_t k = 0; k < emulator::kPaperMicrobatches.size(); ++k) {
      const int mb = emulator::kPaperMicrobatches[k];
      Result<EmulationResult> r = RunOne(options, m, mb, *profile);
      if (!r.ok()) return r.status();
      runs.push_back(PaperRun{&m, mb, m.intrinsic_savings[k], std::move(*r)});
    }
  }
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("report.md",
                     "# Reproducing the Perseus paper's large-scale emulation\n\n"
                     "A100 profiles of the paper's artifact, 8 stages of 8-way tensor parallelism, times "
                     "and energies x10, global batch 1,536 sequences, blocking power 83.64 W per GPU.\n\n" +
                         Table6Markdown(runs) + "\n" + Figure7Markdown(runs) + "\n" + emulator::DefinitionsMarkdown());
  files.emplace_back("report.json", ReproductionJson(runs));
  files.emplace_back("table6.svg", Table6Svg(runs));
  for (const PaperModel& m : kPaperModels) {
    const PaperRun* run = StragglerRun(runs, m);
    if (!run) continue;
    std::vector<report::Annotation> notes{{emulator::kPaperStragglerFactor, 100 * m.straggler_savings,
                                           "paper: Perseus " + Percent(m.straggler_savings, 1)}};
    files.emplace_back(
        std::string("savings_vs_straggler_") + m.name + ".svg",
        emulator::SavingsVsStragglerSvg(
            run->result.sweep, std::string("Savings against straggler factor: ") + m.display + ", 1,024 GPUs", notes));
  }
  if (summary) *summary = Summary(runs);
  return files;
}

}  // namespace perseus
