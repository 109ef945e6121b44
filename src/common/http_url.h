// The one check of a server URL a user gives (--server, --electricitymaps-url,
// a rank client's server): cpp-httplib takes "http://", "https://" or a bare
// "host[:port]", and throws on any other scheme, so every caller asks here
// first and reports a clear error instead.
// Thread safety: pure.
#pragma once

#include <string>

#include "perseus/status.h"

namespace perseus {

// OK for "http://host[:port]", "https://host[:port]" and "host[:port]"
// (host: a name, an IPv4 address or [an IPv6 address of digits and colons,
// such as ::1]; port 1-65535), which
// is all cpp-httplib takes: it has no place for a path, and one given would
// make it try to connect to a host named like the whole URL. Else
// InvalidArgument "<what>: ..." naming the URL and what is wrong with it.
Status CheckHttpUrl(const std::string& url, const std::string& what);

// OK unless `value` (a token sent in a header) holds a line break or another
// control character, which would be sent as raw header text (another header,
// injected); InvalidArgument "<what>: a line break at character 4 of 4 (a
// file's trailing newline? strip it); a token is sent as one header line".
Status CheckHeaderValue(const std::string& value, const std::string& what);

}  // namespace perseus
