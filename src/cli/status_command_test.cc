// `perseus status` text for a job reply: the carbon section before and after
// the first decision, and jobs without one; the profiling window and warnings.
#include <gtest/gtest.h>

#include "cli/status_command.h"

namespace perseus::cli {
namespace {

using Json = nlohmann::json;

Json RunningJob() {
  return {{"id", "gpt"},
          {"phase", "running"},
          {"error", ""},
          {"spec", {{"dp", 2}, {"pp", 4}, {"tp", 1}, {"schedule", "1f1b"}, {"microbatches", 8}}},
          {"ranks_registered", 8},
          {"world_size", 8},
          {"profiling", nullptr},
          {"warnings", Json::array()},
          {"pipelines", Json::array({{{"pipeline", 0}, {"plan_index", 3}, {"predicted_time_s", 2.9},
                                      {"predicted_energy_j", 6100.0}, {"measured_time_s", nullptr},
                                      {"measured_energy_j", nullptr}}})},
          {"stragglers", Json::array()}};
}

TEST(StatusCommand, ShowsTheCarbonDecision) {
  Json job = RunningJob();
  job["carbon"] = {{"evaluated", true},         {"intensity_g_per_kwh", 412.04}, {"stale", true},
                   {"forecast_g_per_kwh", 398.5}, {"plan_index", 3},              {"plan_time_s", 2.9},
                   {"plan_energy_j", 6100.0},     {"slowdown_so_far", 0.012},     {"slowdown_budget", 0.025},
                   {"window_s", 3600},            {"next_eval_unix_s", 1767225600}, {"explanation", "grid dirtier than usual"}};
  std::string text = FormatJobStatus(job);
  EXPECT_NE(text.find("carbon: 412.0 gCO2/kWh now (stale), 398.5 forecast; frontier plan 3 (2.9000 s, 6100.0 J)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("slowdown so far 1.20% of a 2.50% budget; next decision at 2026-01-01T00:00:00Z"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("why: grid dirtier than usual"), std::string::npos) << text;
  EXPECT_NE(text.find("pipeline 0: plan 3, predicted 2.9000 s 6100.0 J, measured - s - J"), std::string::npos) << text;
  // A server that forecast from the grid's fuel mix says so.
  job["carbon"]["forecast_with_fuel_mix"] = true;
  text = FormatJobStatus(job);
  EXPECT_NE(text.find("398.5 forecast (with the fuel mix); frontier plan 3"), std::string::npos) << text;
  // A paused job says how it pauses and what it resumes with.
  job["carbon"]["paused"] = true;
  job["carbon"]["pause"] = "hold";
  text = FormatJobStatus(job);
  EXPECT_NE(text.find("; PAUSED (ranks wait holding their GPUs); resumes with frontier plan 3 (2.9000 s"),
            std::string::npos)
      << text;
  job["carbon"]["pause"] = "release";
  text = FormatJobStatus(job);
  EXPECT_NE(text.find("; PAUSED (GPUs released); resumes with frontier plan 3"), std::string::npos) << text;
}

TEST(StatusCommand, CarbonBeforeTheFirstDecisionAndWithoutCarbon) {
  Json job = RunningJob();
  job["carbon"] = {{"evaluated", false}, {"slowdown_budget", 0.05}, {"window_s", 900}, {"stale", false},
                   {"intensity_g_per_kwh", nullptr}, {"explanation", ""}};
  EXPECT_NE(FormatJobStatus(job).find("carbon: no decision yet (window 900 s, slowdown budget 5.00%)"), std::string::npos);
  EXPECT_EQ(FormatJobStatus(RunningJob()).find("carbon"), std::string::npos);
}

TEST(StatusCommand, ShowsTheProfilingWindowAndWarnings) {
  Json job = RunningJob();
  job["phase"] = "profiling";
  job["profiling"] = {{"window", 11}, {"windows", 46}, {"rounds", 0}, {"reported", 5}, {"clocks_per_stage", 20},
                      {"purpose", "cross"},
                      {"stages", Json::array({{{"stage", 0}, {"forward_clock_mhz", 1200}, {"backward_clock_mhz", 1410}}})}};
  job["warnings"] = Json::array({{{"code", "schedule_mismatch"}, {"stage", 1}, {"rank", 3},
                                  {"message", "rank 3 ran computations in another order"}},
                                 {{"code", "clock_has_no_effect"}, {"stage", 2}, {"rank", -1}, {"message", "stage 2's time"}}});
  std::string text = FormatJobStatus(job);
  EXPECT_NE(text.find("profiling: window 12 of 46 (cross), 20 clocks per stage, 5 ranks reported"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  stage 0: forward 1200 MHz, backward 1410 MHz"), std::string::npos) << text;
  EXPECT_NE(text.find("warning [schedule_mismatch stage 1 rank 3]: rank 3 ran computations in another order"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("warning [clock_has_no_effect stage 2]: stage 2's time"), std::string::npos) << text;
}

TEST(StatusCommand, ShowsHowLongASolveHasRun) {
  Json job = RunningJob();
  job["phase"] = "optimizing";
  job["solving_s"] = 125.4;
  EXPECT_NE(FormatJobStatus(job).find("optimizing for 125 s\n"), std::string::npos)
      << FormatJobStatus(job);
  job["solving_s"] = nullptr;
  EXPECT_EQ(FormatJobStatus(job).find("optimizing for"), std::string::npos);
  job.erase("solving_s");  // an older server
  EXPECT_EQ(FormatJobStatus(job).find("optimizing for"), std::string::npos);
}

TEST(StatusCommand, JobListCountsWarningsAndUnknownRankRequests) {
  Json reply = {{"jobs", Json::array({{{"id", "gpt"}, {"phase", "running"}, {"ranks_registered", 8}, {"world_size", 8},
                                       {"warnings", Json::array({Json::object()})}}})},
                {"unknown_rank_requests", 3},
                {"quarantined", Json::array({{{"id", "old"}, {"error", "stored rank 3 does not fit the job"}}})}};
  std::string text = FormatJobList(reply);
  EXPECT_NE(text.find("warning: job old is quarantined: stored rank 3 does not fit the job (DELETE /jobs/old"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpt                      running      8/8      1"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: 3 rank requests named a job or rank this server does not know"), std::string::npos)
      << text;
  EXPECT_EQ(FormatJobList({{"jobs", Json::array()}}), "no jobs\n");
}

// The server's strings reach a terminal: an escape sequence in a job id,
// phase or message is shown as text, not run (a review, 2026-11-29).
TEST(StatusCommand, EscapeSequencesFromTheServerAreShownNotRun) {
  Json reply = {{"jobs", Json::array({{{"id", "a\x1b]0;pwned\x07"}, {"phase", "run\x1b[2J"}, {"ranks_registered", 1},
                                       {"world_size", 1}}})},
                {"quarantined", Json::array({{{"id", "q"}, {"error", "bad\r\nline \xc2\x9b" "31m"}}})}};
  std::string text = FormatJobList(reply);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("a\\x1b]0;pwned\\x07"), std::string::npos) << text;
  EXPECT_NE(text.find("run\\x1b[2J"), std::string::npos) << text;
  EXPECT_NE(text.find("quarantined: bad\\x0d\\nline \\u009b31m (DELETE"), std::string::npos) << text;
}

TEST(StatusCommand, ShowsPowerCaps) {
  Json job = RunningJob();
  job["power_cap"] = {{"average_w", 50000.0}, {"window_s", 60}, {"source", "server"}, {"server_share_w", 50000.0},
                      {"own_average_w", nullptr}, {"predicted_w", 49990.0}, {"measured_w", nullptr},
                      {"running", "fast"}, {"fast_share", 0.42}, {"feasible", true}, {"peak_w", nullptr}};
  std::string text = FormatJobStatus(job);
  EXPECT_NE(text.find("power cap: 50000 W average over 60 s (server); server share 50000 W, own cap - W\n"
                      "  predicted 49990 W, measured - W, running the fast setting (0.42 of each window fast)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(FormatJobStatus(RunningJob()).find("power cap"), std::string::npos);
  Json paused = job;  // a carbon pause: the job is counted at its idle GPUs' power
  paused["power_cap"]["running"] = "paused";
  paused["power_cap"]["predicted_w"] = 480.0;
  paused["power_cap"]["fast_share"] = nullptr;
  paused["power_cap"]["measured_w"] = 41000.0;
  text = FormatJobStatus(paused);
  EXPECT_NE(text.find("server share 50000 W, own cap - W\n"
                      "  paused by the carbon policy: predicted 480 W (the GPUs idle), measured 41000 W before the pause\n"),
            std::string::npos)
      << text;
  job["pipelines"][0]["clock_ceiling_mhz"] = 705;
  EXPECT_NE(FormatJobStatus(job).find("pipeline 0: plan 3 with clocks at most 705 MHz, predicted"), std::string::npos)
      << FormatJobStatus(job);
  const Json cap = {{"cap", {{"average_w", 120000.0}, {"window_s", 60.0}}},
                    {"jobs", Json::array({{{"id", "a"}, {"share_w", 70000.0}}, {{"id", "b"}, {"share_w", 50000.0}}})},
                    {"shared_w", 120000.0}, {"feasible", false}, {"error", nullptr}};
  EXPECT_EQ(FormatServerPowerCap(cap),
            "server power cap: 120000 W average over 60 s, 120000 W shared by 2 running jobs (a 70000 W, b 50000 W); "
            "infeasible: the jobs' slowest settings alone exceed it\n");
  EXPECT_EQ(FormatServerPowerCap({{"cap", nullptr}, {"jobs", Json::array()}, {"error", nullptr}}), "");
  EXPECT_EQ(FormatServerPowerCap({{"cap", nullptr}, {"jobs", Json::array()}, {"error", "stored server power cap: bad"}}),
            "warning: the server's power cap is not in force: stored server power cap: bad\n");
}

}  // namespace
}  // namespace perseus::cli
