// `perseus emulate`: a whole training job (data-parallel pipelines x stages x
// tensor-parallel GPUs) emulated for many iterations under AllMax, Zeus-style
// knobs, EnvPipe and Perseus, with stragglers; or the paper's results
// reproduced.
//
//   perseus emulate PROFILE.csv --stages 8 --microbatches 12 --pipelines 128 --gpus-per-stage 8
//                   --blocking-power 83.64 --straggler 1.2 --out DIR
//   perseus emulate --example gpt3-175b-a100 --out DIR
//   perseus emulate --reproduce-paper [--paper-data ../shared/data/sosp24] --out DIR
//
// Writes report.md, report.json, energy_per_gpu.csv and SVG plots into DIR
// (all or nothing) and prints a summary. See docs/emulator.md.
#pragma once

namespace CLI {
class App;
}

namespace perseus::cli {

void RegisterEmulateCommand(CLI::App& app);

}  // namespace perseus::cli
