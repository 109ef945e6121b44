// `perseus optimize`: a pipeline's iteration time-energy frontier.
//
//   perseus optimize PROFILE.csv --stages 8 --microbatches 12 --blocking-power 83.64 --out DIR
//   perseus optimize --example gpt3-xl-a100 --out DIR
//
// Writes plans.json (at most --max-plans plans), frontier.csv, frontier.svg,
// timeline.svg (and with --zeus-plans / --zeus-plan-time T, chosen plans as
// zeus/freqs_pipeline_NNNNN.py) into DIR and prints a summary on stdout;
// progress goes to stderr when the run takes over two seconds (not --quiet).
#pragma once

namespace CLI {
class App;
}

namespace perseus::cli {

void RegisterOptimizeCommand(CLI::App& app);

}  // namespace perseus::cli
