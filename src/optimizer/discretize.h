// Turning continuous durations into a real frequency plan.
//
// Each computation first takes the cheapest measured option no longer than
// its continuous duration (so the plan is never slower than the relaxation),
// then the slack left before the deadline goes, greedily by energy saved per
// second, to the computations that can use it. Pair moves then re-choose both
// ends of a dependency at once where one end's time is worth more to the
// other, and an optional local search trades: it moves one computation to a
// slower option that does not fit and buys the time back from the
// computations that are cheapest to speed up, or, where none of those
// helps, speeds one computation up and fills the time it frees. Consecutive
// calls on nearby durations (as the frontier's records are) reuse the
// previous rounding as a starting guess and scratch space, so an object
// serves one caller at a time.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "optimizer/critical_path.h"
#include "optimizer/node_costs.h"
#include "perseus/problem.h"

namespace perseus::optimizer {

class Discretizer {
 public:
  // Both must outlive the discretizer.
  Discretizer(const Problem& problem, const std::vector<NodeCosts>& costs);

  // REQUIRES: duration_s[i] >= costs[i].min_time_s(); the result's iteration
  // time is at most max(deadline_s, longest path of duration_s).
  // `search_visits` bounds the local search's work, in computations visited
  // (0: none); it stops at the first trade that does not fit the rest.
  // `pair_moves`: the filled plan, and each of the search's starts, is
  // polished by PairMoves (whose work has a budget of its own,
  // kPairVisitsPerNode per computation each time). With neither, the plan is
  // the rounding, filled.
  PlanChoice Run(const std::vector<double>& duration_s, double deadline_s, long search_visits = 0,
                 bool pair_moves = false);

  // Forgets earlier calls: the next call's plan depends on its arguments
  // alone, as on a new discretizer.
  void Forget() { previous_.clear(); }

  // Off: every binding dependency's pair is searched in full, without
  // PairMayGain's lookup first (the reference the tests compare with; the
  // plans are the same). On by default.
  void set_series_filter(bool on) { series_filter_ = on; }
  // Off: the filling's moves are sorted by std::sort alone (the reference
  // the tests and bench/optimizer_bench.cc compare with; the plans are the
  // same). On by default: see SortGivenMoves.
  void set_adaptive_sort(bool on) { adaptive_sort_ = on; }

  // Whether a plan with this search budget, on a problem of `nodes`
  // computations, can depend on earlier calls (the search then also starts
  // from their cheapest plan).
  static constexpr bool Chains(int nodes, long search_visits) { return search_visits / 4 >= kStartVisitsPerNode * nodes; }

 private:
  // Slack filling by saving rate: repeatedly lengthens the computation whose
  // best slower option that fits in its slack saves the most energy per
  // second of added time (a lengthened computation only delays its
  // descendants and hurries its ancestors). Slack only shrinks, so each
  // computation's best rate only falls and lazy re-checks of the best offered
  // pick the true best.
  void GreedyFill(double deadline_s);
  // The filling's loop, from the moves in moves_, sorted best first
  // (earliest starts and latest finishes exact, and so again at its end).
  // A lengthening marks its successors' starts and predecessors' finishes
  // stale; those are settled (SettleStarts, SettleFinishes) only up to the
  // computation offered next, so a computation far downstream of several
  // lengthenings is recomputed once for all of them. The moves given are
  // merged with those found while filling, which a heap holds: most given
  // moves are offered once and dropped (others took their slack), and the
  // sorted array offers each for one comparison where a heap of them all
  // cost a sift each (8% of the plans' time at 8 x 96).
  void FillFromMoves(double deadline_s);
  // Sorts moves_, best first. GreedyFill lists them in the order of its
  // last sort, and between plans at nearby deadlines a third of them are
  // out of place, each by about a hundred places: each of those is put in
  // place by a binary search among the sorted moves before it and one block
  // move of the moves in between, the rest cost a comparison each (the
  // plans take 6% less time at 8 x 96 than with std::sort alone,
  // bench/optimizer_bench.cc). Should the moves shifted pass
  // kShiftsPerMoveAndLevel x n x log2(n) (a few times std::sort's work),
  // std::sort finishes the job. The order is strict (each computation has
  // at most one move), so both give the same result.
  void SortGivenMoves();
  static constexpr long kShiftsPerMoveAndLevel = 8;
  struct Move {
    double rate_j_per_s;
    int node, index;  // index into pareto(); -1: no move
    // Ties: the lower node first, for determinism. The filling's moves have
    // positive rates, whose bits order as the rates do: compared so, without
    // branches, the plans took 3% less time at 8 x 96.
    bool operator<(const Move& o) const {
      const uint64_t a = std::bit_cast<uint64_t>(rate_j_per_s), b = std::bit_cast<uint64_t>(o.rate_j_per_s);
      return (a < b) | ((a == b) & (node > o.node));
    }
  };
  struct BestFirst {  // a type, not a function, so that std::sort inlines it
    bool operator()(const Move& a, const Move& b) const { return b < a; }
  };
  Move BestMove(int node) const;
  void Lengthen(int node, int index);
  // Computations waiting to be settled, each at most once at a time, taken
  // smallest id first (forward, a topological order) or largest first. A
  // bitset, not a heap: the settling visits about 100-400 computations per
  // change, and a heap's pushes and pops cost 8% of making the plans at
  // 16 x 256 (docs/design.md, "Pair moves").
  class NodeQueue {
   public:
    explicit NodeQueue(int nodes) : bits_((nodes + 63) / 64, 0) {}
    bool AnyUpTo(int limit) const { return lowest_ <= limit; }  // lowest_ is max() when empty
    bool AnyDownTo(int limit) const { return highest_ >= limit; }
    void Push(int x) {
      uint64_t& word = bits_[x >> 6];
      const uint64_t bit = uint64_t{1} << (x & 63);
      if (word & bit) return;
      word |= bit;
      ++count_;
      lowest_ = std::min(lowest_, x);
      highest_ = std::max(highest_, x);
    }
    int PopSmallest() {
      for (int i = lowest_ >> 6;; ++i) {
        uint64_t word = bits_[i];
        if (i == lowest_ >> 6) word &= ~uint64_t{0} << (lowest_ & 63);
        if (word != 0) return Take(i * 64 + std::countr_zero(word), /*smallest=*/true);
      }
    }
    int PopLargest() {
      for (int i = highest_ >> 6;; --i) {
        uint64_t word = bits_[i];
        if (i == highest_ >> 6) word &= ~uint64_t{0} >> (63 - (highest_ & 63));
        if (word != 0) return Take(i * 64 + 63 - std::countl_zero(word), /*smallest=*/false);
      }
    }
    // The smallest id waiting if it is at most `limit` (popped into *x).
    bool PopSmallestUpTo(int limit, int& x) {
      if (count_ == 0 || lowest_ > limit) return false;
      x = PopSmallest();
      if (x <= limit) return true;
      Push(x);  // beyond the limit: waits on
      return false;
    }
    // The largest id waiting if it is at least `limit`.
    bool PopLargestDownTo(int limit, int& x) {
      if (count_ == 0 || highest_ < limit) return false;
      x = PopLargest();
      if (x >= limit) return true;
      Push(x);
      return false;
    }

   private:
    // Every id waiting lies in [lowest_, highest_].
    int Take(int x, bool smallest) {
      bits_[x >> 6] &= ~(uint64_t{1} << (x & 63));
      if (--count_ == 0) {
        lowest_ = std::numeric_limits<int>::max(), highest_ = -1;
      } else if (smallest) {
        lowest_ = x + 1;
      } else {
        highest_ = x - 1;
      }
      return x;
    }
    std::vector<uint64_t> bits_;
    int count_ = 0, lowest_ = std::numeric_limits<int>::max(), highest_ = -1;
  };
  // LocalSearch from the plan as given (filled, polished) and, when a
  // quarter of the budget covers kStartVisitsPerNode visits per computation,
  // from three more starts, each with a quarter of the budget: the cheapest
  // plan of earlier calls (an earlier deadline's plan fits this one; it is
  // refilled), and every computation at its cheapest option, repaired to fit
  // by either repair. Each searched plan is polished. Keeps the cheapest
  // plan (the one given among the candidates), and remembers it for the
  // next call.
  void Search(double deadline_s, long budget_visits);
  static constexpr long kStartVisitsPerNode = 32;
  // Greedy filling by rate cannot give up several small savings for one
  // large one that needs their time. This tries such trades, the most
  // energy saved per second beyond the computation's slack first: the
  // computation takes the slower option (beyond its slack), Repair speeds up
  // computations on the paths now too long, GreedyFill spends what is left;
  // of a trade's two repairs the cheaper plan is kept if it lowers the
  // plan's energy, and the search starts over. A round tries each (node,
  // option) once and every kept trade lowers the energy, so it ends;
  // `budget_visits` ends it sooner.
  // Returns whether it changed the plan.
  bool LocalSearch(double deadline_s, long budget_visits);
  // Whether `budget_visits` covers a round of LocalSearch: listing and
  // sorting the trades (listing_visits_) and one repaired trade.
  bool CanTrade(long budget_visits) const;
  // The reverse trade, tried when no trade above lowers the energy: one
  // computation takes a faster option and GreedyFill spends the time it
  // frees on others, cheapest speed-up per second first; the first plan
  // below `best_energy_j` is kept in best_ (true).
  bool SpeedUpTrades(double deadline_s, long budget_visits, double& best_energy_j);
  // Speeds up computations other than `locked` until the longest path fits,
  // each time the one on a late path cheapest per second gained: by one
  // option, or (`any_option`) by any number, counting only the seconds the
  // path needs. False if it cannot within the budget. Both leave
  // earliest_start_ exact for duration_s_.
  bool Repair(int locked, double deadline_s, long budget_visits, bool any_option);
  // Pair moves, then filling whatever slack they freed; nothing unless
  // pair_moves_.
  // `times_exact`: earliest starts and latest finishes are exact for
  // duration_s_ and the deadline (as the filling leaves them), so PairMoves
  // need not compute them.
  void Polish(double deadline_s, bool times_exact);
  // PairMoves' budget: a call visits about 72 computations and options per
  // computation at 8 x 96 and 95 at 16 x 256 (all its rounds), so this binds
  // only on a runaway.
  static constexpr long kPairVisitsPerNode = 1024;
  // Rounding and filling choose each computation's option alone; where two
  // computations depend on each other, the time one gives up is often worth
  // more to the other (a computation whose options are not convex in time).
  // For each dependency u -> v this re-chooses both options at once, the
  // others fixed: the cheapest pair that fits u's other successors, v's
  // other predecessors and the deadline, kept if its cost is lower than the
  // pair's now (the sum of costs, energy at the deadline, falls; the
  // iteration time may grow up to the deadline) and the deadline still
  // holds. Only a dependency that binds one end's start or finish can pass
  // time between them. A round tries the dependencies around computations
  // that gained room since their last try, until one keeps nothing; the
  // budget (computations and options visited) is checked between
  // computations. Returns whether any pair changed.
  bool PairMoves(double deadline_s, long budget_visits, bool times_exact);
  // One dependency u -> v of PairMoves: a move that fits its window takes
  // the next `stamp`, and is undone if the deadline does not hold after all.
  // (A check that skipped a pair when nothing around it had gained room
  // since its last try is gone: it skipped 762 of 4.8 million tries at
  // 8 x 96 beyond what the round's candidates skip, for 3% of the plans'
  // time, and it also skipped pairs that had come to bind since, which a
  // few plans are now the cheaper for: docs/design.md, "Cheaper plans".)
  bool TryPair(int u, int v, int dependency, double deadline_s, long& stamp);
  // False if no pair of options of u and v within v's latest finish less
  // u's earliest start in all (their SeriesCosts) costs less than the pair
  // now: then CheapestPair finds none either, for its window is narrower.
  // A lookup instead of CheapestPair's walk over both option lists, which
  // finds a cheaper pair for about 3% of binding dependencies at 8 x 96.
  bool PairMayGain(int u, int v, int dependency, double deadline_s);
  // What the other computations allow the pair u -> v, in seconds.
  struct PairWindow {
    double u_start_s;      // u's earliest start
    double u_finish_by_s;  // u's latest finish for its other successors
    double v_ready_s;      // v's earliest start for its other predecessors
    double v_finish_by_s;  // v's latest finish
  };
  PairWindow WindowOf(int u, int v, double deadline_s) const;
  // The cheapest pair of options that fits `w` (times within eps_s), if
  // cheaper than the pair now.
  bool CheapestPair(int u, int v, const PairWindow& w, double eps_s, int& u_index, int& v_index);
  void SetOption(int i, int index);
  // PairMoves keeps earliest starts and latest finishes exact lazily: a
  // move marks the computations whose earliest start (its ends' successors)
  // or latest finish (their predecessors) may have changed as stale, and
  // they are recomputed from their neighbours, in topological order, only
  // when a pair reads them (or at the end of a round). Moves go forward
  // through the DAG and reads follow them, so each computation is
  // recomputed about once per round instead of once per move upstream of it
  // (at 16 x 256, 274 moves a plan each touched about 1,000 computations).
  // Settling marks the computations that gained room (an earlier start, a
  // later finish): around those a pair move, or a filling move, can appear
  // that was not there before. So can a pair move where a dependency comes
  // to bind because an end lost room (u starts later, v must finish
  // sooner); the candidates miss those until something around them gains
  // room (a review found one such dependency with a cheaper pair at GPT-3
  // 8 x 96), for marking every change would try far more pairs.
  // Exact up to id `up_to`; inline, for most calls find nothing to settle.
  void SettleStarts(int up_to, long stamp) {
    if (stale_starts_.AnyUpTo(up_to)) SettleStaleStarts(up_to, stamp);
  }
  // From id `down_to` on.
  void SettleFinishes(int down_to, double deadline_s, long stamp) {
    if (stale_finishes_.AnyDownTo(down_to)) SettleStaleFinishes(down_to, deadline_s, stamp);
  }
  void SettleStaleStarts(int up_to, long stamp);
  void SettleStaleFinishes(int down_to, double deadline_s, long stamp);
  // Makes exact what u's candidacy and its pairs read: earliest starts (and
  // their stamps) up to u's last successor, latest finishes down to u and
  // its successors' other predecessors (settle_last_, settle_first_).
  void SettleAround(int u, double deadline_s, long stamp) {
    SettleStarts(settle_last_[u], stamp);
    SettleFinishes(settle_first_[u], deadline_s, stamp);
  }
  void MarkStartsStale(int u, int v);
  // Stamps x and marks the dependencies that read its times for trying.
  void MarkRoomGained(int x, long stamp);
  double PlanEnergy();  // of index_; leaves earliest_start_ exact
  void SetIndices(const std::vector<int>& index);

  const Problem& problem_;
  const Dag dag_;
  const std::vector<NodeCosts>& costs_;
  // Indices into each computation's pareto(): the plain rounding (kept as
  // the next call's guess) and the plan being filled.
  std::vector<int> rounded_, index_;
  std::vector<double> duration_s_, earliest_start_, latest_finish_;
  // The cheapest plan of earlier calls, the deadline of the last one.
  std::vector<int> previous_;
  double previous_deadline_s_ = 0, previous_energy_j_ = 0;
  std::vector<Move> moves_, heap_;  // FillFromMoves': given (sorted), found while filling
  // GreedyFill's order of computations: those with a move as last sorted,
  // then the others.
  std::vector<int> fill_order_, no_move_;
  NodeQueue stale_starts_, stale_finishes_;  // PairMoves' and the filling's
  std::vector<int> settle_first_, settle_last_;
  // Per dependency (Dag numbering), its ends' SeriesCosts in series_, which
  // holds one per pair of shared cost curves.
  std::vector<int> series_of_dependency_;
  std::vector<SeriesCosts> series_;
  // Per dependency, the least span in which a pair of its ends' options
  // costs less than the pair of options last seen (SeriesCosts::TimeToBeat):
  // searched again only when either end's option changes, which between
  // plans at nearby deadlines few do.
  struct PairToBeat {
    int u_index = -1, v_index = -1;
    double span_s = 0;
  };
  std::vector<PairToBeat> beat_;
  long visits_ = 0;           // computations visited, for the local search's budget
  long listing_visits_ = 0;   // LocalSearch's listing and sorting of trades, per round
  bool pair_moves_ = false;  // this call's
  bool series_filter_ = true;
  bool adaptive_sort_ = true;
  struct Trade {
    // Slower-first: energy saved per second beyond the computation's slack;
    // speed-up: energy added per second gained.
    double rate_j_per_s;
    int node, index;
  };
  void SortTrades(bool highest_rate_first);
  std::vector<Trade> trades_;
  std::vector<int> kept_, best_;  // LocalSearch's
  std::vector<int> chosen_;       // Search's
  // PairMoves': the move that last gave a computation room or changed its
  // option (kept or undone), and the computations whose dependencies (as u
  // of u -> v) are to be tried.
  std::vector<long> changed_at_;
  std::vector<char> candidate_;
};

}  // namespace perseus::optimizer
