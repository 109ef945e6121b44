// Compiles: with the optimizer's include path its own headers, those of what
// it links (common) and the public API resolve
// (Layering.TheOptimizerIncludesItsOwnAndCommonHeaders).
#include "common/csv_reader.h"
#include "optimizer/node_costs.h"
#include "perseus/optimizer.h"
