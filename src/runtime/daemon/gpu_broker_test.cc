// Tests of the perseusd request handling: claims, clean-up and the exact
// error texts of bad requests, with in-memory FakeGpus.
#include "runtime/daemon/gpu_broker.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/gpu/fake_gpu.h"

namespace perseus::runtime {
namespace {

using nlohmann::json;

class GpuBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::unique_ptr<GpuControl>> gpus;
    for (int i = 0; i < 2; ++i) {
      auto gpu = std::make_unique<FakeGpu>(i);
      fakes_.push_back(gpu.get());
      gpus.push_back(std::move(gpu));
    }
    broker_ = std::make_unique<GpuBroker>(std::move(gpus));
  }

  json Ask(const BrokerClient& client, const std::string& line) {
    return json::parse(broker_->Handle(client, line));
  }
  // The error text of a request that must fail.
  std::string Error(const std::string& line) {
    json reply = Ask(alice_, line);
    EXPECT_EQ(reply["ok"], false) << line;
    return reply.value("error", "");
  }

  std::vector<FakeGpu*> fakes_;
  std::unique_ptr<GpuBroker> broker_;
  BrokerClient alice_{1, 100, 1000};
  BrokerClient bob_{2, 200, 1001};
};

TEST_F(GpuBrokerTest, HelloClaimsAndSetClockLocks) {
  json hello = Ask(alice_, R"({"op":"hello","gpu":1})");
  EXPECT_EQ(hello, json::parse(R"({"ok":true,"gpu":1,"name":"Fake A100","uuid":"GPU-fake-1"})"));
  EXPECT_EQ(Ask(alice_, R"({"op":"set_clock","gpu":1,"sm_clock_mhz":1200})"),
            json::parse(R"({"ok":true,"gpu":1,"sm_clock_mhz":1200})"));
  EXPECT_EQ(fakes_[1]->LockedSmClockMhz(), 1200);
  EXPECT_EQ(Ask(alice_, R"({"op":"reset","gpu":1})"), json::parse(R"({"ok":true,"gpu":1})"));
  EXPECT_EQ(fakes_[1]->LockedSmClockMhz(), 0);
}

TEST_F(GpuBrokerTest, ReadsNeedNoClaim) {
  fakes_[0]->SetEnergyJ(12.5);
  fakes_[0]->SetPowerW(250);
  EXPECT_EQ(Ask(bob_, R"({"op":"energy","gpu":0})"), json::parse(R"({"ok":true,"gpu":0,"energy_j":12.5})"));
  EXPECT_EQ(Ask(bob_, R"({"op":"power","gpu":0})"), json::parse(R"({"ok":true,"gpu":0,"power_w":250.0})"));
  json clocks = Ask(bob_, R"({"op":"supported_clocks","gpu":0})");
  EXPECT_EQ(clocks["sm_clocks_mhz"].size(), 81u);
  EXPECT_EQ(clocks["sm_clocks_mhz"][0], 1410);
}

TEST_F(GpuBrokerTest, OneClientPerGpu) {
  Ask(alice_, R"({"op":"hello","gpu":0})");
  EXPECT_EQ(Ask(alice_, R"({"op":"hello","gpu":0})")["ok"], true);  // alice again: fine
  json refused = Ask(bob_, R"({"op":"hello","gpu":0})");
  json expected = {{"ok", false}, {"code", "unavailable"},
                   {"error", "GPU 0 is claimed by another client (pid 100, uid 1000)"}};
  EXPECT_EQ(refused, expected);
  EXPECT_EQ(Ask(bob_, R"({"op":"set_clock","gpu":0,"sm_clock_mhz":1200})")["error"],
            "GPU 0 is claimed by another client (pid 100, uid 1000)");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":1,"sm_clock_mhz":1200})"),
            R"(GPU 1 is not claimed by this connection; send {"op":"hello","gpu":1} first)");
  EXPECT_EQ(fakes_[0]->SetCount() + fakes_[1]->SetCount(), 0);
}

TEST_F(GpuBrokerTest, ReleaseResetsOnlyWhatTheClientLocked) {
  Ask(alice_, R"({"op":"hello","gpu":0})");
  Ask(alice_, R"({"op":"hello","gpu":1})");
  Ask(alice_, R"({"op":"set_clock","gpu":0,"sm_clock_mhz":1005})");
  std::vector<GpuReset> resets = broker_->Release(bob_);
  EXPECT_TRUE(resets.empty());
  resets = broker_->Release(alice_);
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0].gpu, 0);
  EXPECT_TRUE(resets[0].status.ok());
  EXPECT_EQ(fakes_[0]->LockedSmClockMhz(), 0);
  EXPECT_EQ(fakes_[1]->ResetCount(), 0);
  EXPECT_EQ(Ask(bob_, R"({"op":"hello","gpu":0})")["ok"], true);  // the claim is free again
}

TEST_F(GpuBrokerTest, ResetAllResetsEveryGpu) {
  std::vector<GpuReset> resets = broker_->ResetAll();
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(fakes_[0]->ResetCount(), 1);
  EXPECT_EQ(fakes_[1]->ResetCount(), 1);
}

TEST_F(GpuBrokerTest, GpuErrorsPassThroughWithTheirCode) {
  Ask(alice_, R"({"op":"hello","gpu":0})");
  fakes_[0]->SetError(Status::Unavailable("GPU 0: nvmlDeviceSetGpuLockedClocks(1200): Insufficient Permissions"));
  json expected = {{"ok", false}, {"code", "unavailable"},
                   {"error", "GPU 0: nvmlDeviceSetGpuLockedClocks(1200): Insufficient Permissions"}};
  EXPECT_EQ(Ask(alice_, R"({"op":"set_clock","gpu":0,"sm_clock_mhz":1200})"), expected);
  std::vector<GpuReset> resets = broker_->Release(alice_);
  EXPECT_TRUE(resets.empty());  // nothing was locked
}

TEST_F(GpuBrokerTest, BadRequestsNameTheField) {
  Ask(alice_, R"({"op":"hello","gpu":0})");
  EXPECT_EQ(Error("set_clock 1200"), "request: malformed JSON at byte 1");
  EXPECT_EQ(Error("[1,2]"), "request: expected a JSON object, got [1,2]");
  // The last of two values would otherwise win silently.
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0,"sm_clock_mhz":1200,"sm_clock_mhz":210})"),
            "field 'sm_clock_mhz': given twice in one object");
  EXPECT_EQ(Error(R"({"gpu":0})"), "field 'op': missing");
  EXPECT_EQ(Error(R"({"op":7,"gpu":0})"), "field 'op': expected a string, got 7");
  EXPECT_EQ(Error(R"({"op":"overclock","gpu":0})"),
            "field 'op': unknown operation \"overclock\" (expected hello, set_clock, reset, supported_clocks, energy "
            "or power)");
  EXPECT_EQ(Error(R"({"op":"reset"})"), "field 'gpu': missing");
  EXPECT_EQ(Error(R"({"op":"reset","gpu":"0"})"), "field 'gpu': expected a GPU index (integer >= 0), got \"0\"");
  EXPECT_EQ(Error(R"({"op":"reset","gpu":-1})"), "field 'gpu': expected a GPU index (integer >= 0), got -1");
  EXPECT_EQ(Error(R"({"op":"reset","gpu":2})"), "field 'gpu': no GPU 2 on this node (it has 2: 0-1)");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0})"), "field 'sm_clock_mhz': missing");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0,"sm_clock_mhz":1200.5})"),
            "field 'sm_clock_mhz': expected a positive integer (MHz), got 1200.5");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0,"sm_clock_mhz":99999999999})"),
            "field 'sm_clock_mhz': expected a positive integer (MHz), got 99999999999");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0,"sm_clock_mhz":2100})"),
            "field 'sm_clock_mhz': GPU 0: 2100 MHz is not a supported SM clock (nearest: 1410 MHz; supported: "
            "210-1410 MHz)");
  EXPECT_EQ(Error(R"({"op":"reset","gpu":0,"sm_clock_mhz":1200})"),
            "field 'sm_clock_mhz': not allowed in a 'reset' request");
  EXPECT_EQ(Error(R"({"op":"set_clock","gpu":0,"sm_clock":1200})"),
            "field 'sm_clock': not allowed in a 'set_clock' request");
  EXPECT_EQ(fakes_[0]->SetCount(), 0);
}

TEST_F(GpuBrokerTest, InvalidUtf8NeverBreaksTheReply) {
  std::string reply = broker_->Handle(alice_, "{\"op\":\"\xff\xfe\",\"gpu\":0}");
  json parsed = json::parse(reply, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << reply;
  EXPECT_EQ(parsed["ok"], false);
}

}  // namespace
}  // namespace perseus::runtime
