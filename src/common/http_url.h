// The one check of a server URL a user gives (--server, --electricitymaps-url,
// a rank client's server): cpp-httplib takes "http://", "https://" or a bare
// "host[:port]", and throws on any other scheme, so every caller asks here
// first and reports a clear error instead.
// Thread safety: pure.
#pragma once

#include <string>

#include "perseus/status.h"

namespace perseus {

// OK for "http://host[:port][/...]", "https://..." and "host[:port]"; else
// InvalidArgument "<what>: ..." naming the URL.
Status CheckHttpUrl(const std::string& url, const std::string& what);

}  // namespace perseus
