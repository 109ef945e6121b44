// `perseus status`: asks a server for its jobs and prints them for people.
#include "cli/status_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "carbon/iso_time.h"
#include "cli/cli_util.h"
#include "common/job_id.h"
#include "common/strings.h"
#include "runtime/client/server_api.h"

namespace perseus::cli {

using Json = nlohmann::json;

namespace {

std::string Num(const Json& v, const char* fmt) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v.get<double>());
  return buf;
}

// A string of the server's reply, safe for the terminal (a job id, phase or
// message with an escape sequence could rewrite what it shows).
std::string Text(const Json& v) { return EscapeControlChars(v.get<std::string>()); }

// printf into a std::string, of any length.
template <typename... Args>
void Append(std::string& out, const char* fmt, Args... args) {
  out += Format(fmt, args...);
}

void AppendCarbon(std::string& out, const Json& c) {
  if (!c["evaluated"].get<bool>()) {
    Append(out, "carbon: no decision yet (window %s s, slowdown budget %s%%)\n", Num(c["window_s"], "%.0f").c_str(),
           Num(c["slowdown_budget"].get<double>() * 100, "%.2f").c_str());
    return;
  }
  const std::string pause = c.value("pause", "never");  // compared, not printed
  const std::string running = c.value("paused", false)
                                  ? (pause == "release" ? "PAUSED (GPUs released); resumes with frontier plan "
                                                        : "PAUSED (ranks wait holding their GPUs); resumes with frontier plan ")
                                  : "frontier plan ";
  Append(out, "carbon: %s gCO2/kWh now%s, %s forecast%s; %s%d (%s s, %s J)\n",
         Num(c["intensity_g_per_kwh"], "%.1f").c_str(), c["stale"].get<bool>() ? " (stale)" : "",
         Num(c["forecast_g_per_kwh"], "%.1f").c_str(),
         c.value("forecast_with_fuel_mix", false) ? " (with the fuel mix)" : "", running.c_str(), c["plan_index"].get<int>(),
         Num(c["plan_time_s"], "%.4f").c_str(), Num(c["plan_energy_j"], "%.1f").c_str());
  Append(out, "  slowdown so far %s%% of a %s%% budget; next decision at %s\n",
         Num(c["slowdown_so_far"].get<double>() * 100, "%.2f").c_str(),
         Num(c["slowdown_budget"].get<double>() * 100, "%.2f").c_str(),
         carbon::FormatIsoUtc(c["next_eval_unix_s"].get<int64_t>()).c_str());
  if (!c["explanation"].get<std::string>().empty()) Append(out, "  why: %s\n", Text(c["explanation"]).c_str());
}

void AppendPowerCap(std::string& out, const Json& p) {
  Append(out, "power cap: %s W average over %s s (%s)", Num(p["average_w"], "%.0f").c_str(),
         Num(p["window_s"], "%.0f").c_str(), Text(p["source"]).c_str());
  if (p.value("server_share_w", Json()).is_number()) {
    Append(out, "; server share %s W, own cap %s W", Num(p["server_share_w"], "%.0f").c_str(),
           Num(p.value("own_average_w", Json()), "%.0f").c_str());
  }
  if (p["running"] == "paused") {
    Append(out, "\n  paused by the carbon policy: predicted %s W (the GPUs idle), measured %s W before the pause\n",
           Num(p["predicted_w"], "%.0f").c_str(), Num(p["measured_w"], "%.0f").c_str());
    return;
  }
  Append(out, "\n  predicted %s W, measured %s W, running the %s setting (%s of each window fast)%s\n",
         Num(p["predicted_w"], "%.0f").c_str(), Num(p["measured_w"], "%.0f").c_str(),
         Text(p["running"]).c_str(), Num(p["fast_share"], "%.2f").c_str(),
         p["feasible"] == false ? "; infeasible: the least power the frontier offers is above the cap" : "");
}

}  // namespace

std::string FormatServerPowerCap(const Json& cap) {
  std::string out;
  if (!cap.is_object()) return out;
  if (cap.value("error", Json()).is_string()) {
    Append(out, "warning: the server's power cap is not in force: %s\n", Text(cap["error"]).c_str());
  }
  if (!cap["cap"].is_object()) return out;
  Append(out, "server power cap: %s W average over %s s, %s W shared by %zu running jobs", Num(cap["cap"]["average_w"], "%.0f").c_str(),
         Num(cap["cap"]["window_s"], "%.0f").c_str(), Num(cap["shared_w"], "%.0f").c_str(), cap["jobs"].size());
  for (size_t k = 0; k < cap["jobs"].size(); ++k) {
    const Json& j = cap["jobs"][k];
    Append(out, "%s%s %s W", k == 0 ? " (" : ", ", Text(j["id"]).c_str(), Num(j["share_w"], "%.0f").c_str());
  }
  Append(out, "%s%s\n", cap["jobs"].empty() ? "" : ")",
         cap["feasible"] == false ? "; infeasible: the jobs' slowest settings alone exceed it" : "");
  return out;
}

std::string FormatJobList(const Json& reply) {
  std::string out;
  if (reply["jobs"].empty()) {
    out = "no jobs\n";
  } else {
    Append(out, "%-24s %-12s %-8s %s\n", "JOB", "PHASE", "RANKS", "WARNINGS");
    for (const Json& j : reply["jobs"]) {
      Append(out, "%-24s %-12s %-8s %zu\n", Text(j["id"]).c_str(), Text(j["phase"]).c_str(),
             (std::to_string(j["ranks_registered"].get<int>()) + "/" + std::to_string(j["world_size"].get<int>())).c_str(),
             j.value("warnings", Json::array()).size());
    }
  }
  for (const Json& q : reply.value("quarantined", Json::array())) {
    Append(out, "warning: job %s is quarantined: %s (DELETE /jobs/%s removes it)\n", Text(q["id"]).c_str(),
           Text(q["error"]).c_str(), Text(q["id"]).c_str());
  }
  const int64_t unknown = reply.value("unknown_rank_requests", int64_t{0});
  if (unknown > 0) {
    Append(out, "warning: %lld rank requests named a job or rank this server does not know (a wrong job id or rank "
                "in a training job?)\n", static_cast<long long>(unknown));
  }
  return out;
}

std::string FormatJobStatus(const Json& j) {
  std::string out;
  const Json& spec = j["spec"];
  Append(out, "job %s: %s (dp %d, pp %d, tp %d, %s, %d microbatches), ranks %d/%d\n",
         Text(j["id"]).c_str(), Text(j["phase"]).c_str(), spec["dp"].get<int>(),
         spec["pp"].get<int>(), spec["tp"].get<int>(), Text(spec["schedule"]).c_str(),
         spec["microbatches"].get<int>(), j["ranks_registered"].get<int>(), j["world_size"].get<int>());
  if (!j["error"].get<std::string>().empty()) Append(out, "error: %s\n", Text(j["error"]).c_str());
  if (const Json solving = j.value("solving_s", Json()); solving.is_number()) {  // an older server sends none
    Append(out, "optimizing for %.0f s\n", solving.get<double>());
  }
  const Json& prof = j.value("profiling", Json());
  if (prof.is_object() && prof.contains("stages")) {
    Append(out, "profiling: window %d of %d (%s), %d clocks per stage, %d ranks reported\n", prof["window"].get<int>() + 1,
           prof["windows"].get<int>(), Text(prof["purpose"]).c_str(),
           prof["clocks_per_stage"].get<int>(), prof["reported"].get<int>());
    for (const Json& s : prof["stages"]) {
      Append(out, "  stage %d: forward %d MHz, backward %d MHz\n", s["stage"].get<int>(),
             s["forward_clock_mhz"].get<int>(), s["backward_clock_mhz"].get<int>());
    }
  }
  for (const Json& w : j.value("warnings", Json::array())) {
    std::string where;
    if (w["stage"].get<int>() >= 0) where += " stage " + std::to_string(w["stage"].get<int>());
    if (w["rank"].get<int>() >= 0) where += " rank " + std::to_string(w["rank"].get<int>());
    Append(out, "warning [%s%s]: %s\n", Text(w["code"]).c_str(), where.c_str(),
           Text(w["message"]).c_str());
  }
  if (j.contains("frontier")) {
    const Json& f = j["frontier"];
    Append(out, "frontier: %d plans; all-max %s s %s J; fastest %s s %s J; min-energy %s s %s J\n",
           f["plans"].get<int>(), Num(f["all_max"]["time_s"], "%.4f").c_str(),
           Num(f["all_max"]["energy_j"], "%.1f").c_str(), Num(f["fastest"]["time_s"], "%.4f").c_str(),
           Num(f["fastest"]["energy_j"], "%.1f").c_str(), Num(f["min_energy"]["time_s"], "%.4f").c_str(),
           Num(f["min_energy"]["energy_j"], "%.1f").c_str());
  }
  if (j.contains("carbon")) AppendCarbon(out, j["carbon"]);
  if (j.value("power_cap", Json()).is_object()) AppendPowerCap(out, j["power_cap"]);
  for (const Json& p : j["pipelines"]) {
    const Json ceiling = p.value("clock_ceiling_mhz", Json());
    Append(out, "  pipeline %d: plan %d%s, predicted %s s %s J, measured %s s %s J\n", p["pipeline"].get<int>(),
           p["plan_index"].get<int>(),
           ceiling.is_number() ? (" with clocks at most " + std::to_string(ceiling.get<int>()) + " MHz").c_str() : "",
           Num(p["predicted_time_s"], "%.4f").c_str(), Num(p["predicted_energy_j"], "%.1f").c_str(),
           Num(p["measured_time_s"], "%.4f").c_str(), Num(p["measured_energy_j"], "%.1f").c_str());
  }
  for (const Json& s : j["stragglers"]) {
    Append(out, "  straggler: pipeline %d, slowdown %.3f (%s)\n", s["pipeline"].get<int>(), s["slowdown"].get<double>(),
           Text(s["source"]).c_str());
  }
  return out;
}

int RunStatus(const StatusArgs& args) {
  Result<std::string> token = ReadToken(args.token_file);  // a server started with --token-for-reads needs it
  if (!token.ok()) return ReportError(token.status());
  const client::ServerAddress address{args.server, *token, args.ca_cert};
  if (Status st = client::CheckServerAddress(address, "--server", "--ca-cert"); !st.ok()) return ReportError(st);
  client::ServerApi api(address);
  Result<Json> reply = api.Get(args.job.empty() ? "/jobs" : "/jobs/" + args.job);
  if (!reply.ok()) {
    std::cerr << "perseus: error: " << reply.status().message() << "\n";
    return 1;
  }
  if (args.json) {
    std::cout << reply->dump(2, ' ', /*ensure_ascii=*/true) << "\n";  // no raw C1 control for the terminal
    return 0;
  }
  // The tables read the fields a perseus server sends; a reply of another
  // shape (another program on that port, a server from a future release) is
  // an error, not a crash.
  try {
    std::string text;
    if (args.job.empty()) {
      text = FormatJobList(*reply);
      Result<Json> cap = api.Get("/power-cap");  // an older server has none: nothing to show
      if (cap.ok()) text += FormatServerPowerCap(cap->value("power_cap", Json()));
    } else {
      text = FormatJobStatus(*reply);
    }
    std::cout << text;
  } catch (const Json::exception& e) {
    std::cerr << "perseus: error: the server's reply to GET " << (args.job.empty() ? "/jobs" : "/jobs/" + args.job)
              << " lacks a field this perseus reads, or has it of another type (" << JsonErrorText(e)
              << "); is it a perseus server of this release? (--json prints the reply as it is)\n";
    return 1;
  }
  return 0;
}

void RegisterStatusCommand(CLI::App& app) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand("status", "Show the jobs of a perseus server");
  cmd->add_option("--server", args->server, "Server URL")->capture_default_str();
  // Checked here, so `--job ""` is an error and not the list of jobs.
  cmd->add_option("--job", args->job, "Show this job in detail")->check(CLI::Validator(
      [](std::string& job) {
        return IsValidJobId(job) ? std::string() : "expected " + std::string(kJobIdRule) + ", got '" + EscapeControlChars(job) + "'";
      },
      "JOB"));
  cmd->add_option("--token-file", args->token_file,
                  "File holding the server's token, for a server started with --token-for-reads (else $PERSEUS_TOKEN)");
  cmd->add_flag("--json", args->json, "Print the server's JSON reply");
  cmd->add_option("--ca-cert", args->ca_cert, "https: PEM CA bundle to verify the server with (default: $PERSEUS_CA_CERT, "
                                              "else the system's)");
  cmd->callback([args] {
    int rc = RunStatus(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace perseus::cli
