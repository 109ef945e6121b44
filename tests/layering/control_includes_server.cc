// Must not compile: the control library holds the decisions and nothing of
// HTTP, JSON requests or storage, so a file built with its include path
// cannot see the server's headers (Layering.TheControlLibraryCannotIncludeTheServer).
#include "runtime/server/job_service.h"
