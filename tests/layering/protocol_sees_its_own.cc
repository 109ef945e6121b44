// Compiles: with the rank protocol's include path its own headers and
// common's resolve (Layering.TheProtocolIncludesItsOwnAndCommonHeaders).
#include "common/json_fields.h"
#include "runtime/protocol/rank_messages.h"
#include "runtime/protocol/rank_plan.h"
