// Tests of the server URL check.
#include "common/http_url.h"

#include <gtest/gtest.h>

namespace perseus {
namespace {

TEST(HttpUrl, AcceptsWhatTheHttpClientTakes) {
  for (const char* url : {"http://127.0.0.1:7787", "https://perseus.example.com", "HTTP://h/x", "localhost:7787",
                          "h"}) {
    EXPECT_TRUE(CheckHttpUrl(url, "--server").ok()) << url;
  }
}

TEST(HttpUrl, RejectsOtherSchemesAndMissingHosts) {
  EXPECT_EQ(CheckHttpUrl("ftp://x", "--server").message(),
            "--server: unsupported URL scheme 'ftp' in 'ftp://x' (expected http:// or https://)");
  EXPECT_FALSE(CheckHttpUrl("ws://x", "w").ok());
  EXPECT_FALSE(CheckHttpUrl("x://y", "w").ok());
  EXPECT_EQ(CheckHttpUrl("http://", "--server").message(),
            "--server: no host in 'http://' (expected e.g. http://127.0.0.1:7787)");
  EXPECT_FALSE(CheckHttpUrl("", "w").ok());
  EXPECT_FALSE(CheckHttpUrl("https://:80", "w").ok());
}

}  // namespace
}  // namespace perseus
