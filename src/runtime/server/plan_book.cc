#include "runtime/server/plan_book.h"

namespace perseus::server {

namespace {

Json InstructionJson(const Computation& c, int sm_clock_mhz) {
  return {{"instruction", InstructionName(c.instruction)}, {"microbatch", c.microbatch}, {"chunk", c.chunk},
          {"sm_clock_mhz", sm_clock_mhz}};
}

Json PlanJson(const FrontierPlan& p) {
  return {{"time_s", p.time_s}, {"energy_j", p.energy_j}, {"lower_bound_j", p.lower_bound_j}, {"choice", p.choice}};
}

FrontierPlan PlanFromJson(const Json& j) {
  FrontierPlan p;
  p.time_s = j.at("time_s").get<double>();
  p.energy_j = j.at("energy_j").get<double>();
  p.lower_bound_j = j.at("lower_bound_j").get<double>();
  p.choice = j.at("choice").get<PlanChoice>();
  return p;
}

Status CheckChoice(const Problem& problem, const PlanChoice& choice) {
  if (static_cast<int>(choice.size()) != problem.num_nodes()) {
    return Status::Internal("frontier plan has " + std::to_string(choice.size()) + " choices for " +
                            std::to_string(problem.num_nodes()) + " computations");
  }
  for (int i = 0; i < problem.num_nodes(); ++i) {
    if (choice[i] < 0 || choice[i] >= static_cast<int>(problem.nodes[i].options.size())) {
      return Status::Internal("frontier plan: computation " + std::to_string(i) + ": option out of range");
    }
  }
  return Status::Ok();
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
  Json list = Json::array();
  for (const Computation& c : schedule.per_stage[stage]) {
    list.push_back(InstructionJson(c, c.instruction == Instruction::kForward ? forward_clock_mhz : backward_clock_mhz));
  }
  return list.dump();
}

Result<std::shared_ptr<const PlanBook>> PlanBook::Create(const JobSpec& spec, const Profile& profile,
                                                         double blocking_power_w, Frontier frontier) {
  Result<Problem> problem = BuildProblem(profile, JobProblemSpec(spec, blocking_power_w));
  if (!problem.ok()) return problem.status();
  if (frontier.plans.empty()) return Status::Internal("the frontier has no plans");
  std::shared_ptr<PlanBook> book(new PlanBook());
  book->problem_ = std::move(*problem);
  book->frontier_ = std::move(frontier);
  const Problem& pb = book->problem_;
  for (const FrontierPlan& plan : book->frontier_.plans) {
    PERSEUS_RETURN_IF_ERROR(CheckChoice(pb, plan.choice));
    std::vector<std::string> stages;
    for (int s = 0; s < pb.num_stages(); ++s) {
      Json list = Json::array();
      for (int node : pb.gpu_order[s]) {
        list.push_back(InstructionJson(pb.nodes[node].comp, pb.nodes[node].options[plan.choice[node]].freq_mhz));
      }
      stages.push_back(list.dump());
    }
    book->stage_json_.push_back(std::move(stages));
  }
  return std::shared_ptr<const PlanBook>(std::move(book));
}

int PlanBook::PlanIndexForTime(double time_s) const {
  const FrontierPlan* p = frontier_.PlanForTime(time_s);
  if (p == nullptr || p < frontier_.plans.data() || p >= frontier_.plans.data() + frontier_.plans.size()) return 0;
  return static_cast<int>(p - frontier_.plans.data());
}

Json FrontierToJson(const Frontier& f) {
  Json plans = Json::array();
  for (const FrontierPlan& p : f.plans) plans.push_back(PlanJson(p));
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
    f.all_max = PlanFromJson(j.at("all_max"));
    for (const Json& p : j.at("plans")) f.plans.push_back(PlanFromJson(p));
    const Json& st = j.at("stats");
    f.stats.sweep_steps = st.at("sweep_steps").get<int>();
    f.stats.candidate_plans = st.at("candidate_plans").get<int>();
    f.stats.solve_s = st.at("solve_s").get<double>();
    f.stats.lower_bound_s = st.at("lower_bound_s").get<double>();
    f.stats.sweep_complete = st.value("sweep_complete", true);  // absent in older databases
  } catch (const Json::exception& e) {
    return Status::Internal(std::string("stored frontier: ") + e.what());
  }
  return f;
}

}  // namespace perseus::server
