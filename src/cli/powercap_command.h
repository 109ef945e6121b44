// `perseus powercap`: how much each way of saving power slows a job down to
// meet an average power cap, from no cap to the lowest reachable (docs/power.md).
//
//   perseus powercap --example gpt3-175b-a100 --pipelines 16 --out DIR
//   perseus powercap PROFILE.csv --stages 8 --microbatches 12 --blocking-power 83.64 --out DIR
//
// Writes power_cap.md, power_cap.csv and power_cap.svg into DIR and prints the table.
#pragma once

namespace CLI {
class App;
}

namespace perseus::cli {

void RegisterPowerCapCommand(CLI::App& app);

}  // namespace perseus::cli
