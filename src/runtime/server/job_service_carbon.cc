// JobService: the carbon policy applied to running jobs (docs/carbon.md, "In the server").
//
// Each window of a job with a carbon config: read the intensity, forecast the
// next window (BlendForecaster over the stored per-window history), price time
// with LambdaForWork over the coming day and choose the frontier plan with
// ChooseOption. Slowdown is counted against the fastest plan; a guard keeps
// the policy's average slowdown within the budget at every window boundary.
// The chosen plan is a floor for every pipeline (AssignPlans), so straggler
// handling still applies on top.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <mutex>

#include "carbon/blend_forecaster.h"
#include "carbon/carbon_policy.h"
#include "carbon/electricitymaps_source.h"
#include "carbon/iso_time.h"
#include "carbon/knob_options.h"
#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

constexpr int64_t kMaxHorizonWindows = 288;  // LambdaForWork looks a day ahead, at most this many windows
constexpr size_t kMaxHistory = 28 * 24;      // hours of intensity kept for the forecaster
constexpr const char* kFrontierLabel = "frontier plan ";

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The frontier's convex-hull plans; slowdown is measured against the fastest plan.
carbon::KnobSet ServerKnobs(const Frontier& f) {
  carbon::KnobSet k = carbon::FrontierKnobs(f);
  k.reference = {"fastest plan", f.plans.front().time_s, f.plans.front().energy_j};
  return k;
}

int PlanIndexOf(const carbon::KnobOption& o) {
  return std::stoi(o.label.substr(std::char_traits<char>::length(kFrontierLabel)));
}

Result<std::unique_ptr<carbon::IntensitySource>> MakeSource(const CarbonConfig& c, carbon::LogFn log) {
  if (c.source == "fixed") return std::unique_ptr<carbon::IntensitySource>(new carbon::FixedIntensitySource(c.value_g_per_kwh));
  if (c.source == "trace") {
    Result<carbon::IntensityTrace> trace = carbon::LoadCsvTrace(c.trace_path);
    if (!trace.ok()) return trace.status().WithContext("carbon.trace_path");
    return std::unique_ptr<carbon::IntensitySource>(new carbon::TraceIntensitySource(std::move(*trace)));
  }
  carbon::ElectricityMapsConfig em;
  em.base_url = c.base_url;
  em.zone = c.zone;
  em.token = c.token;
  return std::unique_ptr<carbon::IntensitySource>(new carbon::ElectricityMapsSource(em, std::move(log)));
}

// Records `value` as the intensity of the UTC hour containing `now`. Hours
// no decision saw (windows longer than an hour, a server that was down)
// repeat the last value, so the history stays hourly whatever the window,
// as the forecaster's daily and weekly lags need.
void RecordHour(CarbonState& cs, int64_t now, double value) {
  const int64_t hour = FloorDiv(now, 3600);
  const int64_t gap = cs.history.empty() ? 0 : hour - cs.history_last_hour - 1;
  if (cs.history.empty() || cs.history_last_hour < 0 || gap >= static_cast<int64_t>(kMaxHistory)) {
    cs.history = {value};
    cs.history_first_hour = carbon::HourOfDayUtc(now);
  } else if (gap < 0) {
    cs.history.back() = value;  // another decision in the same hour (or the clock went back)
  } else {
    cs.history.insert(cs.history.end(), static_cast<size_t>(gap), cs.history.back());
    cs.history.push_back(value);
  }
  cs.history_last_hour = std::max(cs.history_last_hour, hour);
  if (cs.history.size() > kMaxHistory) {
    const size_t drop = cs.history.size() - kMaxHistory;
    cs.history.erase(cs.history.begin(), cs.history.begin() + static_cast<std::ptrdiff_t>(drop));
    cs.history_first_hour = static_cast<int>((cs.history_first_hour + drop) % 24);
  }
}

// The intensity expected in each of the coming windows: the reading for the
// rest of this hour, the forecast for the next, then the same hour on the
// last observed day.
std::vector<double> ComingWindows(const CarbonState& cs, double now_value, double forecast, int64_t window_s,
                                  int horizon) {
  const int64_t last = static_cast<int64_t>(cs.history.size()) - 1;
  std::vector<double> coming(horizon);
  for (int k = 0; k < horizon; ++k) {
    const int64_t ahead_h = k * window_s / 3600;
    const int64_t idx = last + ahead_h - 24 * ((ahead_h + 23) / 24);
    coming[k] = ahead_h == 0 ? now_value : ahead_h == 1 || idx < 0 ? forecast : cs.history[idx];
  }
  return coming;
}

}  // namespace

int64_t JobService::Now() const {
  if (carbon_.clock) return carbon_.clock();
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<carbon::IntensityReading> JobService::ReadIntensity(Job& job, int64_t now) {
  // job.spec never changes after the job is created, so no job lock is needed.
  std::lock_guard<std::mutex> lock(job.carbon_source_mu);
  if (!job.carbon_source) {
    const std::string job_id = job.spec.id;
    Result<std::unique_ptr<carbon::IntensitySource>> source = MakeSource(
        *job.spec.carbon, [this, job_id](const std::string& line) { Log("carbon_source", {{"job", job_id}, {"message", line}}); });
    if (!source.ok()) return source.status();
    job.carbon_source = std::move(*source);
  }
  return job.carbon_source->Current(now);
}

Status JobService::CarbonDecisionDue(const Job& job, int64_t now, bool forced) const {
  if (!job.spec.carbon) return Status::Unavailable("job '" + job.spec.id + "' has no carbon config");
  if (job.state.phase != Phase::kRunning || !job.plans) {
    return Status::Unavailable("job '" + job.spec.id + "' is not running (phase " + PhaseName(job.state.phase) + ")");
  }
  const CarbonState& cs = job.state.carbon;
  if (!forced && cs.evaluated && now < cs.last_eval_unix_s + job.spec.carbon->window_s) {
    return Status::Unavailable("the next carbon decision is not due yet");
  }
  return Status::Ok();
}

Status JobService::DecideCarbon(Job& job, int64_t now, const carbon::IntensityReading& reading) {
  const CarbonConfig& cfg = *job.spec.carbon;
  const std::string job_id = job.spec.id;
  const Frontier& f = job.plans->frontier();
  const carbon::KnobSet knobs = ServerKnobs(f);
  ControlState before = job.state, state = job.state;
  CarbonState& cs = state.carbon;
  const double budget = cfg.slowdown_budget;

  // Account for the time since the last decision at the plan then chosen.
  if (cs.evaluated && now > cs.last_eval_unix_s) {
    const double dt = static_cast<double>(now - cs.last_eval_unix_s) / cfg.window_s;
    cs.elapsed_windows += dt;
    cs.work_windows += dt * f.plans.front().time_s / f.plans[cs.plan_index].time_s;
  }
  RecordHour(cs, now, reading.carbon_g_per_kwh);
  carbon::BlendForecaster forecaster(1, cs.history_first_hour);
  for (double v : cs.history) forecaster.Observe(v);
  const double forecast = forecaster.Predict();
  const int horizon = static_cast<int>(std::clamp<int64_t>(86400 / cfg.window_s, 1, kMaxHorizonWindows));
  const std::vector<double> coming = ComingWindows(cs, reading.carbon_g_per_kwh, forecast, cfg.window_s, horizon);
  const double need = (cs.elapsed_windows + horizon) / (1 + budget) - cs.work_windows;
  const carbon::LambdaChoice lambda = carbon::LambdaForWork(knobs, coming, std::max(0.0, need));
  int option = carbon::ChooseOption(knobs, reading.carbon_g_per_kwh, lambda.lambda_g_per_s);
  // Budget guard: after the next window the policy's slowdown is still within the budget.
  while (option > 0 &&
         cs.work_windows + carbon::WorkPerWindowH(knobs, option) < (cs.elapsed_windows + 1) / (1 + budget) - 1e-9) {
    --option;
  }
  const carbon::KnobOption& o = knobs.options[option];
  const double so_far = cs.work_windows > 0 ? cs.elapsed_windows / cs.work_windows - 1 : 0;
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: intensity %.1f gCO2/kWh%s (forecast %.1f next window), lambda %.3g g/s -> %s (time %+.2f%%, "
                "energy %+.2f%% vs %s); slowdown so far %.2f%% of budget %.2f%%",
                carbon::FormatIsoUtc(now).c_str(), reading.carbon_g_per_kwh, reading.stale ? " (stale)" : "", forecast,
                lambda.lambda_g_per_s, o.label.c_str(), 100 * (o.time_s / knobs.reference.time_s - 1),
                100 * (o.energy_j / knobs.reference.energy_j - 1), knobs.reference.label.c_str(), 100 * so_far,
                100 * budget);
  cs.plan_index = PlanIndexOf(o);
  cs.evaluated = true;
  cs.last_eval_unix_s = now;
  cs.intensity_g_per_kwh = reading.carbon_g_per_kwh;
  cs.stale = reading.stale;
  cs.forecast_g_per_kwh = forecast;
  cs.lambda_g_per_s = lambda.lambda_g_per_s;
  cs.explanation = line;
  AssignPlans(job, &state);
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, {}));
  ResetStaleWindows(job, before);
  Log("carbon_decision", {{"job", job_id},
                          {"intensity_g_per_kwh", cs.intensity_g_per_kwh},
                          {"forecast_g_per_kwh", forecast},
                          {"lambda_g_per_s", cs.lambda_g_per_s},
                          {"plan_index", cs.plan_index},
                          {"explanation", cs.explanation}});
  return Status::Ok();
}

Result<Reply> JobService::EvaluateCarbon(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  const int64_t now = Now();
  {
    std::lock_guard<std::mutex> lock(job.mu);
    PERSEUS_RETURN_IF_ERROR(CarbonDecisionDue(job, now, /*forced=*/true));
  }
  Result<carbon::IntensityReading> reading = ReadIntensity(job, now);
  if (!reading.ok()) return reading.status();
  std::lock_guard<std::mutex> lock(job.mu);
  PERSEUS_RETURN_IF_ERROR(CarbonDecisionDue(job, now, /*forced=*/true));  // it may have stopped meanwhile
  PERSEUS_RETURN_IF_ERROR(DecideCarbon(job, now, *reading));
  return Reply{200, CarbonSummary(job)};
}

void JobService::CarbonTick() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::shared_lock<std::shared_mutex> lock(jobs_mu_);
    for (auto& [id, job] : jobs_) jobs.push_back(job);
  }
  const int64_t now = Now();
  std::vector<std::shared_ptr<Job>> due;
  for (const std::shared_ptr<Job>& job : jobs) {
    std::lock_guard<std::mutex> lock(job->mu);
    if (CarbonDecisionDue(*job, now, /*forced=*/false).ok()) due.push_back(job);
  }
  // The reads may wait on the network (each within its source's timeout):
  // all at once, so one slow source does not hold the other jobs' decisions,
  // and without the jobs' locks, so the jobs stay available meanwhile.
  std::vector<std::future<Result<carbon::IntensityReading>>> readings;
  for (const std::shared_ptr<Job>& job : due) {
    readings.push_back(std::async(std::launch::async, [this, job, now] { return ReadIntensity(*job, now); }));
  }
  for (size_t i = 0; i < due.size(); ++i) {
    Result<carbon::IntensityReading> reading = readings[i].get();
    Job& job = *due[i];
    std::lock_guard<std::mutex> lock(job.mu);
    Status s = reading.status();
    if (s.ok() && CarbonDecisionDue(job, now, /*forced=*/false).ok()) s = DecideCarbon(job, now, *reading);
    if (!s.ok()) Log("carbon_decision_failed", {{"job", job.spec.id}, {"error", s.ToString()}});
  }
}

Json JobService::CarbonSummary(const Job& job) {
  const CarbonConfig& cfg = *job.spec.carbon;
  const CarbonState& cs = job.state.carbon;
  Json j = {{"config", RedactedJobSpecJson(job.spec)["carbon"]},
            {"evaluated", cs.evaluated},
            {"slowdown_budget", cfg.slowdown_budget},
            {"window_s", cfg.window_s}};
  j["intensity_g_per_kwh"] = cs.evaluated ? Json(cs.intensity_g_per_kwh) : Json(nullptr);
  j["stale"] = cs.stale;
  j["forecast_g_per_kwh"] = cs.evaluated ? Json(cs.forecast_g_per_kwh) : Json(nullptr);
  j["lambda_g_per_s"] = cs.evaluated ? Json(cs.lambda_g_per_s) : Json(nullptr);
  j["plan_index"] = cs.evaluated ? Json(cs.plan_index) : Json(nullptr);
  j["last_eval_unix_s"] = cs.evaluated ? Json(cs.last_eval_unix_s) : Json(nullptr);
  j["next_eval_unix_s"] = cs.evaluated ? Json(cs.last_eval_unix_s + cfg.window_s) : Json(nullptr);
  j["elapsed_windows"] = cs.elapsed_windows;
  j["work_windows"] = cs.work_windows;
  j["slowdown_so_far"] = cs.work_windows > 0 ? cs.elapsed_windows / cs.work_windows - 1 : 0.0;
  j["explanation"] = cs.explanation;
  if (job.plans && cs.evaluated) {
    const FrontierPlan& p = job.plans->frontier().plans[cs.plan_index];
    j["plan_time_s"] = p.time_s;
    j["plan_energy_j"] = p.energy_j;
  }
  return j;
}

Result<Json> JobService::CarbonJson(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  std::lock_guard<std::mutex> lock(job.mu);
  if (!job.spec.carbon) return Status::NotFound("job '" + job_id + "' has no carbon config");
  Json j = CarbonSummary(job);
  j["id"] = job_id;
  j["phase"] = PhaseName(job.state.phase);
  Json pipelines = Json::array();
  for (size_t p = 0; p < job.state.pipelines.size(); ++p) {
    pipelines.push_back({{"pipeline", p}, {"plan_index", job.state.pipelines[p].plan_index},
                         {"version", job.state.pipelines[p].version}});
  }
  j["pipelines"] = pipelines;
  return j;
}

}  // namespace perseus::server
