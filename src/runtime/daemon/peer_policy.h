// PeerPolicy: which local users may use perseusd.
//
// perseusd runs as root and can change any GPU clock on the node, so it only
// serves users the administrator listed. The kernel tells the daemon who is on
// the other end of a Unix socket (SO_PEERCRED: pid, uid, gid at connect time);
// the uid must be root, the daemon's own uid, or on the allow-list, or one of
// the process's groups (primary or supplementary, SO_PEERGROUPS) on the
// group allow-list. The
// socket's file mode (0660, optionally group-owned) is the first gate; this
// is the second. See docs/gpu_control.md, "Security model".
// Thread safety: PeerPolicy is immutable after construction.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "perseus/status.h"

namespace perseus::runtime {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups at connect time
};

// The credentials of the process on the other end of connected Unix socket `fd`.
Result<PeerCredentials> ReadPeerCredentials(int fd);

// A user name or a numeric uid ("alice", "1000") to a uid.
Result<uid_t> ResolveUser(const std::string& name_or_uid);
// A group name or a numeric gid to a gid.
Result<gid_t> ResolveGroup(const std::string& name_or_gid);

class PeerPolicy {
 public:
  PeerPolicy(std::vector<uid_t> allowed_uids, uid_t daemon_uid, std::vector<gid_t> allowed_gids = {});

  // Ok, or kUnavailable: "uid 4242 (pid 77) is not allowed to use perseusd
  // (allowed: root, uid 1000); restart perseusd with --allow-uid 4242,
  // --allow-user <name> or --allow-group <group>".
  Status Check(const PeerCredentials& peer) const;
  // "root, uid 1000, uid 1001, group 1002" for logs.
  std::string Describe() const;

 private:
  std::vector<uid_t> allowed_uids_;  // sorted, without root
  uid_t daemon_uid_;
  std::vector<gid_t> allowed_gids_;  // sorted
};

}  // namespace perseus::runtime
