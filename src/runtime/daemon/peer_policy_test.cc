// Tests of the perseusd allow-list with injected credentials.
#include "runtime/daemon/peer_policy.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace perseus::runtime {
namespace {

TEST(PeerPolicy, RootAndTheDaemonsOwnUidAreAlwaysAllowed) {
  PeerPolicy policy({}, 500);
  EXPECT_TRUE(policy.Check(PeerCredentials{10, 0, 0, {}}).ok());
  EXPECT_TRUE(policy.Check(PeerCredentials{10, 500, 500, {}}).ok());
  EXPECT_FALSE(policy.Check(PeerCredentials{10, 501, 500, {}}).ok());
}

TEST(PeerPolicy, AllowListAdmitsListedUidsOnly) {
  PeerPolicy policy({1001, 1000, 1000, 0}, 0);
  EXPECT_TRUE(policy.Check(PeerCredentials{1, 1000, 100, {}}).ok());
  EXPECT_TRUE(policy.Check(PeerCredentials{1, 1001, 100, {}}).ok());
  Status refused = policy.Check(PeerCredentials{77, 4242, 100, {}});
  EXPECT_EQ(refused.code(), Status::Code::kUnavailable);
  EXPECT_EQ(refused.message(),
            "uid 4242 (pid 77) is not allowed to use perseusd (allowed: root, uid 1000, uid 1001); "
            "restart perseusd with --allow-uid 4242, --allow-user <name> or --allow-group <group>");
  EXPECT_EQ(PeerPolicy({}, 500).Describe(), "root, uid 500 (the daemon's own)");
}

// --allow-group: a member by primary or supplementary group is admitted.
TEST(PeerPolicy, GroupAllowListAdmitsMembers) {
  PeerPolicy policy({1000}, 0, {3000, 2000, 3000});
  EXPECT_EQ(policy.Describe(), "root, uid 1000, group 2000, group 3000");
  EXPECT_TRUE(policy.Check(PeerCredentials{1, 4242, 2000, {}}).ok());
  EXPECT_TRUE(policy.Check(PeerCredentials{1, 4242, 100, {27, 3000}}).ok());
  EXPECT_FALSE(policy.Check(PeerCredentials{1, 4242, 100, {27, 29}}).ok());
}

TEST(PeerPolicy, ResolvesNamesAndNumbers) {
  EXPECT_EQ(*ResolveUser("root"), 0u);
  EXPECT_EQ(*ResolveUser("1234"), 1234u);
  EXPECT_EQ(*ResolveGroup("0"), 0u);
  EXPECT_EQ(ResolveUser("no-such-user-perseus").status().message(), "user 'no-such-user-perseus': no such user");
  EXPECT_EQ(ResolveGroup("no-such-group-perseus").status().message(), "group 'no-such-group-perseus': no such group");
  // A number no uid can have is said to be one, not looked up as a name.
  EXPECT_EQ(ResolveUser("99999999999").status().message(), "uid 99999999999: out of range (0 to 4294967294)");
  EXPECT_EQ(ResolveUser("4294967295").status().message(), "uid 4294967295: out of range (0 to 4294967294)");
  EXPECT_EQ(ResolveGroup("000000000000007").value(), 7u);
}

TEST(PeerPolicy, ReadsTheKernelsCredentials) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Result<PeerCredentials> peer = ReadPeerCredentials(fds[0]);
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  EXPECT_EQ(peer->pid, getpid());
  EXPECT_EQ(peer->uid, geteuid());
  EXPECT_EQ(peer->gid, getegid());
  std::vector<gid_t> own(static_cast<size_t>(getgroups(0, nullptr)));
  own.resize(static_cast<size_t>(getgroups(static_cast<int>(own.size()), own.data())));
  std::vector<gid_t> read = peer->groups;  // SO_PEERGROUPS
  std::sort(own.begin(), own.end());
  std::sort(read.begin(), read.end());
  EXPECT_EQ(read, own);
  close(fds[0]);
  close(fds[1]);
  EXPECT_FALSE(ReadPeerCredentials(-1).ok());
}

}  // namespace
}  // namespace perseus::runtime
