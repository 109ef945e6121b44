// GpuBroker: the node daemon's GPUs and the rules for using them, apart from
// any socket code.
//
// It answers one request line of the protocol in runtime/gpu/daemon_protocol.h
// at a time. A client claims a GPU with "hello"; only the claiming client may
// set or reset its clock, anyone allowed in may read clocks, energy and
// power. When a client goes away, Release resets every clock it locked and
// frees its claims, so a crashed training process never leaves a GPU slowed
// down. Every bad request gets {"ok":false,"error":...} naming the field.
// Thread safety: not thread-safe; the daemon's single event loop owns it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

// One connection to the daemon.
struct BrokerClient {
  uint64_t id = 0;  // unique per connection for the daemon's lifetime
  pid_t pid = 0;
  uid_t uid = 0;
};

// The outcome of resetting one GPU on release or shutdown.
struct GpuReset {
  int gpu = 0;
  Status status;
};

class GpuBroker {
 public:
  // REQUIRES: every element non-null. GPU i of the node is gpus[i].
  explicit GpuBroker(std::vector<std::unique_ptr<GpuControl>> gpus);

  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  GpuControl& gpu(int index) { return *gpus_[index].gpu; }

  // Answers one request line (without its newline) from `client`; the reply
  // is one JSON object, without a newline.
  std::string Handle(const BrokerClient& client, std::string_view line);
  // `client` is gone: resets the GPUs whose clock it locked and frees its claims.
  std::vector<GpuReset> Release(const BrokerClient& client);
  // Resets every GPU (daemon shutdown) and frees all claims.
  std::vector<GpuReset> ResetAll();

 private:
  struct Slot {
    std::unique_ptr<GpuControl> gpu;
    bool claimed = false;
    BrokerClient holder;  // valid when claimed
    bool locked = false;  // the holder locked the clock and has not reset it
  };

  std::vector<Slot> gpus_;
};

// {"ok":false,"error":<message>,"code":<StatusCodeName>} for `status`.
std::string ErrorReply(const Status& status);

}  // namespace perseus::runtime
