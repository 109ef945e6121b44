// Rounding to measured options and slack filling.
#include "optimizer/discretize.h"

#include <algorithm>
#include <functional>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {

Discretizer::Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs)
    : problem_(problem),
      dag_(problem),
      costs_(costs),
      rounded_(problem.nodes.size(), 0),
      index_(problem.nodes.size(), 0),
      duration_s_(problem.nodes.size()),
      queued_(problem.nodes.size(), 0) {}

Discretizer::Move Discretizer::BestMove(int i) const {
  const std::vector<CostPoint>& pareto = costs_[i].pareto();
  const int k = index_[i];
  const double limit = (latest_finish_[i] - earliest_start_[i]) * (1 + kTimeEps);
  Move best{0, i, -1};
  for (int j = k + 1; j < static_cast<int>(pareto.size()) && pareto[j].time_s <= limit; ++j) {
    const double rate = (pareto[k].cost_j - pareto[j].cost_j) / std::max(pareto[j].time_s - pareto[k].time_s, 1e-300);
    if (rate > best.rate_j_per_s) best = {rate, i, j};
  }
  return best;
}

void Discretizer::Lengthen(int i, int index) {
  index_[i] = index;
  duration_s_[i] = costs_[i].pareto()[index].time_s;
  // Later computations may start later; earlier ones must finish sooner.
  // Node ids are a topological order: visiting by id settles each once.
  queued_[i] = 1;
  queue_.assign(1, i);
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end(), std::greater<int>());
    const int u = queue_.back();
    queue_.pop_back();
    queued_[u] = 0;
    ++visits_;
    const double finish = earliest_start_[u] + duration_s_[u];
    for (int v : dag_.succs(u)) {
      if (finish > earliest_start_[v]) {
        earliest_start_[v] = finish;
        if (!queued_[v]) {
          queued_[v] = 1;
          queue_.push_back(v);
          std::push_heap(queue_.begin(), queue_.end(), std::greater<int>());
        }
      }
    }
  }
  queued_[i] = 1;
  queue_.assign(1, i);
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end());
    const int v = queue_.back();
    queue_.pop_back();
    queued_[v] = 0;
    ++visits_;
    const double start = latest_finish_[v] - duration_s_[v];
    for (int u : dag_.preds(v)) {
      if (start < latest_finish_[u]) {
        latest_finish_[u] = start;
        if (!queued_[u]) {
          queued_[u] = 1;
          queue_.push_back(u);
          std::push_heap(queue_.begin(), queue_.end());
        }
      }
    }
  }
}

void Discretizer::GreedyFill(double deadline_s) {
  BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
  visits_ += 2 * problem_.num_nodes();
  heap_.clear();
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    const Move m = BestMove(i);
    if (m.index >= 0) heap_.push_back(m);
  }
  std::make_heap(heap_.begin(), heap_.end());
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end());
    const Move top = heap_.back();
    heap_.pop_back();
    // Slack only shrinks, so a node's best rate only falls: recheck lazily.
    const Move now = BestMove(top.node);
    if (now.index < 0) continue;
    if (now.index != top.index || now.rate_j_per_s < top.rate_j_per_s) {
      heap_.push_back(now);
      std::push_heap(heap_.begin(), heap_.end());
      continue;
    }
    Lengthen(now.node, now.index);
    const Move next = BestMove(now.node);
    if (next.index >= 0) {
      heap_.push_back(next);
      std::push_heap(heap_.begin(), heap_.end());
    }
  }
}

double Discretizer::PlanEnergy() {
  // E = sum of costs + blocking power x stages x iteration time (node_costs.h).
  double cost_j = 0;
  for (int i = 0; i < problem_.num_nodes(); ++i) cost_j += costs_[i].pareto()[index_[i]].cost_j;
  visits_ += 2 * problem_.num_nodes();
  return cost_j + problem_.blocking_power_w * problem_.num_stages() * ForwardPass(dag_, duration_s_, earliest_start_);
}

void Discretizer::SetIndices(const std::vector<int>& index) {
  index_ = index;
  for (int i = 0; i < problem_.num_nodes(); ++i) duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
}

bool Discretizer::Repair(int locked, double deadline_s, long budget_visits, bool any_option) {
  const int n = problem_.num_nodes();
  // Every pass speeds one computation up by at least one option: at most sum(index_) passes.
  while (ForwardPass(dag_, duration_s_, earliest_start_) > deadline_s * (1 + kTimeEps)) {
    if (visits_ > budget_visits) return false;
    BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
    visits_ += 3 * n;
    int best = -1, best_index = -1;
    double best_rate_j_per_s = 0;
    for (int i = 0; i < n; ++i) {
      if (i == locked || index_[i] == 0) continue;
      const double late = -(latest_finish_[i] - earliest_start_[i] - duration_s_[i]);
      if (late <= deadline_s * kTimeEps) continue;  // on no late path
      const CostPoint& now = costs_[i].pareto()[index_[i]];
      for (int j = index_[i] - 1; j >= (any_option ? 0 : index_[i] - 1); --j) {
        const CostPoint& faster = costs_[i].pareto()[j];
        const double gain = any_option ? std::min(now.time_s - faster.time_s, late) : now.time_s - faster.time_s;
        const double rate = (faster.cost_j - now.cost_j) / std::max(gain, 1e-300);
        if (best < 0 || rate < best_rate_j_per_s) best = i, best_index = j, best_rate_j_per_s = rate;
      }
    }
    if (best < 0) return false;
    index_[best] = best_index;
    duration_s_[best] = costs_[best].pareto()[index_[best]].time_s;
  }
  visits_ += n;
  return true;
}

void Discretizer::LocalSearch(double deadline_s, long budget_visits) {
  const int n = problem_.num_nodes();
  long options = 0;
  for (int v = 0; v < n; ++v) options += static_cast<long>(costs_[v].pareto().size());
  const long listing_visits = n + 8 * options;  // listing and sorting the trades
  visits_ = 0;
  while (visits_ + listing_visits + 6L * n <= budget_visits) {
    trades_.clear();
    for (int v = 0; v < n; ++v) {
      const std::vector<CostPoint>& pareto = costs_[v].pareto();
      const double slack = latest_finish_[v] - earliest_start_[v] - duration_s_[v];
      for (int j = index_[v] + 1; j < static_cast<int>(pareto.size()); ++j) {
        const double saving = pareto[index_[v]].cost_j - pareto[j].cost_j;
        const double over = std::max(pareto[j].time_s - pareto[index_[v]].time_s - slack, 1e-12);
        trades_.push_back({saving / over, v, j});
      }
    }
    visits_ += listing_visits;
    std::sort(trades_.begin(), trades_.end(), [](const Trade& a, const Trade& b) {
      return a.rate_j_per_s != b.rate_j_per_s ? a.rate_j_per_s > b.rate_j_per_s : a.node != b.node ? a.node < b.node : a.index < b.index;
    });
    kept_ = index_;
    const double kept_energy_j = PlanEnergy();
    bool improved = false;
    double best_energy_j = kept_energy_j * (1 - 1e-12);
    for (const Trade& t : trades_) {
      for (int any_option = 0; any_option < 2; ++any_option) {
        if (visits_ + 6L * n > budget_visits) break;
        SetIndices(kept_);
        index_[t.node] = t.index;
        duration_s_[t.node] = costs_[t.node].pareto()[t.index].time_s;
        if (!Repair(t.node, deadline_s, budget_visits, any_option)) continue;
        GreedyFill(deadline_s);
        const double e = PlanEnergy();
        if (e < best_energy_j) best_energy_j = e, best_ = index_, improved = true;
      }
      if (improved) break;
    }
    if (!improved) {
      SetIndices(kept_);
      return;
    }
    SetIndices(best_);  // and the starts and finishes the next round's listing reads
    ForwardPass(dag_, duration_s_, earliest_start_);
    BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
    visits_ += 2 * n;
  }
}

void Discretizer::Search(double deadline_s, long budget_visits) {
  const int n = problem_.num_nodes();
  const long per_start_visits = budget_visits / 4;
  LocalSearch(deadline_s, per_start_visits);
  chosen_ = index_;
  double chosen_energy_j = PlanEnergy();
  auto consider = [&] {
    LocalSearch(deadline_s, per_start_visits);
    const double e = PlanEnergy();
    if (e < chosen_energy_j * (1 - 1e-12)) chosen_ = index_, chosen_energy_j = e;
  };
  const bool chained = !previous_.empty() && deadline_s >= previous_deadline_s_;
  if (Chains(n, budget_visits)) {
    if (chained) {
      SetIndices(previous_);
      ForwardPass(dag_, duration_s_, earliest_start_);
      GreedyFill(deadline_s);
      consider();
    }
    for (bool any_option : {false, true}) {
      for (int i = 0; i < n; ++i) {
        index_[i] = static_cast<int>(costs_[i].pareto().size()) - 1;
        duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
      }
      visits_ = 0;
      if (!Repair(-1, deadline_s, per_start_visits, any_option)) continue;
      GreedyFill(deadline_s);
      consider();
    }
  }
  SetIndices(chosen_);
  if (!chained || chosen_energy_j < previous_energy_j_) previous_ = chosen_, previous_energy_j_ = chosen_energy_j;
  previous_deadline_s_ = deadline_s;
}

PlanChoice Discretizer::Run(const std::vector<double>& duration_s, double deadline_s, long search_visits) {
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    rounded_[i] = std::max(0, costs_[i].CheapestWithinNear(duration_s[i], rounded_[i]));
    index_[i] = rounded_[i];
    duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
  }
  const double deadline = std::max(deadline_s, ForwardPass(dag_, duration_s_, earliest_start_));
  GreedyFill(deadline);
  if (search_visits > 0) Search(deadline, search_visits);
  PlanChoice choice(index_.size());
  for (size_t i = 0; i < index_.size(); ++i) choice[i] = costs_[i].pareto()[index_[i]].option;
  return choice;
}

}  // namespace perseus::optimizer
