// `perseus carbon`: replays a grid carbon-intensity trace against a training
// job under the carbon-aware policies (docs/carbon.md).
//
//   perseus carbon --eia CISO --example gpt3-175b-a100 --slowdown-budget 0.05 --out DIR
//   perseus carbon --trace trace.csv PROFILE.csv --stages 8 --microbatches 12 --blocking-power 83.64 --out DIR
//
// Writes report.md, report.json (schema perseus.carbon/v2), week_intensity.svg,
// week_plan.svg, tradeoff.svg and decisions.log into DIR and prints a summary.
#pragma once

namespace CLI {
class App;
}

namespace perseus::cli {

void RegisterCarbonCommand(CLI::App& app);

}  // namespace perseus::cli
