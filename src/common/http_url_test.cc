// Tests of the server URL check.
#include "common/http_url.h"

#include <gtest/gtest.h>

namespace perseus {
namespace {

TEST(HttpUrl, AcceptsWhatTheHttpClientTakes) {
  for (const char* url : {"http://127.0.0.1:7787", "https://perseus.example.com", "localhost:7787", "h",
                          "http://[::1]:7787", "https://[2001:0::1]", "http://h:65535"}) {
    EXPECT_TRUE(CheckHttpUrl(url, "--server").ok()) << url;
  }
}

TEST(HttpUrl, RejectsOtherSchemesAndMissingHosts) {
  EXPECT_EQ(CheckHttpUrl("ftp://x", "--server").message(),
            "--server: unsupported URL scheme 'ftp' in 'ftp://x' (expected http:// or https://, in lower case)");
  EXPECT_FALSE(CheckHttpUrl("ws://x", "w").ok());
  EXPECT_FALSE(CheckHttpUrl("x://y", "w").ok());
  EXPECT_EQ(CheckHttpUrl("http://", "--server").message(),
            "--server: no host in 'http://' (expected e.g. http://127.0.0.1:7787)");
  EXPECT_FALSE(CheckHttpUrl("", "w").ok());
  EXPECT_FALSE(CheckHttpUrl("https://:80", "w").ok());
  EXPECT_FALSE(CheckHttpUrl("HTTP://h", "w").ok());  // cpp-httplib would take it for a host name
}

// cpp-httplib has no place for a path: "http://h:7787/" would make it look
// up a host named like the whole URL ("cannot connect"). Each is named.
TEST(HttpUrl, RejectsPathsQueriesAndBadPorts) {
  EXPECT_EQ(CheckHttpUrl("http://h:7787/", "server_url").message(),
            "server_url: 'http://h:7787/' ends in '/'; give the address alone (expected e.g. http://127.0.0.1:7787)");
  EXPECT_EQ(CheckHttpUrl("http://h:7787/api", "s").message(),
            "s: 'http://h:7787/api' has a path, query or fragment; give the address alone (expected e.g. "
            "http://127.0.0.1:7787)");
  EXPECT_FALSE(CheckHttpUrl("http://h?x=1", "s").ok());
  EXPECT_FALSE(CheckHttpUrl("http://h#top", "s").ok());
  EXPECT_EQ(CheckHttpUrl("http://h:99999", "s").message(), "s: bad port in 'http://h:99999' (expected 1 to 65535)");
  for (const char* url : {"http://h:", "http://h:0", "http://h:x", "http://h:80x", "http://h:123456"}) {
    EXPECT_NE(CheckHttpUrl(url, "s").message().find("bad port"), std::string::npos) << url;
  }
  EXPECT_EQ(CheckHttpUrl("http://u:p@h", "s").message(), "s: bad port in 'http://u:p@h' (expected 1 to 65535)");
  EXPECT_EQ(CheckHttpUrl("http://u@h", "s").message(), "s: user names in URLs are not supported: 'http://u@h'");
  EXPECT_FALSE(CheckHttpUrl("http://[::1", "s").ok());
  // cpp-httplib 0.11 would look up "[fe80::1]" as a host name and fail as "cannot connect".
  EXPECT_EQ(CheckHttpUrl("https://[fe80::1]", "s").message(),
            "s: an IPv6 address in brackets may hold only digits and colons here (cpp-httplib 0.11; give a host "
            "name instead) in 'https://[fe80::1]'");
  EXPECT_FALSE(CheckHttpUrl("http://[]", "s").ok());
  EXPECT_FALSE(CheckHttpUrl("http://h h", "s").ok());
}

}  // namespace
}  // namespace perseus
