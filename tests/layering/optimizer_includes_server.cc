// Must not compile: the optimizer sits below the server, so a file built with
// the optimizer's include path cannot see the server's headers
// (Layering.TheOptimizerCannotIncludeTheServer expects exactly that error).
#include "runtime/server/job_service.h"
