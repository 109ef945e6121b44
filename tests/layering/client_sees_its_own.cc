// Compiles: with the rank client's include path its own headers, the
// protocol's and common's resolve (Layering.TheRankClientIncludesItsOwnAndTheProtocol).
#include "common/json_fields.h"
#include "runtime/client/rank_client.h"
#include "runtime/protocol/rank_messages.h"
#include "runtime/protocol/rank_plan.h"
