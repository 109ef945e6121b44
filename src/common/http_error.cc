#include "common/http_error.h"

#include "common/strings.h"

namespace perseus {

std::string DescribeHttpError(httplib::Error error, double connect_timeout_s) {
  switch (error) {
    case httplib::Error::Success: return "no error";
    case httplib::Error::Unknown: return "an unknown transport error";
    case httplib::Error::Connection: return "cannot connect (is the server running and reachable at that address?)";
    case httplib::Error::BindIPAddress: return "cannot bind the local address";
    case httplib::Error::Read: return "the connection failed or timed out while reading the reply";
    case httplib::Error::Write: return "the connection failed while sending the request";
    case httplib::Error::ExceedRedirectCount: return "too many redirects";
    case httplib::Error::Canceled: return "canceled";
    case httplib::Error::SSLConnection: return "the TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "the CA certificates could not be loaded";
    case httplib::Error::SSLServerVerification: return "the server's certificate was not accepted";
    case httplib::Error::UnsupportedMultipartBoundaryChars: return "a multipart boundary with unsupported characters";
    case httplib::Error::Compression: return "the reply could not be decompressed";
    case httplib::Error::ConnectionTimeout: return Format("no connection within the timeout (%g s)", connect_timeout_s);
  }
  return "transport error " + std::to_string(static_cast<int>(error));
}

}  // namespace perseus
