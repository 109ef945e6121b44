// DaemonGpu: one Unix-socket connection to perseusd per GPU.
#include "runtime/gpu/daemon_gpu.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "runtime/gpu/daemon_protocol.h"

namespace perseus::runtime {
namespace {

using nlohmann::json;

Result<int> Connect(const std::string& socket_path);

class DaemonGpu : public GpuControl {
 public:
  DaemonGpu(int fd, std::string socket_path, int index, int reply_timeout_ms)
      : fd_(fd),
        socket_path_(socket_path),
        where_("perseusd at " + socket_path),
        index_(index),
        reply_timeout_ms_(reply_timeout_ms) {}
  ~DaemonGpu() override { close(fd_); }
  DaemonGpu(const DaemonGpu&) = delete;
  DaemonGpu& operator=(const DaemonGpu&) = delete;

  // Sends hello; remembers the GPU's name and UUID.
  Status Hello() {
    Result<json> reply = Call({{"op", "hello"}, {"gpu", index_}});
    if (!reply.ok()) return reply.status();
    name_ = StringField(*reply, "name");
    uuid_ = StringField(*reply, "uuid");
    return Status::Ok();
  }

  std::string Name() const override { return name_; }
  std::string Uuid() const override { return uuid_; }

  Result<std::vector<int>> SupportedSmClocksMhz() override {
    Result<json> reply = Call({{"op", "supported_clocks"}, {"gpu", index_}});
    if (!reply.ok()) return reply.status();
    const json* clocks = Find(*reply, "sm_clocks_mhz");
    if (clocks == nullptr || !clocks->is_array()) return BadReply("sm_clocks_mhz", "an array");
    std::vector<int> out;
    for (const json& c : *clocks) {
      if (!c.is_number_integer()) return BadReply("sm_clocks_mhz", "an array of integers");
      out.push_back(c.get<int>());
    }
    return out;
  }

  Status SetSmClockMhz(int sm_clock_mhz) override {
    Status st = Call({{"op", "set_clock"}, {"gpu", index_}, {"sm_clock_mhz", sm_clock_mhz}}).status();
    if (st.ok()) locked_mhz_ = sm_clock_mhz;
    return st;
  }

  Status ResetSmClock() override {
    Status st = Call({{"op", "reset"}, {"gpu", index_}}).status();
    if (st.ok()) locked_mhz_ = 0;
    return st;
  }

  Result<double> TotalEnergyJ() override { return NumberOp("energy", "energy_j"); }
  Result<double> PowerW() override { return NumberOp("power", "power_w"); }

 private:
  static const json* Find(const json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }
  static std::string StringField(const json& object, const char* key) {
    const json* v = Find(object, key);
    return v != nullptr && v->is_string() ? v->get<std::string>() : "";
  }
  Status BadReply(const std::string& field, const std::string& expected) const {
    return Status::Internal(where_ + ": reply field '" + field + "': expected " + expected);
  }

  Result<double> NumberOp(const char* op, const char* field) {
    Result<json> reply = Call({{"op", op}, {"gpu", index_}});
    if (!reply.ok()) return reply.status();
    const json* v = Find(*reply, field);
    if (v == nullptr || !v->is_number()) return BadReply(field, "a number");
    return v->get<double>();
  }

  // Sends `request` and waits for its reply; a reply with "ok":false becomes
  // the Status it describes. A lost connection (the daemon restarted, or
  // stalled past the reply timeout) is reopened at the next call, at most
  // once a second: the GPU is claimed again and its locked clock restored
  // (the daemon reset it when the connection dropped).
  Result<json> Call(const json& request) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) PERSEUS_RETURN_IF_ERROR(ReconnectLocked());
    return Exchange(request);
  }

  // REQUIRES: mu_ held.
  Result<json> Exchange(const json& request) {
    Status sent = SendLine(request.dump() + "\n");
    if (!sent.ok()) return Broken(sent);
    Result<std::string> line = ReadLine();
    if (!line.ok()) return Broken(line.status());
    json reply = json::parse(*line, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded() || !reply.is_object()) return Status::Internal(where_ + ": reply is not a JSON object");
    const json* ok = Find(reply, "ok");
    if (ok == nullptr || !ok->is_boolean()) return BadReply("ok", "true or false");
    if (!ok->get<bool>()) {
      return StatusFromCodeName(StringField(reply, "code"), "perseusd: " + StringField(reply, "error"));
    }
    return reply;
  }

  // REQUIRES: mu_ held and broken_.
  Status ReconnectLocked() {
    const auto now = std::chrono::steady_clock::now();
    const std::string lost = where_ + ": connection lost (" + broken_reason_ + ")";
    if (now - last_reconnect_ < std::chrono::seconds(1)) {
      return Status::Unavailable(lost + "; reconnecting at most once a second");
    }
    last_reconnect_ = now;
    Result<int> fd = Connect(socket_path_);
    if (!fd.ok()) return Status::Unavailable(lost + "; reconnecting failed: " + fd.status().message());
    close(fd_);
    fd_ = *fd;
    buffer_.clear();
    broken_ = false;
    Result<json> hello = Exchange({{"op", "hello"}, {"gpu", index_}});
    if (!hello.ok()) return Broken(hello.status());
    if (locked_mhz_.load() > 0) {
      Result<json> restored = Exchange({{"op", "set_clock"}, {"gpu", index_}, {"sm_clock_mhz", locked_mhz_.load()}});
      if (!restored.ok()) return restored.status();
    }
    return Status::Ok();
  }

  Status Closed() const { return Status::IoError(where_ + ": connection closed by the daemon"); }

  // Marks the connection lost and shuts it down, so the daemon sees the
  // client gone and resets the clock it locked (after a reply timeout the
  // stream could not be trusted anyway); the next call reconnects.
  Status Broken(const Status& status) {
    if (!broken_) ::shutdown(fd_, SHUT_RDWR);
    broken_ = true;
    broken_reason_ = status.message();
    return status;
  }

  Status SendLine(const std::string& line) {
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return Closed();
      if (n < 0) return Status::IoError(where_ + ": send: " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Result<std::string> ReadLine() {
    for (;;) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      if (buffer_.size() > kMaxDaemonLineBytes) return Status::Internal(where_ + ": reply line too long");
      pollfd p = {fd_, POLLIN, 0};
      int ready = poll(&p, 1, reply_timeout_ms_);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return Status::IoError(where_ + ": poll: " + std::strerror(errno));
      if (ready == 0) {
        return Status::IoError(where_ + ": no reply within " + std::to_string(reply_timeout_ms_) + " ms");
      }
      char chunk[4096];
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return Closed();
      if (n < 0) return Status::IoError(where_ + ": recv: " + std::strerror(errno));
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  int fd_;
  std::string socket_path_;
  std::string where_;
  int index_;
  int reply_timeout_ms_;
  std::string name_;  // set by Hello before the object is shared
  std::string uuid_;
  std::mutex mu_;
  std::string buffer_;   // guarded by mu_
  bool broken_ = false;  // guarded by mu_
  std::string broken_reason_;  // guarded by mu_
  std::chrono::steady_clock::time_point last_reconnect_{};  // guarded by mu_
  std::atomic<int> locked_mhz_{0};  // the clock last locked (0: the default)
};

Result<int> Connect(const std::string& socket_path) {
  std::string where = "perseusd at " + socket_path;
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument(where + ": socket path must be 1 to " + std::to_string(sizeof(addr.sun_path) - 1) +
                                   " bytes long");
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(where + ": socket: " + std::strerror(errno));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    close(fd);
    std::string msg = where + ": connect: " + std::strerror(err);
    if (err == ENOENT || err == ECONNREFUSED) return Status::Unavailable(msg + " (is perseusd running?)");
    if (err == EACCES) {
      return Status::Unavailable(msg + " (ask the administrator to add you to the socket's group)");
    }
    return Status::IoError(msg);
  }
  return fd;
}

}  // namespace

Result<std::unique_ptr<GpuControl>> OpenDaemonGpu(const std::string& socket_path, int index, int reply_timeout_ms) {
  Result<int> fd = Connect(socket_path);
  if (!fd.ok()) return fd.status();
  auto gpu = std::make_unique<DaemonGpu>(*fd, socket_path, index, reply_timeout_ms);
  PERSEUS_RETURN_IF_ERROR(gpu->Hello());
  return std::unique_ptr<GpuControl>(std::move(gpu));
}

}  // namespace perseus::runtime
