// cpp-httplib's transport errors as sentences: its own to_string() gives the
// enumerator ("Connection", "Read"), which means nothing to a user. Every
// HTTP client of perseus (the rank client, `perseus status`, the
// ElectricityMaps source) words them here.
#pragma once

#include <httplib.h>

#include <string>

namespace perseus {

// What went wrong, e.g. "cannot connect (is the server running and reachable
// at that address?)"; `connect_timeout_s` is the timeout the caller set, named
// for Error::ConnectionTimeout.
std::string DescribeHttpError(httplib::Error error, double connect_timeout_s);

}  // namespace perseus
