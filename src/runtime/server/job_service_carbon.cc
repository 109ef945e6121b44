// JobService: the carbon policy applied to running jobs (docs/carbon.md, "In the server").
//
// Each window of a job with a carbon config: read the intensity (without the
// job's lock), then make the control library's window decision
// (control/carbon_window.h) over the frontier's convex-hull plans with the
// no-slowdown plan as the reference, and assign plans with it as a floor.
#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>

#include "carbon/electricitymaps_source.h"
#include "control/carbon_window.h"
#include "runtime/server/job_service.h"

namespace perseus::server {

namespace {

Result<std::unique_ptr<carbon::IntensitySource>> MakeSource(const CarbonConfig& c, carbon::LogFn log) {
  if (c.source == "fixed") return std::unique_ptr<carbon::IntensitySource>(new carbon::FixedIntensitySource(c.value_g_per_kwh));
  if (c.source == "trace") {
    Result<carbon::IntensityTrace> trace = carbon::LoadTraceFile(c.trace_path);
    if (!trace.ok()) return trace.status();
    for (const std::string& note : trace->notes) log(note);  // interpolated cells, a fuel mix not used
    return std::unique_ptr<carbon::IntensitySource>(new carbon::TraceIntensitySource(std::move(*trace)));
  }
  carbon::ElectricityMapsConfig em;
  em.base_url = c.base_url;
  em.zone = c.zone;
  em.token = c.token;
  return std::unique_ptr<carbon::IntensitySource>(new carbon::ElectricityMapsSource(em, std::move(log)));
}

// The decision's options and settings for a running job with a carbon config.
struct CarbonDecisionInputs {
  carbon::KnobSet knobs;
  control::CarbonWindowConfig window;
};
CarbonDecisionInputs DecisionInputs(const Job& job) {
  const CarbonConfig& cfg = *job.spec.carbon;
  CarbonDecisionInputs in;
  in.knobs = control::FrontierKnobsFromNoSlowdown(job.plans->frontier());
  const Problem& problem = job.plans->problem();
  in.knobs.pause_power_w = control::PausePowerW(problem, cfg.pause == CarbonPause::kHold);
  if (cfg.pause == CarbonPause::kRelease) in.knobs.restart_power_w = control::RestartPowerW(problem, cfg.restart_power_w);
  const double window_s = static_cast<double>(cfg.window_s);
  in.window = {cfg.slowdown_budget, cfg.window_s, cfg.job_hours * 3600 / window_s, cfg.pause != CarbonPause::kNever,
               cfg.restart_s / window_s};
  return in;
}

}  // namespace

// A job loaded after a restart is checked again: the server may have been
// restarted with tighter --job-files.
Status JobService::CheckCarbonResources(const CarbonConfig& c) const {
  if (c.source == "trace") return CheckJobFile(limits_.job_resources, "carbon.trace_path", c.trace_path);
  if (c.source == "electricitymaps") {
    return CheckJobUrl(limits_.job_resources, "carbon.base_url", c.base_url, CarbonConfig{}.base_url);
  }
  return Status::Ok();
}

Result<std::unique_ptr<carbon::IntensitySource>> JobService::MakeCarbonSource(const JobSpec& spec) {
  const std::string job_id = spec.id;
  return MakeSource(*spec.carbon, [this, job_id](const std::string& line) {
    Log("carbon_source", {{"job", job_id}, {"message", line}});
  });
}

int64_t JobService::Now() const {
  if (carbon_.clock) return carbon_.clock();
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<JobService::IntensityRead> JobService::ReadIntensity(Job& job, int64_t now, bool with_history) {
  // job.spec never changes after the job is created, so no job lock is needed.
  std::lock_guard<std::mutex> lock(job.carbon_source_mu);
  if (!job.carbon_source) {  // a job loaded after a restart
    PERSEUS_RETURN_IF_ERROR(CheckCarbonResources(*job.spec.carbon));
    Result<std::unique_ptr<carbon::IntensitySource>> source = MakeCarbonSource(job.spec);
    if (!source.ok()) return source.status().WithContext("carbon.trace_path");  // only a trace fails
    job.carbon_source = std::move(*source);
  }
  IntensityRead read{job.carbon_source->Current(now), {}};
  if (with_history) read.past = job.carbon_source->History(now, control::kSeededHistoryHours);
  return read;
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

Status JobService::DecideCarbon(Job& job, int64_t now, const IntensityRead& read) {
  const std::string job_id = job.spec.id;
  ControlState before = job.state, state = job.state;
  const Frontier& f = job.plans->frontier();
  CarbonState& cs = state.carbon;
  if (cs.evaluated && cs.option_time_s < 0) {  // a state stored before option_time_s existed
    cs.option_time_s = f.plans[std::clamp(cs.plan_index, 0, static_cast<int>(f.plans.size()) - 1)].time_s;
  }
  const CarbonDecisionInputs in = DecisionInputs(job);
  size_t seeded_hours = 0;
  if (cs.history.empty() && !read.past.empty()) {
    control::SeedCarbonHistory(read.past, &cs);
    seeded_hours = cs.history.size();
  }
  control::DecideCarbonWindow(in.knobs, in.window, now, control::FromIntensityReading(read.now), &cs,
                              &job.carbon_forecast);
  AssignPlans(job, &state);  // a new pause also gets the iteration it takes effect before
  PERSEUS_RETURN_IF_ERROR(CommitState(job, state, {}));
  ResetStaleWindows(job, before);
  if (seeded_hours > 0) Log("carbon_history_seeded", {{"job", job_id}, {"hours", seeded_hours}});
  Log("carbon_decision", {{"job", job_id},
                          {"intensity_g_per_kwh", cs.intensity_g_per_kwh},
                          {"forecast_g_per_kwh", cs.forecast_g_per_kwh},
                          {"lambda_g_per_s", cs.lambda_g_per_s},
                          {"plan_index", cs.plan_index},
                          {"paused", cs.paused},
                          {"explanation", cs.explanation}});
  return Status::Ok();
}

Result<Json> JobService::EvaluateCarbon(const std::string& job_id) {
  Result<std::shared_ptr<Job>> found = FindJob(job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  const int64_t now = Now();
  bool with_history = false;
  {
    std::lock_guard<std::mutex> lock(job.mu);
    PERSEUS_RETURN_IF_ERROR(CarbonDecisionDue(job, now, /*forced=*/true));
    with_history = job.state.carbon.history.empty();
  }
  Result<IntensityRead> reading = ReadIntensity(job, now, with_history);
  if (!reading.ok()) return reading.status();
  {
    std::lock_guard<std::mutex> lock(job.mu);
    PERSEUS_RETURN_IF_ERROR(CarbonDecisionDue(job, now, /*forced=*/true));  // it may have stopped meanwhile
    PERSEUS_RETURN_IF_ERROR(DecideCarbon(job, now, *reading));
  }
  PowerCapTick();  // a pause or a resume moves the server cap's shares (as the background loop does)
  std::lock_guard<std::mutex> lock(job.mu);
  return CarbonSummary(job);
}

void JobService::CarbonTick() {
  const std::vector<std::shared_ptr<Job>> jobs = jobs_.All();
  const int64_t now = Now();
  std::vector<std::shared_ptr<Job>> due;
  std::vector<bool> with_history;
  for (const std::shared_ptr<Job>& job : jobs) {
    std::lock_guard<std::mutex> lock(job->mu);
    if (!CarbonDecisionDue(*job, now, /*forced=*/false).ok()) continue;
    due.push_back(job);
    with_history.push_back(job->state.carbon.history.empty());
  }
  // The reads may wait on the network (each within its source's timeout):
  // all at once, so one slow source does not hold the other jobs' decisions,
  // and without the jobs' locks, so the jobs stay available meanwhile.
  std::vector<std::future<Result<IntensityRead>>> readings;
  for (size_t i = 0; i < due.size(); ++i) {
    readings.push_back(std::async(std::launch::async, [this, job = due[i], now, history = with_history[i]] {
      return ReadIntensity(*job, now, history);
    }));
  }
  for (size_t i = 0; i < due.size(); ++i) {
    Result<IntensityRead> reading = readings[i].get();
    Job& job = *due[i];
    std::lock_guard<std::mutex> lock(job.mu);
    Status s = reading.status();
    if (s.ok() && CarbonDecisionDue(job, now, /*forced=*/false).ok()) s = DecideCarbon(job, now, *reading);
    if (!s.ok()) {
      Log("carbon_decision_failed", {{"job", job.spec.id}, {"error", s.ToString()}});
      LiftStalePause(job, now);
    }
  }
}

void JobService::LiftStalePause(Job& job, int64_t now) {
  if (!job.CarbonPaused(job.state) || !job.plans) return;
  const int64_t last_decision_unix_s = job.state.carbon.last_eval_unix_s;
  if (now < last_decision_unix_s + 2 * job.spec.carbon->window_s) return;
  ControlState before = job.state, state = job.state;
  const CarbonDecisionInputs in = DecisionInputs(job);
  control::LiftCarbonPause(in.knobs, in.window, now, &state.carbon);
  AssignPlans(job, &state);
  if (Status st = CommitState(job, state, {}); !st.ok()) {  // tried again at the next tick
    Log("carbon_pause_lift_failed", {{"job", job.spec.id}, {"error", st.ToString()}});
    return;
  }
  ResetStaleWindows(job, before);
  Log("carbon_pause_lifted", {{"job", job.spec.id},
                              {"last_decision_unix_s", last_decision_unix_s},
                              {"hint", "no carbon decision for two windows: the job runs its plan (a release pause's restart charged) until "
                                       "one succeeds, tried again each window"}});
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
  j["forecast_with_fuel_mix"] = control::ForecastUsesFuelMix(cs);
  j["history_hours"] = cs.history.size();
  j["lambda_g_per_s"] = cs.evaluated ? Json(cs.lambda_g_per_s) : Json(nullptr);
  j["plan_index"] = cs.evaluated ? Json(cs.plan_index) : Json(nullptr);
  j["paused"] = job.CarbonPaused(job.state);
  j["pause"] = CarbonPauseName(cfg.pause);
  j["last_eval_unix_s"] = cs.evaluated ? Json(cs.last_eval_unix_s) : Json(nullptr);
  j["next_eval_unix_s"] = cs.evaluated ? Json(cs.last_eval_unix_s + cfg.window_s) : Json(nullptr);
  j["elapsed_windows"] = cs.elapsed_windows;
  j["work_windows"] = cs.work_windows;
  j["slowdown_so_far"] = control::CarbonSlowdownSoFar(cs);
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
                         {"version", job.state.pipelines[p].version}, {"paused", job.state.pipelines[p].paused}});
  }
  j["pipelines"] = pipelines;
  return j;
}

}  // namespace perseus::server
