// Compiles: with the control library's include path its own headers and those
// of what it links (optimizer, carbon, common) resolve
// (Layering.TheControlLibraryIncludesItsOwnAndItsDependencies).
#include "carbon/knob_options.h"
#include "common/stats.h"
#include "control/carbon_window.h"
#include "control/plan_assignment.h"
#include "optimizer/node_costs.h"
