// Must not compile: the wire protocol is shared by the server, the rank
// client and Python, and depends on none of them
// (Layering.TheProtocolCannotIncludeTheServer).
#include "runtime/server/job_service.h"
