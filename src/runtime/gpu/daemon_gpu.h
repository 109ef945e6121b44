// DaemonGpu: GpuControl of a GPU owned by the node daemon perseusd.
//
// Training processes run without root; perseusd runs as root and sets clocks
// on their behalf over a Unix socket (daemon_protocol.h). Opening a DaemonGpu
// connects and claims the GPU; destroying it closes the connection, and the
// daemon then resets any clock this connection locked. Use it wherever an
// NvmlGpu would do.
// Thread safety: thread-safe; requests on one connection are serialised.
#pragma once

#include <memory>
#include <string>

#include "runtime/gpu/gpu_control.h"

namespace perseus::runtime {

// Connects to perseusd at `socket_path` and claims GPU `index` for this
// connection. Fails with kUnavailable when the daemon is not running, the
// socket is not accessible, this user is not allowed, or another client holds
// the GPU. Each reply must arrive within `reply_timeout_ms`.
Result<std::unique_ptr<GpuControl>> OpenDaemonGpu(const std::string& socket_path, int index,
                                                   int reply_timeout_ms = 10000);

}  // namespace perseus::runtime
