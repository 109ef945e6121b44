#include "runtime/server/plan_book.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "perseus/frontier_io.h"

namespace perseus::server {

namespace {

// Enough for every stage of the few plans a job's pipelines run at once.
constexpr size_t kMaxCachedLists = 4096;

Json PlanCostJson(const FrontierPlan& p) {
  return {{"time_s", p.time_s}, {"energy_j", p.energy_j}, {"lower_bound_j", p.lower_bound_j}};
}

Json PlanJson(const FrontierPlan& p) {
  Json j = PlanCostJson(p);
  j["choice"] = p.choice;
  return j;
}

// [[computation, option], ...] where `choice` differs from `previous`.
Json ChoiceChanges(const PlanChoice& previous, const PlanChoice& choice) {
  Json changes = Json::array();
  for (size_t i = 0; i < choice.size(); ++i) {
    if (choice[i] != previous[i]) changes.push_back({i, choice[i]});
  }
  return changes;
}

// One stored plan; `previous` is the plan before it (nullptr for the first).
FrontierPlan PlanFromJson(const Json& j, const FrontierPlan* previous) {
  FrontierPlan p;
  p.time_s = j.at("time_s").get<double>();
  p.energy_j = j.at("energy_j").get<double>();
  p.lower_bound_j = j.at("lower_bound_j").get<double>();
  if (j.contains("choice") || previous == nullptr) {
    p.choice = j.at("choice").get<PlanChoice>();
    return p;
  }
  p.choice = previous->choice;
  for (const Json& change : j.at("changes")) {
    const size_t node = change.at(0).get<size_t>();
    if (node >= p.choice.size()) throw std::out_of_range("a change names computation " + std::to_string(node));
    p.choice[node] = change.at(1).get<int>();
  }
  return p;
}

}  // namespace

ProblemSpec JobProblemSpec(const JobSpec& spec, double blocking_power_w) {
  ProblemSpec ps;
  ps.schedule = spec.schedule;
  ps.blocking_power_w = blocking_power_w;
  ps.gpus_per_stage = spec.tp;
  return ps;
}

std::string WindowStagePlanJson(const Schedule& schedule, int stage, int forward_clock_mhz, int backward_clock_mhz) {
  std::vector<protocol::PlanStep> steps;
  for (const Computation& c : schedule.per_stage[stage]) {
    const int clock_mhz = c.instruction == Instruction::kForward ? forward_clock_mhz : backward_clock_mhz;
    steps.push_back({c.instruction, c.microbatch, c.chunk, clock_mhz});
  }
  return protocol::StepsJson(steps);
}

Result<std::shared_ptr<const PlanBook>> PlanBook::Create(const JobSpec& spec, const Profile& profile,
                                                         double blocking_power_w, Frontier frontier) {
  Result<Problem> problem = BuildProblem(profile, JobProblemSpec(spec, blocking_power_w));
  if (!problem.ok()) return problem.status();
  if (frontier.plans.empty()) return Status::Internal("the frontier has no plans");
  std::shared_ptr<PlanBook> book(new PlanBook());
  book->problem_ = std::move(*problem);
  book->frontier_ = std::move(frontier);
  for (const FrontierPlan& plan : book->frontier_.plans) {
    Status valid = ValidatePlan(book->problem_, plan.choice);
    if (!valid.ok()) return Status::Internal("frontier " + valid.message());
  }
  if (!book->frontier_.plans.empty()) book->ceilings_ = control::CeilingPlans(book->problem_, book->frontier_);
  return std::shared_ptr<const PlanBook>(std::move(book));
}

PlanCost PlanBook::Cost(const PipelinePlan& plan) const {
  for (const control::CeilingPlan& c : ceilings_) {
    if (plan.clock_ceiling_mhz > 0 && c.clock_ceiling_mhz == plan.clock_ceiling_mhz) return {c.time_s, c.energy_j};
  }
  const FrontierPlan& p = frontier_.plans[plan.plan_index];
  return {p.time_s, p.energy_j};
}

std::shared_ptr<const std::string> PlanBook::StagePlanJson(int plan_index, int stage, int clock_ceiling_mhz) const {
  const int64_t key =
      (static_cast<int64_t>(clock_ceiling_mhz) * num_plans() + plan_index) * problem_.num_stages() + stage;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  // PlanByStage is the one per-stage list (plans.json and Python use it too).
  const PlanChoice& choice = frontier_.plans[plan_index].choice;
  const StagePlan stages = PlanByStage(
      problem_, clock_ceiling_mhz > 0 ? WithClockCeiling(problem_, choice, clock_ceiling_mhz) : choice);
  std::vector<protocol::PlanStep> steps;
  for (const PlannedComputation& c : stages[stage]) {
    steps.push_back({c.instruction, c.microbatch, c.chunk, c.freq_mhz});
  }
  auto text = std::make_shared<const std::string>(protocol::StepsJson(steps));
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() >= kMaxCachedLists) cache_.clear();
  cache_.emplace(key, text);
  return text;
}

Json StoredFrontierJson(const Frontier& f) {
  Json plans = Json::array();
  for (size_t k = 0; k < f.plans.size(); ++k) {
    if (k == 0) {
      plans.push_back(PlanJson(f.plans[k]));
      continue;
    }
    Json p = PlanCostJson(f.plans[k]);
    p["changes"] = ChoiceChanges(f.plans[k - 1].choice, f.plans[k].choice);
    plans.push_back(std::move(p));
  }
  return {{"all_max", PlanJson(f.all_max)},
          {"plans", plans},
          {"stats",
           {{"sweep_steps", f.stats.sweep_steps}, {"candidate_plans", f.stats.candidate_plans},
            {"solve_s", f.stats.solve_s}, {"lower_bound_s", f.stats.lower_bound_s},
            {"sweep_complete", f.stats.sweep_complete}}}};
}

Result<Frontier> FrontierFromJson(const Json& j) {
  Frontier f;
  try {
    f.all_max = PlanFromJson(j.at("all_max"), nullptr);
    for (const Json& p : j.at("plans")) f.plans.push_back(PlanFromJson(p, f.plans.empty() ? nullptr : &f.plans.back()));
    const Json& st = j.at("stats");
    f.stats.sweep_steps = st.at("sweep_steps").get<int>();
    f.stats.candidate_plans = st.at("candidate_plans").get<int>();
    f.stats.solve_s = st.at("solve_s").get<double>();
    f.stats.lower_bound_s = st.at("lower_bound_s").get<double>();
    f.stats.sweep_complete = st.value("sweep_complete", true);  // absent in older databases
  } catch (const Json::exception& e) {
    return Status::Internal(std::string("stored frontier: ") + e.what());
  } catch (const std::out_of_range& e) {
    return Status::Internal(std::string("stored frontier: ") + e.what());
  }
  return f;
}

Frontier ThinFrontier(Frontier frontier, size_t max_plans) {
  if (max_plans == 0 || frontier.plans.size() <= max_plans) return frontier;
  std::vector<size_t> keep = KeyPlanIndices(frontier);
  return SubFrontier(frontier, ThinPlanIndices(frontier, std::max(max_plans, keep.size()), keep));
}

}  // namespace perseus::server
