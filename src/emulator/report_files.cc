// EmulationReportFiles: every output file of an emulation.
#include "emulator/report_json.h"
#include "emulator/report_markdown.h"
#include "emulator/report_plots.h"
#include "perseus/emulator.h"

namespace perseus {
namespace {

// "gpt3.csv" for "data/profiles/gpt3.csv".
std::string ShortName(const std::string& job_name) {
  size_t slash = job_name.find_last_of('/');
  return slash == std::string::npos ? job_name : job_name.substr(slash + 1);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> EmulationReportFiles(const EmulationResult& r) {
  using namespace emulator;
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("report.md", EmulationMarkdown(r));
  files.emplace_back("report.json", EmulationJson(r));
  std::string csv = GpuEnergyCsv(r);
  if (!csv.empty()) files.emplace_back("energy_per_gpu.csv", std::move(csv));
  files.emplace_back("savings_vs_straggler.svg",
                     SavingsVsStragglerSvg(r.sweep,
                                           "Energy savings against straggler factor, " + std::to_string(r.total_gpus) +
                                               " GPUs: " + ShortName(r.spec.job_name),
                                           {}));
  files.emplace_back("energy_per_gpu.svg", EnergyPerGpuSvg(r));
  files.emplace_back("policies.svg", PoliciesSvg(r));
  for (const PipelineTimeline& t : r.timelines) {
    files.emplace_back("timeline_" + t.policy + ".svg", TimelineSvg(t));
  }
  return files;
}

}  // namespace perseus
