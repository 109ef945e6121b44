// PeerPolicy: SO_PEERCRED and the uid allow-list.
#include "runtime/daemon/peer_policy.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace perseus::runtime {
namespace {

constexpr unsigned long kMaxId = 0xfffffffeUL;  // (uid_t)-1 means "no user"

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A decimal uid or gid: nullopt if `text` is a name, an error if it is a
// number no id can have.
Result<std::optional<unsigned long>> ParseId(const std::string& kind, const std::string& text) {
  if (!AllDigits(text)) return std::optional<unsigned long>();
  const size_t first = std::min(text.find_first_not_of('0'), text.size());
  unsigned long id = text.size() - first > 10 ? kMaxId + 1 : std::strtoul(text.c_str(), nullptr, 10);
  if (id > kMaxId) {
    return Status::InvalidArgument(kind + " " + text + ": out of range (0 to " + std::to_string(kMaxId) + ")");
  }
  return std::optional<unsigned long>(id);
}

long LookupBufferSize() {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  return size > 0 ? size : 16384;
}

}  // namespace

Result<PeerCredentials> ReadPeerCredentials(int fd) {
  ucred cred = {};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::IoError(std::string("getsockopt(SO_PEERCRED): ") + std::strerror(errno));
  }
  PeerCredentials peer{cred.pid, cred.uid, cred.gid, {}};
  // Supplementary groups as the kernel recorded them at connect time.
  peer.groups.resize(64);
  for (;;) {
    socklen_t groups_len = static_cast<socklen_t>(peer.groups.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, peer.groups.data(), &groups_len) == 0) {
      peer.groups.resize(groups_len / sizeof(gid_t));
      return peer;
    }
    if (errno == ENOPROTOOPT || errno == EINVAL) {  // a kernel before 4.13: the primary group only
      peer.groups.clear();
      return peer;
    }
    if (errno != ERANGE) return Status::IoError(std::string("getsockopt(SO_PEERGROUPS): ") + std::strerror(errno));
    peer.groups.resize(groups_len / sizeof(gid_t) + 1);  // the kernel said how many
  }
}

Result<uid_t> ResolveUser(const std::string& name_or_uid) {
  Result<std::optional<unsigned long>> id = ParseId("uid", name_or_uid);
  if (!id.ok()) return id.status();
  if (id->has_value()) return static_cast<uid_t>(**id);
  std::vector<char> buffer(static_cast<size_t>(LookupBufferSize()));
  passwd pw = {};
  passwd* found = nullptr;
  int err = getpwnam_r(name_or_uid.c_str(), &pw, buffer.data(), buffer.size(), &found);
  if (err != 0) return Status::IoError("user '" + name_or_uid + "': " + std::strerror(err));
  if (found == nullptr) return Status::NotFound("user '" + name_or_uid + "': no such user");
  return pw.pw_uid;
}

Result<gid_t> ResolveGroup(const std::string& name_or_gid) {
  Result<std::optional<unsigned long>> id = ParseId("gid", name_or_gid);
  if (!id.ok()) return id.status();
  if (id->has_value()) return static_cast<gid_t>(**id);
  long size = sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> buffer(static_cast<size_t>(size > 0 ? size : 16384));
  group gr = {};
  group* found = nullptr;
  int err = getgrnam_r(name_or_gid.c_str(), &gr, buffer.data(), buffer.size(), &found);
  if (err != 0) return Status::IoError("group '" + name_or_gid + "': " + std::strerror(err));
  if (found == nullptr) return Status::NotFound("group '" + name_or_gid + "': no such group");
  return gr.gr_gid;
}

PeerPolicy::PeerPolicy(std::vector<uid_t> allowed_uids, uid_t daemon_uid, std::vector<gid_t> allowed_gids)
    : allowed_uids_(std::move(allowed_uids)), daemon_uid_(daemon_uid), allowed_gids_(std::move(allowed_gids)) {
  std::sort(allowed_gids_.begin(), allowed_gids_.end());
  allowed_gids_.erase(std::unique(allowed_gids_.begin(), allowed_gids_.end()), allowed_gids_.end());
  allowed_uids_.erase(std::remove(allowed_uids_.begin(), allowed_uids_.end(), 0), allowed_uids_.end());
  std::sort(allowed_uids_.begin(), allowed_uids_.end());
  allowed_uids_.erase(std::unique(allowed_uids_.begin(), allowed_uids_.end()), allowed_uids_.end());
}

Status PeerPolicy::Check(const PeerCredentials& peer) const {
  if (peer.uid == 0 || peer.uid == daemon_uid_) return Status::Ok();
  if (std::binary_search(allowed_uids_.begin(), allowed_uids_.end(), peer.uid)) return Status::Ok();
  auto allowed_group = [this](gid_t gid) { return std::binary_search(allowed_gids_.begin(), allowed_gids_.end(), gid); };
  if (allowed_group(peer.gid) || std::any_of(peer.groups.begin(), peer.groups.end(), allowed_group)) return Status::Ok();
  std::string uid = std::to_string(peer.uid);
  return Status::Unavailable("uid " + uid + " (pid " + std::to_string(peer.pid) +
                             ") is not allowed to use perseusd (allowed: " + Describe() +
                             "); restart perseusd with --allow-uid " + uid +
                             ", --allow-user <name> or --allow-group <group>");
}

std::string PeerPolicy::Describe() const {
  std::string out = "root";
  if (daemon_uid_ != 0) out += ", uid " + std::to_string(daemon_uid_) + " (the daemon's own)";
  for (uid_t uid : allowed_uids_) {
    if (uid != daemon_uid_) out += ", uid " + std::to_string(uid);
  }
  for (gid_t gid : allowed_gids_) out += ", group " + std::to_string(gid);
  return out;
}

}  // namespace perseus::runtime
