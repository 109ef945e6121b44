// Rounding to measured options and slack filling.
#include "optimizer/discretize.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <utility>

#include "optimizer/critical_path.h"

namespace perseus::optimizer {

Discretizer::Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs)
    : problem_(problem),
      dag_(problem),
      costs_(costs),
      rounded_(problem.nodes.size(), 0),
      index_(problem.nodes.size(), 0),
      duration_s_(problem.nodes.size()),
      stale_starts_(problem.num_nodes()),
      stale_finishes_(problem.num_nodes()),
      settle_first_(problem.num_nodes()),
      settle_last_(problem.num_nodes()) {
  for (int i = 0; i < problem.num_nodes(); ++i) fill_order_.push_back(i);
  std::map<std::pair<const void*, const void*>, int> series_index;
  long options = 0;
  for (const NodeCosts& c : costs_) options += static_cast<long>(c.pareto().size());
  listing_visits_ = problem.num_nodes() + 8 * options;
  series_of_dependency_.resize(dag_.num_dependencies());
  beat_.assign(dag_.num_dependencies(), PairToBeat{});
  for (int u = 0; u < dag_.num_nodes(); ++u) {
    const std::span<const int> succs = dag_.succs(u);
    for (size_t k = 0; k < succs.size(); ++k) {
      const int v = succs[k];
      auto [it, added] = series_index.try_emplace({costs_[u].curves_key(), costs_[v].curves_key()},
                                                   static_cast<int>(series_.size()));
      if (added) series_.emplace_back(costs_[u], costs_[v]);
      series_of_dependency_[dag_.first_succ(u) + k] = it->second;
    }
  }
  for (int u = 0; u < dag_.num_nodes(); ++u) {
    settle_first_[u] = settle_last_[u] = u;
    for (int s : dag_.succs(u)) {
      settle_last_[u] = std::max(settle_last_[u], s);
      for (int p : dag_.preds(s)) settle_first_[u] = std::min(settle_first_[u], p);
    }
  }
}

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
  SetOption(i, index);
  // Later computations may start later, earlier ones must finish sooner:
  // they are settled when read, several lengthenings' changes at once.
  for (int v : dag_.succs(i)) stale_starts_.Push(v);
  for (int u : dag_.preds(i)) stale_finishes_.Push(u);
}

void Discretizer::GreedyFill(double deadline_s) {
  BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
  visits_ += 2 * problem_.num_nodes();
  moves_.clear();
  no_move_.clear();
  for (int i : fill_order_) {
    const Move m = BestMove(i);
    if (m.index >= 0) {
      moves_.push_back(m);
    } else {
      no_move_.push_back(i);
    }
  }
  SortGivenMoves();
  fill_order_.clear();
  for (const Move& m : moves_) fill_order_.push_back(m.node);
  fill_order_.insert(fill_order_.end(), no_move_.begin(), no_move_.end());
  FillFromMoves(deadline_s);
}

void Discretizer::SortGivenMoves() {
  const auto begin = moves_.begin();
  const long n = static_cast<long>(moves_.size());
  long shifts_left = adaptive_sort_ ? kShiftsPerMoveAndLevel * n * std::bit_width(static_cast<unsigned long>(n)) : -1;
  for (long k = 1; k < n && shifts_left >= 0; ++k) {
    const auto next = begin + k;
    if (!(next[-1] < *next)) continue;  // in place
    const Move m = *next;
    const auto at = std::partition_point(begin, next, [&m](const Move& x) { return !(x < m); });
    shifts_left -= next - at;
    std::move_backward(at, next, next + 1);
    *at = m;
  }
  if (shifts_left < 0) std::sort(moves_.begin(), moves_.end(), BestFirst{});
}

void Discretizer::FillFromMoves(double deadline_s) {
  heap_.clear();
  for (size_t next_given = 0;;) {
    Move top;
    if (next_given < moves_.size() && (heap_.empty() || heap_.front() < moves_[next_given])) {
      top = moves_[next_given++];
    } else if (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end());
      top = heap_.back();
      heap_.pop_back();
    } else {
      break;
    }
    // Its times exact: ancestors have smaller ids, descendants larger.
    // Lengthening only delays starts and advances finishes, so no room is
    // gained and no stamp is taken.
    SettleStarts(top.node, /*stamp=*/0);
    SettleFinishes(top.node, deadline_s, /*stamp=*/0);
    // Slack only shrinks, so a node's best rate only falls: recheck lazily.
    const Move now = BestMove(top.node);
    if (now.index < 0) continue;
    if (now.index != top.index || now.rate_j_per_s < top.rate_j_per_s) {
      heap_.push_back(now);
      std::push_heap(heap_.begin(), heap_.end());
      continue;
    }
    Lengthen(now.node, now.index);
    const Move next = BestMove(now.node);  // its own times do not depend on its duration
    if (next.index >= 0) {
      heap_.push_back(next);
      std::push_heap(heap_.begin(), heap_.end());
    }
  }
  SettleStarts(problem_.num_nodes() - 1, 0);
  SettleFinishes(0, deadline_s, 0);
}

double Discretizer::PlanEnergy() {
  // E = sum of costs + blocking power x stages x iteration time (node_costs.h).
  double cost_j = 0;
  for (int i = 0; i < problem_.num_nodes(); ++i) cost_j += costs_[i].pareto()[index_[i]].cost_j;
  visits_ += 2 * problem_.num_nodes();
  return cost_j + problem_.pipeline_blocking_power_w() * ForwardPass(dag_, duration_s_, earliest_start_);
}

void Discretizer::SetOption(int i, int index) {
  index_[i] = index;
  duration_s_[i] = costs_[i].pareto()[index].time_s;
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

void Discretizer::SortTrades(bool highest_rate_first) {
  // Ties: the lower node, then the lower option first, for determinism.
  std::sort(trades_.begin(), trades_.end(), [highest_rate_first](const Trade& a, const Trade& b) {
    if (a.rate_j_per_s != b.rate_j_per_s) return (a.rate_j_per_s > b.rate_j_per_s) == highest_rate_first;
    return a.node != b.node ? a.node < b.node : a.index < b.index;
  });
}

bool Discretizer::CanTrade(long budget_visits) const {
  return listing_visits_ + 6L * problem_.num_nodes() <= budget_visits;
}

bool Discretizer::LocalSearch(double deadline_s, long budget_visits) {
  const int n = problem_.num_nodes();
  visits_ = 0;
  bool changed = false;
  while (CanTrade(budget_visits - visits_)) {
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
    visits_ += listing_visits_;
    SortTrades(/*highest_rate_first=*/true);
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
    if (!improved) improved = SpeedUpTrades(deadline_s, budget_visits, best_energy_j);
    if (!improved) {
      SetIndices(kept_);
      return changed;
    }
    changed = true;
    SetIndices(best_);  // and the starts and finishes the next round's listing reads
    ForwardPass(dag_, duration_s_, earliest_start_);
    BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
    visits_ += 2 * n;
  }
  return changed;
}

bool Discretizer::SpeedUpTrades(double deadline_s, long budget_visits, double& best_energy_j) {
  const int n = problem_.num_nodes();
  SetIndices(kept_);
  trades_.clear();
  for (int v = 0; v < n; ++v) {
    const std::vector<CostPoint>& pareto = costs_[v].pareto();
    for (int j = index_[v] - 1; j >= 0; --j) {
      const double extra_j = pareto[j].cost_j - pareto[index_[v]].cost_j;
      const double gain_s = std::max(pareto[index_[v]].time_s - pareto[j].time_s, 1e-12);
      trades_.push_back({extra_j / gain_s, v, j});
    }
  }
  visits_ += n + 8L * static_cast<long>(trades_.size());
  SortTrades(/*highest_rate_first=*/false);
  for (const Trade& t : trades_) {
    if (visits_ + 6L * n > budget_visits) break;
    SetIndices(kept_);
    SetOption(t.node, t.index);
    ForwardPass(dag_, duration_s_, earliest_start_);
    visits_ += n;
    GreedyFill(deadline_s);
    const double e = PlanEnergy();
    if (e < best_energy_j) {
      best_energy_j = e, best_ = index_;
      return true;
    }
  }
  return false;
}

void Discretizer::Polish(double deadline_s, bool times_exact) {
  if (!pair_moves_) return;
  const bool moved = PairMoves(deadline_s, kPairVisitsPerNode * problem_.num_nodes(), times_exact);
  if (!moved) return;
  // The plan was filled: only a computation that gained room (or was an end
  // of a move) can have a slower option that fits now.
  moves_.clear();
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    if (changed_at_[i] <= 1) continue;
    const Move m = BestMove(i);
    if (m.index >= 0) moves_.push_back(m);
  }
  std::sort(moves_.begin(), moves_.end(), BestFirst{});  // a few, in no order worth keeping
  FillFromMoves(deadline_s);
}

void Discretizer::SettleStaleStarts(int up_to, long stamp) {
  int x;
  while (stale_starts_.PopSmallestUpTo(up_to, x)) {
    ++visits_;
    double start_s = 0;
    for (int p : dag_.preds(x)) start_s = std::max(start_s, earliest_start_[p] + duration_s_[p]);
    if (start_s == earliest_start_[x]) continue;
    if (start_s < earliest_start_[x]) MarkRoomGained(x, stamp);
    earliest_start_[x] = start_s;
    for (int y : dag_.succs(x)) stale_starts_.Push(y);
  }
}

void Discretizer::SettleStaleFinishes(int down_to, double deadline_s, long stamp) {
  int x;
  while (stale_finishes_.PopLargestDownTo(down_to, x)) {
    ++visits_;
    double finish_s = deadline_s;
    for (int s : dag_.succs(x)) finish_s = std::min(finish_s, latest_finish_[s] - duration_s_[s]);
    if (finish_s == latest_finish_[x]) continue;
    if (finish_s > latest_finish_[x]) MarkRoomGained(x, stamp);
    latest_finish_[x] = finish_s;
    for (int y : dag_.preds(x)) stale_finishes_.Push(y);
  }
}

void Discretizer::MarkRoomGained(int x, long stamp) {
  changed_at_[x] = stamp;
  // A dependency u -> v reads the times of u, v, u's successors and v's
  // predecessors: those whose u is x, a predecessor of x, or a predecessor
  // of a successor of x are to be tried again.
  candidate_[x] = 1;
  for (int p : dag_.preds(x)) candidate_[p] = 1;
  for (int s : dag_.succs(x)) {
    for (int p : dag_.preds(s)) candidate_[p] = 1;
  }
  visits_ += 4;
}

Discretizer::PairWindow Discretizer::WindowOf(int u, int v, double deadline_s) const {
  PairWindow w{earliest_start_[u], deadline_s, 0, latest_finish_[v]};
  for (int s : dag_.succs(u)) {
    if (s != v) w.u_finish_by_s = std::min(w.u_finish_by_s, latest_finish_[s] - duration_s_[s]);
  }
  for (int p : dag_.preds(v)) {
    if (p != u) w.v_ready_s = std::max(w.v_ready_s, earliest_start_[p] + duration_s_[p]);
  }
  return w;
}

bool Discretizer::CheapestPair(int u, int v, const PairWindow& w, double eps_s, int& u_index, int& v_index) {
  const std::vector<CostPoint>& pu = costs_[u].pareto();
  const std::vector<CostPoint>& pv = costs_[v].pareto();
  visits_ += static_cast<long>(pu.size() + pv.size());
  const double now_j = pu[index_[u]].cost_j + pv[index_[v]].cost_j;
  double best_j = now_j - 1e-9 * std::abs(now_j);
  u_index = v_index = -1;
  // Costs fall as times grow: the options of u too dear even with v's
  // cheapest come first, and are skipped. As u's option slows, v's window
  // only shrinks, so v's option index only falls.
  const double dearest_u_j = best_j - pv.back().cost_j;
  int i = static_cast<int>(
      std::partition_point(pu.begin(), pu.end(), [&](const CostPoint& o) { return o.cost_j >= dearest_u_j; }) -
      pu.begin());
  int j = -1;
  for (; i < static_cast<int>(pu.size()) && w.u_start_s + pu[i].time_s <= w.u_finish_by_s + eps_s; ++i) {
    const double v_time_s = w.v_finish_by_s - std::max(w.u_start_s + pu[i].time_s, w.v_ready_s) + eps_s;
    if (j < 0) {
      auto fits = [&](const CostPoint& o) { return o.time_s <= v_time_s; };
      j = static_cast<int>(std::partition_point(pv.begin(), pv.end(), fits) - pv.begin()) - 1;
    }
    while (j >= 0 && pv[j].time_s > v_time_s) --j;
    if (j < 0) break;
    if (pu[i].cost_j + pv[j].cost_j < best_j) best_j = pu[i].cost_j + pv[j].cost_j, u_index = i, v_index = j;
  }
  return u_index >= 0;
}

bool Discretizer::PairMayGain(int u, int v, int dependency, double deadline_s) {
  // CheapestPair's options fit u_start + t_u <= u_finish_by + eps and
  // t_v <= v_finish_by - max(u_start + t_u, v_ready) + eps, so t_u + t_v <=
  // v_finish_by - u_start + eps; the margin covers those sums' rounding.
  const double span_s = latest_finish_[v] - earliest_start_[u];
  const double total_s = span_s + deadline_s * kTimeEps + 1e-12 * (latest_finish_[v] + earliest_start_[u]);
  PairToBeat& beat = beat_[dependency];
  if (beat.u_index != index_[u] || beat.v_index != index_[v]) {
    // As CheapestPair sums and compares them.
    const double now_j = costs_[u].pareto()[index_[u]].cost_j + costs_[v].pareto()[index_[v]].cost_j;
    beat = {index_[u], index_[v], series_[series_of_dependency_[dependency]].TimeToBeat(now_j - 1e-9 * std::abs(now_j))};
  }
  return beat.span_s <= total_s;
}

bool Discretizer::TryPair(int u, int v, int dependency, double deadline_s, long& stamp) {
  visits_ += 1;
  if (series_filter_ && !PairMayGain(u, v, dependency, deadline_s)) return false;
  const PairWindow w = WindowOf(u, v, deadline_s);
  // Only a dependency that binds can pass time between its ends: u alone
  // sets v's start, or v alone u's finish. Otherwise a change of one end is
  // a single move, which the filling has made.
  const bool u_sets_v = w.u_start_s + duration_s_[u] > w.v_ready_s;
  const bool v_sets_u = w.v_finish_by_s - duration_s_[v] < w.u_finish_by_s;
  if (!u_sets_v && !v_sets_u) return false;
  int u_index, v_index;
  if (!CheapestPair(u, v, w, deadline_s * kTimeEps, u_index, v_index)) return false;
  const int old_u_index = index_[u], old_v_index = index_[v];
  SetOption(u, u_index);
  SetOption(v, v_index);
  // Undone or kept, the move stamps both ends: a pair undone because of a
  // side path u -> w -> v is tried again once anything around it changes.
  ++stamp;
  MarkRoomGained(u, stamp);
  MarkRoomGained(v, stamp);
  MarkStartsStale(u, v);
  // The window read the other computations' times as they were. u still
  // finishes by its other successors' latest starts, which moved only where
  // a path from them runs on through v (u -> w -> ... -> v beside the
  // dependency), and v by its latest finish, which neither end sets: so v's
  // exact earliest start after the move decides whether it fits.
  SettleStarts(v, stamp);
  if (earliest_start_[v] + duration_s_[v] > latest_finish_[v] + deadline_s * kTimeEps) {
    SetOption(u, old_u_index);
    SetOption(v, old_v_index);
    MarkStartsStale(u, v);
    return false;
  }
  for (int x : {u, v}) {
    for (int y : dag_.preds(x)) stale_finishes_.Push(y);
  }
  return true;
}

void Discretizer::MarkStartsStale(int u, int v) {
  for (int x : {u, v}) {
    for (int y : dag_.succs(x)) stale_starts_.Push(y);
  }
}

bool Discretizer::PairMoves(double deadline_s, long budget_visits, bool times_exact) {
  const int n = problem_.num_nodes();
  visits_ = 0;
  if (!times_exact) {
    ForwardPass(dag_, duration_s_, earliest_start_);
    BackwardPass(dag_, duration_s_, deadline_s, latest_finish_);
  }
  changed_at_.assign(n, 1);
  candidate_.assign(n, 1);  // the first round tries every dependency
  long stamp = 1;
  bool any = false;
  for (;;) {
    bool moved = false;
    for (int u = 0; u < n && visits_ < budget_visits; ++u) {
      SettleAround(u, deadline_s, stamp);
      if (!candidate_[u]) continue;
      candidate_[u] = 0;
      const std::span<const int> succs = dag_.succs(u);
      for (size_t k = 0; k < succs.size(); ++k) {
        const long before = stamp;
        if (TryPair(u, succs[k], dag_.first_succ(u) + static_cast<int>(k), deadline_s, stamp)) moved = true;
        if (stamp != before) SettleAround(u, deadline_s, stamp);  // a move, kept or undone
      }
    }
    // Every time exact again, and every computation that gained room marked
    // for the next round.
    SettleStarts(n - 1, stamp);
    SettleFinishes(0, deadline_s, stamp);
    any = any || moved;
    if (!moved || visits_ >= budget_visits) break;
  }
  return any;
}

void Discretizer::Search(double deadline_s, long budget_visits) {
  const int n = problem_.num_nodes();
  const long per_start_visits = budget_visits / 4;
  // The plan as given competes with every start's searched plan: pair moves
  // may have made it cheaper than a search from it ends up.
  chosen_ = index_;
  double chosen_energy_j = PlanEnergy();
  auto keep_if_cheaper = [&] {
    const double e = PlanEnergy();
    if (e < chosen_energy_j * (1 - 1e-12)) chosen_ = index_, chosen_energy_j = e;
  };
  // `polished`: the start has had its pair moves. The searched plan is a
  // candidate before its pair moves too: they lower its cost at the deadline
  // but may lengthen it, which costs blocking power.
  auto consider = [&](bool polished) {
    const bool searched = LocalSearch(deadline_s, per_start_visits);
    if (!searched && polished) return;  // the plan Search was given
    if (searched) keep_if_cheaper();
    Polish(deadline_s, /*times_exact=*/false);
    keep_if_cheaper();
  };
  consider(true);
  const bool chained = !previous_.empty() && deadline_s >= previous_deadline_s_;
  if (Chains(n, budget_visits)) {
    if (chained) {
      SetIndices(previous_);
      ForwardPass(dag_, duration_s_, earliest_start_);
      GreedyFill(deadline_s);
      consider(false);
    }
    for (bool any_option : {false, true}) {
      for (int i = 0; i < n; ++i) {
        index_[i] = static_cast<int>(costs_[i].pareto().size()) - 1;
        duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
      }
      visits_ = 0;
      if (!Repair(-1, deadline_s, per_start_visits, any_option)) continue;
      GreedyFill(deadline_s);
      consider(false);
    }
  }
  SetIndices(chosen_);
  if (!chained || chosen_energy_j < previous_energy_j_) previous_ = chosen_, previous_energy_j_ = chosen_energy_j;
  previous_deadline_s_ = deadline_s;
}

PlanChoice Discretizer::Run(const std::vector<double>& duration_s, double deadline_s, long search_visits,
                            bool pair_moves) {
  pair_moves_ = pair_moves;
  for (int i = 0; i < problem_.num_nodes(); ++i) {
    rounded_[i] = std::max(0, costs_[i].CheapestWithinNear(duration_s[i], rounded_[i]));
    index_[i] = rounded_[i];
    duration_s_[i] = costs_[i].pareto()[index_[i]].time_s;
  }
  const double deadline = std::max(deadline_s, ForwardPass(dag_, duration_s_, earliest_start_));
  GreedyFill(deadline);
  Polish(deadline, /*times_exact=*/true);  // the filling leaves them exact
  if (search_visits > 0) Search(deadline, search_visits);
  PlanChoice choice(index_.size());
  for (size_t i = 0; i < index_.size(); ++i) choice[i] = costs_[i].pareto()[index_[i]].option;
  return choice;
}

}  // namespace perseus::optimizer
