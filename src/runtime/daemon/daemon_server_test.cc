// Tests of perseusd's socket front end in-process: a DaemonServer thread with
// FakeGpus, driven through DaemonGpu and raw sockets; peers' uids injected.
#include "runtime/daemon/daemon_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "common/temp_dir_for_test.h"
#include "runtime/gpu/daemon_gpu.h"
#include "runtime/gpu/fake_gpu.h"

namespace perseus::runtime {
namespace {

// Polls `done` every millisecond for up to two seconds.
template <typename Pred>
bool WaitFor(Pred done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class DaemonServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_path_ = dir_ + "/run/perseusd.sock";
    std::vector<std::unique_ptr<GpuControl>> gpus;
    for (int i = 0; i < 2; ++i) {
      auto gpu = std::make_unique<FakeGpu>(i);
      fakes_.push_back(gpu.get());
      gpus.push_back(std::move(gpu));
    }
    broker_ = std::make_unique<GpuBroker>(std::move(gpus));
    ASSERT_EQ(pipe(stop_), 0);
  }

  void TearDown() override {
    Stop();
    server_.reset();
    close(stop_[0]);
    close(stop_[1]);
  }

  DaemonServerOptions Options() {
    DaemonServerOptions options;
    options.socket_path = socket_path_;
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_ += line + "\n";
    };
    return options;
  }

  void Start(DaemonServerOptions options) {
    Result<std::unique_ptr<DaemonServer>> server = DaemonServer::Listen(std::move(options), broker_.get());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    thread_ = std::thread([this] { serve_status_ = server_->Serve(stop_[0]); });
  }

  void Stop() {
    if (!thread_.joinable()) return;
    ASSERT_EQ(write(stop_[1], "x", 1), 1);
    thread_.join();
  }

  std::string Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // A raw connection for framing tests.
  int Connect() {
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, socket_path_.c_str());
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
    return fd;
  }
  static void Send(int fd, const std::string& text) {
    ASSERT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  }
  // Everything received until `lines` newlines arrived or the peer closed (2 s at most).
  static std::string Receive(int fd, int lines) {
    std::string text;
    for (int seen = 0; seen < lines;) {
      pollfd p = {fd, POLLIN, 0};
      if (poll(&p, 1, 2000) <= 0) break;
      char buffer[65536];
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      seen += static_cast<int>(std::count(buffer, buffer + n, '\n'));
      text.append(buffer, static_cast<size_t>(n));
    }
    return text;
  }

  ScopedTempDir tmp_;
  const std::string dir_ = tmp_.path();
  std::string socket_path_;
  std::vector<FakeGpu*> fakes_;
  std::unique_ptr<GpuBroker> broker_;
  std::unique_ptr<DaemonServer> server_;
  std::thread thread_;
  Status serve_status_;
  int stop_[2] = {-1, -1};
  std::mutex log_mu_;
  std::string log_;
};

TEST_F(DaemonServerTest, DaemonGpuControlsTheGpuThroughTheSocket) {
  Start(Options());
  fakes_[1]->SetEnergyJ(3.5);
  fakes_[1]->SetPowerW(210);
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 1);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ((*gpu)->Name(), "Fake A100");
  EXPECT_EQ((*gpu)->Uuid(), "GPU-fake-1");
  Result<std::vector<int>> clocks = (*gpu)->SupportedSmClocksMhz();
  ASSERT_TRUE(clocks.ok()) << clocks.status().ToString();
  EXPECT_EQ(clocks->size(), 81u);
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  EXPECT_EQ(fakes_[1]->LockedSmClockMhz(), 1200);
  EXPECT_DOUBLE_EQ(*(*gpu)->TotalEnergyJ(), 3.5);
  EXPECT_DOUBLE_EQ(*(*gpu)->PowerW(), 210.0);
  Status bad = (*gpu)->SetSmClockMhz(1201);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bad.message(), "perseusd: field 'sm_clock_mhz': GPU 1: 1201 MHz is not a supported SM clock (nearest: "
                           "1200 MHz; supported: 210-1410 MHz)");
  ASSERT_TRUE((*gpu)->ResetSmClock().ok());
  EXPECT_EQ(fakes_[1]->LockedSmClockMhz(), 0);
}

TEST_F(DaemonServerTest, DisconnectResetsTheClientsClocks) {
  Start(Options());
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1005).ok());
  gpu = Status::Internal("closed");  // destroys the DaemonGpu: the connection closes
  EXPECT_TRUE(WaitFor([&] { return fakes_[0]->LockedSmClockMhz() == 0; }));
  EXPECT_TRUE(WaitFor([&] { return Log().find("gone: GPU 0 clock reset") != std::string::npos; })) << Log();
  EXPECT_EQ(fakes_[1]->ResetCount(), 0);
  // The GPU can be claimed again.
  EXPECT_TRUE(OpenDaemonGpu(socket_path_, 0).ok());
}

TEST_F(DaemonServerTest, StopResetsEveryGpuAndRemovesTheSocket) {
  Start(Options());
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1005).ok());
  Stop();
  EXPECT_TRUE(serve_status_.ok());
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 0);
  EXPECT_EQ(fakes_[1]->ResetCount(), 1);
  Status after = (*gpu)->SetSmClockMhz(1005);
  EXPECT_EQ(after.code(), Status::Code::kIoError);
  EXPECT_EQ(after.message(), "perseusd at " + socket_path_ + ": connection closed by the daemon");
  server_.reset();
  EXPECT_FALSE(std::filesystem::exists(socket_path_));
}

TEST_F(DaemonServerTest, RefusesAUidNotOnTheAllowList) {
  DaemonServerOptions options = Options();
  options.policy = PeerPolicy({1000}, 0);
  options.read_peer = [](int) -> Result<PeerCredentials> { return PeerCredentials{4321, 4242, 4242, {}}; };
  Start(std::move(options));
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(gpu.status().message(),
            "perseusd: uid 4242 (pid 4321) is not allowed to use perseusd (allowed: root, uid 1000); restart "
            "perseusd with --allow-uid 4242, --allow-user <name> or --allow-group <group>");
  EXPECT_EQ(fakes_[0]->SetCount() + fakes_[0]->ResetCount(), 0);
  EXPECT_TRUE(WaitFor([&] { return Log().find("refused client pid 4321 uid 4242") != std::string::npos; })) << Log();
}

TEST_F(DaemonServerTest, AdmitsAUidOnTheAllowList) {
  DaemonServerOptions options = Options();
  options.policy = PeerPolicy({4242}, 0);
  options.read_peer = [](int) -> Result<PeerCredentials> { return PeerCredentials{4321, 4242, 4242, {}}; };
  Start(std::move(options));
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_TRUE((*gpu)->SetSmClockMhz(1410).ok());
}

TEST_F(DaemonServerTest, FramesLinesAcrossAndWithinWrites) {
  Start(Options());
  int fd = Connect();
  Send(fd, "{\"op\":\"hello\",\"gpu\":0}\n\n{\"op\":\"set_clock\",\"gpu\":0,");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Send(fd, "\"sm_clock_mhz\":1110}\r\n{\"op\":\"energy\",\"gpu\":9}\n");
  EXPECT_EQ(Receive(fd, 3),
            "{\"gpu\":0,\"name\":\"Fake A100\",\"ok\":true,\"uuid\":\"GPU-fake-0\"}\n"
            "{\"gpu\":0,\"ok\":true,\"sm_clock_mhz\":1110}\n"
            "{\"code\":\"invalid_argument\",\"error\":\"field 'gpu': no GPU 9 on this node (it has 2: 0-1)\","
            "\"ok\":false}\n");
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 1110);
  close(fd);
  EXPECT_TRUE(WaitFor([&] { return fakes_[0]->LockedSmClockMhz() == 0; }));
}

TEST_F(DaemonServerTest, ClosesAConnectionWhoseLineIsTooLong) {
  Start(Options());
  int fd = Connect();
  Send(fd, std::string(kMaxDaemonLineBytes + 100, 'x'));
  EXPECT_EQ(Receive(fd, 2),
            "{\"code\":\"invalid_argument\",\"error\":\"request line longer than 65536 bytes; closing the "
            "connection\",\"ok\":false}\n");
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // closed by the daemon
  close(fd);
}

// 300 connections of a user that is not allowed: none keeps a slot, so an
// allowed user still gets in, and the refusals are logged at most once a second.
TEST_F(DaemonServerTest, RefusedConnectionsDoNotLockAllowedUsersOut) {
  DaemonServerOptions options = Options();
  options.policy = PeerPolicy({1000}, 0);
  options.max_clients = 16;
  // Connections are accepted in the order they were made: the first 300 are the stranger's.
  std::atomic<int> accepted{0};
  options.read_peer = [&accepted](int) -> Result<PeerCredentials> {
    const uid_t uid = accepted++ < 300 ? 4242 : 1000;
    return PeerCredentials{1, uid, uid, {}};
  };
  Start(std::move(options));
  std::vector<int> refused;
  for (int i = 0; i < 300; ++i) refused.push_back(Connect());  // held open, never read
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_TRUE((*gpu)->SetSmClockMhz(1410).ok());
  const std::string log = Log();
  size_t refusal_lines = 0;
  for (size_t at = 0; (at = log.find("refused client", at)) != std::string::npos; ++at) ++refusal_lines;
  EXPECT_LE(refusal_lines, 5u) << log;
  for (int fd : refused) close(fd);
  // Their hang-ups are not logged one by one either (a flood of them would
  // stall the loop on a slow journal).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Log().find("uid 4242 disconnected"), std::string::npos) << Log();
}

// A client that sends requests and never reads the replies: the daemon stops
// handling its requests once 64 KiB of replies wait, and stops reading once a
// line's worth waits, so its memory stays bounded (before, about 2.6 MB per
// connection, and 63 connections took a 128 MiB pod down). Everything sent is
// still answered once the client reads, and others are served meanwhile.
TEST_F(DaemonServerTest, AClientThatNeverReadsHoldsBoundedMemory) {
  Start(Options());
  constexpr int kClients = 4;
  constexpr int kRequests = 40000;  // 1.4 MB of requests, about 3 MB of replies per client
  std::vector<int> floods;
  std::vector<std::thread> senders;
  for (int i = 0; i < kClients; ++i) {
    floods.push_back(Connect());
    senders.emplace_back([fd = floods.back()] {
      std::string burst;
      for (int r = 0; r < kRequests; ++r) burst += "{\"op\":\"supported_clocks\",\"gpu\":0}\n";
      for (size_t sent = 0; sent < burst.size();) {
        ssize_t n = send(fd, burst.data() + sent, burst.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the senders block: nothing is read
  Result<std::unique_ptr<GpuControl>> other = OpenDaemonGpu(socket_path_, 1);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_TRUE((*other)->SetSmClockMhz(1200).ok());
  EXPECT_GT(server_->peak_buffered_bytes(), 0u);
  EXPECT_LE(server_->peak_buffered_bytes(), (kClients + 1) * DaemonServer::kMaxBufferedBytesPerClient);
  for (int fd : floods) {
    const std::string replies = Receive(fd, kRequests);
    EXPECT_EQ(std::count(replies.begin(), replies.end(), '\n'), kRequests);
    EXPECT_EQ(replies.find("\"ok\":false"), std::string::npos);
  }
  for (std::thread& t : senders) t.join();
  EXPECT_LE(server_->peak_buffered_bytes(), (kClients + 1) * DaemonServer::kMaxBufferedBytesPerClient);
  for (int fd : floods) close(fd);
}

// `printf '...' | socat - UNIX:...` sends its requests and then shuts its
// write side: every request is still answered (the last one even without
// its newline), and the GPU is released once the replies are out.
TEST_F(DaemonServerTest, AClientThatStopsSendingStillGetsEveryReply) {
  Start(Options());
  int fd = Connect();
  Send(fd, "{\"op\":\"hello\",\"gpu\":0}\n{\"op\":\"set_clock\",\"gpu\":0,\"sm_clock_mhz\":1110}\n"
           "{\"op\":\"power\",\"gpu\":0}");
  ASSERT_EQ(shutdown(fd, SHUT_WR), 0);
  const std::string replies = Receive(fd, 4);  // three lines, then the daemon closes
  EXPECT_EQ(std::count(replies.begin(), replies.end(), '\n'), 3) << replies;
  EXPECT_NE(replies.find("\"sm_clock_mhz\":1110"), std::string::npos) << replies;
  EXPECT_NE(replies.find("\"power_w\""), std::string::npos) << replies;
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // closed by the daemon
  EXPECT_TRUE(WaitFor([&] { return fakes_[0]->LockedSmClockMhz() == 0; }));
  close(fd);
}

TEST_F(DaemonServerTest, OneUserCannotTakeEverySlot) {
  DaemonServerOptions options = Options();
  options.policy = PeerPolicy({1000, 2000}, 0);
  options.max_clients_per_uid = 2;
  std::atomic<int> uid{1000};
  options.read_peer = [&uid](int) -> Result<PeerCredentials> {
    return PeerCredentials{1, static_cast<uid_t>(uid.load()), static_cast<gid_t>(uid.load()), {}};
  };
  Start(std::move(options));
  std::vector<std::unique_ptr<GpuControl>> held;
  for (int gpu = 0; gpu < 2; ++gpu) {  // uid 1000 holds both GPUs, one connection each
    Result<std::unique_ptr<GpuControl>> opened = OpenDaemonGpu(socket_path_, gpu);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    held.push_back(std::move(*opened));
  }
  Result<std::unique_ptr<GpuControl>> third = OpenDaemonGpu(socket_path_, 0);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("at most 2 clients of one user (uid 1000)"), std::string::npos)
      << third.status().message();
  // Another user is admitted (its hello then finds the GPUs claimed), and gets a GPU once one is let go.
  uid = 2000;
  Result<std::unique_ptr<GpuControl>> other = OpenDaemonGpu(socket_path_, 1);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("is claimed by another client"), std::string::npos)
      << other.status().message();
  held.pop_back();
  EXPECT_TRUE(WaitFor([&] { return OpenDaemonGpu(socket_path_, 1).ok(); }));
}

// A client that floods requests gets them handled a few per turn: another
// client's request is answered in between, not after the whole flood.
TEST_F(DaemonServerTest, AFloodingClientDoesNotStarveAnother) {
  // Both clients' requests wait in their sockets before the loop starts, so
  // the outcome depends on the loop's order only, not on timing.
  Result<std::unique_ptr<DaemonServer>> server = DaemonServer::Listen(Options(), broker_.get());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(server).value();
  int flood = Connect();
  std::string burst;
  for (int i = 0; i < 1999; ++i) burst += "{\"op\":\"energy\",\"gpu\":0}\n";
  burst += "{\"op\":\"hello\",\"gpu\":1}\n";  // last: whoever says hello to GPU 1 first claims it
  Send(flood, burst);
  int quiet = Connect();
  Send(quiet, "{\"op\":\"hello\",\"gpu\":1}\n");
  thread_ = std::thread([this] { serve_status_ = server_->Serve(stop_[0]); });
  // A few requests a turn: the quiet client's hello comes long before the
  // flood's last line (handled all at once, the flood would claim GPU 1 first).
  EXPECT_NE(Receive(quiet, 1).find("\"ok\":true"), std::string::npos);
  const std::string answered = Receive(flood, 2000);
  ASSERT_EQ(std::count(answered.begin(), answered.end(), '\n'), 2000);  // all of it is answered
  const std::string last = answered.substr(answered.rfind('\n', answered.size() - 2) + 1);
  EXPECT_NE(last.find("\"ok\":false"), std::string::npos) << last;
  close(flood);
  close(quiet);
}

// Out of descriptors, accept() fails while the listening socket stays
// readable: the loop must pause instead of spinning and logging each failure,
// and serve the waiting client once a descriptor is free. (gtest_discover
// runs each test in its own process, so the limit stays in this test.)
TEST_F(DaemonServerTest, OutOfDescriptorsPausesAcceptingInsteadOfSpinning) {
  Start(Options());
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  std::vector<int> filler;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && filler.size() < 100000;) filler.push_back(fd);
  ASSERT_FALSE(filler.empty());
  // Leave exactly one descriptor: the client's socket takes it, the daemon's accept() finds none.
  ::close(filler.back());
  filler.pop_back();
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(filler.back() + 2);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  int client = Connect();
  ASSERT_GE(client, 0);
  Send(client, "{\"op\":\"hello\",\"gpu\":0}\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string log = Log();
  size_t accept_lines = 0;
  for (size_t at = 0; (at = log.find("accept:", at)) != std::string::npos; ++at) ++accept_lines;
  EXPECT_GE(accept_lines, 1u) << log;
  EXPECT_LE(accept_lines, 2u) << log;  // at most one a second, not one per spin
  ::close(filler.back());  // a descriptor frees: the waiting client is served
  filler.pop_back();
  EXPECT_NE(Receive(client, 1).find("\"ok\":true"), std::string::npos);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  for (int fd : filler) ::close(fd);
  close(client);
}

// perseusd restarts (an upgrade, a crash): the client's connection dies and
// the new daemon starts with every clock reset. The next call after a second
// reconnects, claims the GPU again and restores the clock it had locked.
TEST_F(DaemonServerTest, DaemonGpuReconnectsAfterARestartAndRestoresTheClock) {
  Start(Options());
  Result<std::unique_ptr<GpuControl>> gpu = OpenDaemonGpu(socket_path_, 0);
  ASSERT_TRUE(gpu.ok());
  ASSERT_TRUE((*gpu)->SetSmClockMhz(1110).ok());
  Stop();
  server_.reset();
  char drained;
  ASSERT_EQ(read(stop_[0], &drained, 1), 1);
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 0);  // the daemon reset it on the way down
  Start(Options());
  Result<double> first = (*gpu)->TotalEnergyJ();  // finds the connection gone
  EXPECT_FALSE(first.ok());
  Result<double> again = (*gpu)->TotalEnergyJ();  // reconnects
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 1110);
  EXPECT_TRUE((*gpu)->SetSmClockMhz(1200).ok());
  // With no daemon at all: one attempt, then at most one a second.
  Stop();
  server_.reset();
  ASSERT_EQ(read(stop_[0], &drained, 1), 1);
  EXPECT_FALSE((*gpu)->TotalEnergyJ().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));  // since the last attempt
  Result<double> refused = (*gpu)->TotalEnergyJ();
  EXPECT_NE(refused.status().message().find("reconnecting failed"), std::string::npos) << refused.status().message();
  Result<double> soon = (*gpu)->TotalEnergyJ();
  EXPECT_NE(soon.status().message().find("reconnecting at most once a second"), std::string::npos)
      << soon.status().message();
  Start(Options());
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  EXPECT_TRUE((*gpu)->TotalEnergyJ().ok());
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 1200);
}

TEST_F(DaemonServerTest, SocketIsGroupOnlyAndStaleFilesAreReplaced) {
  std::filesystem::create_directories(dir_ + "/run");
  int stale = socket(AF_UNIX, SOCK_STREAM, 0);  // bound, never listening: what a killed daemon leaves
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, socket_path_.c_str());
  ASSERT_EQ(bind(stale, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(stale);
  Start(Options());
  struct stat st;
  ASSERT_EQ(stat(socket_path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  // A second daemon on the same path is refused while the first one listens.
  GpuBroker other({});
  Result<std::unique_ptr<DaemonServer>> second = DaemonServer::Listen(Options(), &other);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), socket_path_ + ": another perseusd is already listening there");
}

// A daemon that is stopped (SIGSTOP, a debugger) with its queue of new
// connections full: the probe of a new daemon must not wait on it forever.
TEST_F(DaemonServerTest, ADaemonWhoseQueueIsFullIsNotWaitedFor) {
  std::filesystem::create_directories(dir_ + "/run");
  int stopped = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, socket_path_.c_str());
  ASSERT_EQ(bind(stopped, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(stopped, 0), 0);
  std::vector<int> queued;
  for (int i = 0; i < 64; ++i) {  // fill the queue; nobody accepts
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const bool full = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno == EAGAIN;
    queued.push_back(fd);
    if (full) break;
  }
  GpuBroker other({});
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<DaemonServer>> second = DaemonServer::Listen(Options(), &other);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(), socket_path_ +
                                           ": another perseusd is already listening there (its queue of new "
                                           "connections is full: is it stopped?)");
  EXPECT_TRUE(std::filesystem::exists(socket_path_));  // not taken over
  for (int fd : queued) close(fd);
  close(stopped);
}

TEST_F(DaemonServerTest, RefusesToReplaceAFileThatIsNotASocket) {
  std::filesystem::create_directories(dir_ + "/run");
  { std::ofstream(socket_path_) << "precious"; }
  Result<std::unique_ptr<DaemonServer>> server = DaemonServer::Listen(Options(), broker_.get());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().message(), socket_path_ + ": exists and is not a socket; not replacing it");
}

}  // namespace
}  // namespace perseus::runtime
