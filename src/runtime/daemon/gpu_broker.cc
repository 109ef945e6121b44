// GpuBroker: request validation, claims and clean-up.
#include "runtime/daemon/gpu_broker.h"

#include <climits>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "runtime/gpu/daemon_protocol.h"

namespace perseus::runtime {
namespace {

using nlohmann::json;

// Never throws: invalid UTF-8 from a client is replaced, not rejected.
std::string Dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }


struct OpSpec {
  const char* name;
  bool needs_clock;  // the request carries sm_clock_mhz
};

constexpr OpSpec kOps[] = {{"hello", false},  {"set_clock", true}, {"reset", false},
                           {"supported_clocks", false}, {"energy", false}, {"power", false}};

struct Request {
  std::string op;
  int gpu = 0;
  int sm_clock_mhz = 0;
};

Result<const OpSpec*> ParseOp(const json& request) {
  auto it = request.find("op");
  if (it == request.end()) return FieldError("op", "missing");
  if (!it->is_string()) return FieldError("op", "expected a string, got " + Quote(*it));
  const std::string& op = it->get_ref<const std::string&>();
  for (const OpSpec& spec : kOps) {
    if (op == spec.name) return &spec;
  }
  return FieldError("op", "unknown operation " + Quote(*it) +
                              " (expected hello, set_clock, reset, supported_clocks, energy or power)");
}

// An integer field in [min, INT_MAX].
Result<int> ParseInt(const json& request, const std::string& field, int min, const std::string& expected) {
  auto it = request.find(field);
  if (it == request.end()) return FieldError(field, "missing");
  int64_t value = 0;
  if (it->is_number_unsigned()) {
    value = it->get<uint64_t>() <= INT_MAX ? static_cast<int64_t>(it->get<uint64_t>()) : int64_t{INT_MAX} + 1;
  } else if (it->is_number_integer()) {
    value = it->get<int64_t>();
  } else {
    value = int64_t{min} - 1;  // not an integer: always out of range
  }
  if (value < min || value > INT_MAX) return FieldError(field, "expected " + expected + ", got " + Quote(*it));
  return static_cast<int>(value);
}

Result<Request> ParseRequest(std::string_view line, int gpu_count) {
  Result<Json> parsed = ParseJsonObject(line, "request");
  if (!parsed.ok()) return parsed.status();
  const Json& request = *parsed;
  Result<const OpSpec*> op = ParseOp(request);
  if (!op.ok()) return op.status();
  for (const auto& [key, value] : request.items()) {
    if (key != "op" && key != "gpu" && !(key == "sm_clock_mhz" && (*op)->needs_clock)) {
      return FieldError(key, std::string("not allowed in a '") + (*op)->name + "' request");
    }
  }
  Request out;
  out.op = (*op)->name;
  Result<int> gpu = ParseInt(request, "gpu", 0, "a GPU index (integer >= 0)");
  if (!gpu.ok()) return gpu.status();
  if (*gpu >= gpu_count) {
    return FieldError("gpu", "no GPU " + std::to_string(*gpu) + " on this node (it has " + std::to_string(gpu_count) +
                                 ": 0-" + std::to_string(gpu_count - 1) + ")");
  }
  out.gpu = *gpu;
  if ((*op)->needs_clock) {
    Result<int> clock = ParseInt(request, "sm_clock_mhz", 1, "a positive integer (MHz)");
    if (!clock.ok()) return clock.status();
    out.sm_clock_mhz = *clock;
  }
  return out;
}

std::string OkReply(json reply) {
  reply["ok"] = true;
  return Dump(reply);
}

std::string Holder(const BrokerClient& c) {
  return "pid " + std::to_string(c.pid) + ", uid " + std::to_string(c.uid);
}

}  // namespace

std::string ErrorReply(const Status& status) {
  return Dump(json{{"ok", false}, {"error", status.message()}, {"code", StatusCodeName(status.code())}});
}

GpuBroker::GpuBroker(std::vector<std::unique_ptr<GpuControl>> gpus) {
  for (std::unique_ptr<GpuControl>& gpu : gpus) {
    Slot slot;
    slot.gpu = std::move(gpu);
    gpus_.push_back(std::move(slot));
  }
}

std::string GpuBroker::Handle(const BrokerClient& client, std::string_view line) {
  Result<Request> parsed = ParseRequest(line, gpu_count());
  if (!parsed.ok()) return ErrorReply(parsed.status());
  const Request& r = *parsed;
  Slot& slot = gpus_[r.gpu];
  const std::string label = "GPU " + std::to_string(r.gpu);
  const bool mine = slot.claimed && slot.holder.id == client.id;
  const bool changes_clock = r.op == "set_clock" || r.op == "reset";
  if ((r.op == "hello" || changes_clock) && slot.claimed && !mine) {
    return ErrorReply(Status::Unavailable(label + " is claimed by another client (" + Holder(slot.holder) + ")"));
  }
  if (changes_clock && !mine) {
    return ErrorReply(Status::InvalidArgument(label + " is not claimed by this connection; send {\"op\":\"hello\",\"gpu\":" +
                                              std::to_string(r.gpu) + "} first"));
  }
  json reply = {{"gpu", r.gpu}};
  if (r.op == "hello") {
    slot.claimed = true;
    slot.holder = client;
    reply["name"] = slot.gpu->Name();
    reply["uuid"] = slot.gpu->Uuid();
  } else if (r.op == "set_clock") {
    Status s = slot.gpu->SetSmClockMhz(r.sm_clock_mhz);
    if (s.code() == Status::Code::kInvalidArgument) return ErrorReply(s.WithContext("field 'sm_clock_mhz'"));
    if (!s.ok()) return ErrorReply(s);
    slot.locked = true;
    reply["sm_clock_mhz"] = r.sm_clock_mhz;
  } else if (r.op == "reset") {
    Status s = slot.gpu->ResetSmClock();
    if (!s.ok()) return ErrorReply(s);
    slot.locked = false;
  } else if (r.op == "supported_clocks") {
    Result<std::vector<int>> clocks = slot.gpu->SupportedSmClocksMhz();
    if (!clocks.ok()) return ErrorReply(clocks.status());
    reply["sm_clocks_mhz"] = *clocks;
  } else if (r.op == "energy") {
    Result<double> energy = slot.gpu->TotalEnergyJ();
    if (!energy.ok()) return ErrorReply(energy.status());
    reply["energy_j"] = *energy;
  } else {  // power
    Result<double> power = slot.gpu->PowerW();
    if (!power.ok()) return ErrorReply(power.status());
    reply["power_w"] = *power;
  }
  return OkReply(std::move(reply));
}

std::vector<GpuReset> GpuBroker::Release(const BrokerClient& client) {
  std::vector<GpuReset> resets;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    Slot& slot = gpus_[i];
    if (!slot.claimed || slot.holder.id != client.id) continue;
    if (slot.locked) resets.push_back(GpuReset{static_cast<int>(i), slot.gpu->ResetSmClock()});
    slot.claimed = false;
    slot.locked = false;
  }
  return resets;
}

std::vector<GpuReset> GpuBroker::ResetAll() {
  std::vector<GpuReset> resets;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    resets.push_back(GpuReset{static_cast<int>(i), gpus_[i].gpu->ResetSmClock()});
    gpus_[i].claimed = false;
    gpus_[i].locked = false;
  }
  return resets;
}

}  // namespace perseus::runtime
