// What a job spec may make the server read or fetch: files under the
// allowed folders only (symbolic links and ".." resolved first), and only the
// default carbon URL without a token.
#include "runtime/server/job_resources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/temp_dir_for_test.h"

namespace perseus::server {
namespace {

TEST(JobResources, FilesOnlyUnderTheAllowedFoldersAfterResolvingLinks) {
  ScopedTempDir allowed, other;
  const std::string inside = allowed.Write("trace.csv", "x"), outside = other.Write("secret", "x");
  Result<std::vector<std::string>> real = RealFolders({allowed.path()});
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  const JobResourcePolicy policy{*real, false};
  EXPECT_TRUE(CheckJobFile(policy, "f", inside).ok());
  // A missing file in an allowed folder passes: its loader says it is missing.
  EXPECT_TRUE(CheckJobFile(policy, "f", allowed.Path("missing.csv")).ok());
  const std::string refused = "field 'f': this server reads the files a job names only under " + (*real)[0] +
                              " (--job-files)";
  EXPECT_EQ(CheckJobFile(policy, "f", outside).message(), refused);
  // The same words whether or not the file exists.
  EXPECT_EQ(CheckJobFile(policy, "f", other.Path("missing")).message(), refused);
  EXPECT_EQ(CheckJobFile(policy, "f", "/nonexistent/dir/file").message(), refused);
  // Out through "..", and through a link inside the folder.
  const std::string other_name = other.path().substr(other.path().rfind('/') + 1);
  EXPECT_EQ(CheckJobFile(policy, "f", allowed.path() + "/../" + other_name + "/secret").message(), refused);
  ASSERT_EQ(::symlink(outside.c_str(), allowed.Path("link").c_str()), 0);
  EXPECT_EQ(CheckJobFile(policy, "f", allowed.Path("link")).message(), refused);
  EXPECT_EQ(CheckJobFile(policy, "f", allowed.path()).message(), refused);  // the folder itself is no file
  // A folder whose name starts like the allowed one's is another folder.
  EXPECT_EQ(CheckJobFile(policy, "f", (*real)[0] + "-sibling/trace.csv").message(), refused);
  // No folders: no files; no policy: any file.
  EXPECT_EQ(CheckJobFile(JobResourcePolicy{std::vector<std::string>{}, false}, "carbon.trace_path", inside).message(),
            "field 'carbon.trace_path': this server reads no files a job names: start it with --job-files DIR (the "
            "folder to read them from) or with a token (--token-file)");
  EXPECT_TRUE(CheckJobFile(JobResourcePolicy{}, "f", outside).ok());
}

TEST(JobResources, UrlsOtherThanTheDefaultNeedTheirPolicy) {
  const std::string def = "https://api.electricitymap.org";
  const JobResourcePolicy closed{std::nullopt, false};
  EXPECT_TRUE(CheckJobUrl(closed, "carbon.base_url", def, def).ok());
  EXPECT_EQ(CheckJobUrl(closed, "carbon.base_url", "http://169.254.169.254", def).message(),
            "field 'carbon.base_url': only a server with a token (--token-file) fetches a URL a job names; without "
            "one, https://api.electricitymap.org (the default)");
  EXPECT_TRUE(CheckJobUrl(JobResourcePolicy{}, "carbon.base_url", "http://127.0.0.1:1", def).ok());
}

TEST(JobResources, RealFoldersNamesWhatIsNotAFolder) {
  ScopedTempDir tmp;
  const std::string file = tmp.Write("file", "x");
  EXPECT_EQ(RealFolders({file}).status().message(), file + ": not a folder");
  EXPECT_EQ(RealFolders({tmp.Path("missing")}).status().message(), tmp.Path("missing") + ": No such file or directory");
  Result<std::vector<std::string>> real = RealFolders({tmp.path() + "/."});
  ASSERT_TRUE(real.ok());
  EXPECT_EQ((*real)[0].find("/."), std::string::npos);
}

}  // namespace
}  // namespace perseus::server
