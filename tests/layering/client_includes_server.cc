// Must not compile: the rank client runs inside the training process and
// talks to the server only through the protocol module, so a file built with
// its include path cannot see the server's headers
// (Layering.TheRankClientCannotIncludeTheServer).
#include "runtime/server/job_service.h"
