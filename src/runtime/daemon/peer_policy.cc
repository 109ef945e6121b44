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

namespace perseus::runtime {
namespace {

// A non-negative decimal number that fits in 32 bits, or nothing.
bool ParseId(const std::string& text, unsigned long* id) {
  if (text.empty() || text.size() > 10) return false;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  *id = std::strtoul(text.c_str(), nullptr, 10);
  return *id <= 0xfffffffeUL;  // (uid_t)-1 means "no user"
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
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

Result<uid_t> ResolveUser(const std::string& name_or_uid) {
  unsigned long id = 0;
  if (ParseId(name_or_uid, &id)) return static_cast<uid_t>(id);
  std::vector<char> buffer(static_cast<size_t>(LookupBufferSize()));
  passwd pw = {};
  passwd* found = nullptr;
  int err = getpwnam_r(name_or_uid.c_str(), &pw, buffer.data(), buffer.size(), &found);
  if (err != 0) return Status::IoError("user '" + name_or_uid + "': " + std::strerror(err));
  if (found == nullptr) return Status::NotFound("user '" + name_or_uid + "': no such user");
  return pw.pw_uid;
}

Result<gid_t> ResolveGroup(const std::string& name_or_gid) {
  unsigned long id = 0;
  if (ParseId(name_or_gid, &id)) return static_cast<gid_t>(id);
  long size = sysconf(_SC_GETGR_R_SIZE_MAX);
  std::vector<char> buffer(static_cast<size_t>(size > 0 ? size : 16384));
  group gr = {};
  group* found = nullptr;
  int err = getgrnam_r(name_or_gid.c_str(), &gr, buffer.data(), buffer.size(), &found);
  if (err != 0) return Status::IoError("group '" + name_or_gid + "': " + std::strerror(err));
  if (found == nullptr) return Status::NotFound("group '" + name_or_gid + "': no such group");
  return gr.gr_gid;
}

PeerPolicy::PeerPolicy(std::vector<uid_t> allowed_uids, uid_t daemon_uid)
    : allowed_uids_(std::move(allowed_uids)), daemon_uid_(daemon_uid) {
  allowed_uids_.erase(std::remove(allowed_uids_.begin(), allowed_uids_.end(), 0), allowed_uids_.end());
  std::sort(allowed_uids_.begin(), allowed_uids_.end());
  allowed_uids_.erase(std::unique(allowed_uids_.begin(), allowed_uids_.end()), allowed_uids_.end());
}

Status PeerPolicy::Check(const PeerCredentials& peer) const {
  if (peer.uid == 0 || peer.uid == daemon_uid_) return Status::Ok();
  if (std::binary_search(allowed_uids_.begin(), allowed_uids_.end(), peer.uid)) return Status::Ok();
  std::string uid = std::to_string(peer.uid);
  return Status::Unavailable("uid " + uid + " (pid " + std::to_string(peer.pid) +
                             ") is not allowed to use perseusd (allowed: " + Describe() +
                             "); restart perseusd with --allow-uid " + uid + " or --allow-user <name>");
}

std::string PeerPolicy::Describe() const {
  std::string out = "root";
  if (daemon_uid_ != 0) out += ", uid " + std::to_string(daemon_uid_) + " (the daemon's own)";
  for (uid_t uid : allowed_uids_) {
    if (uid != daemon_uid_) out += ", uid " + std::to_string(uid);
  }
  return out;
}

}  // namespace perseus::runtime
