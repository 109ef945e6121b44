// The plots of an optimizer run: the time-energy frontier (with its lower
// bound and the all-maximum point) and the Gantt timeline of one plan.
// Shared by the CLI and the emulator so a frontier looks the same everywhere.
#pragma once

#include <string>

#include "perseus/optimizer.h"
#include "perseus/problem.h"

namespace perseus::report {

// frontier.svg: energy against iteration time for every frontier plan, the
// certified lower bound (dashed) and all-maximum marked.
std::string RenderFrontierSvg(const Frontier& frontier, const std::string& title);
// timeline.svg: a row per stage, a box per computation coloured by SM frequency.
std::string RenderTimelineSvg(const Problem& problem, const FrontierPlan& plan, const std::string& title);

}  // namespace perseus::report
