// SolveFrontier: sweep, discretise, filter, bound.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <future>
#include <memory>
#include <optional>
#include <system_error>

#include "common/ahead_pool.h"
#include "common/in_order.h"
#include "optimizer/critical_path.h"
#include "optimizer/discretize.h"
#include "optimizer/dual_certificate.h"
#include "optimizer/frontier_testing.h"
#include "optimizer/frontier_sweep.h"
#include "optimizer/lower_bound.h"
#include "optimizer/node_costs.h"
#include "optimizer/sweep_replay.h"
#include "perseus/frontier_io.h"
#include "perseus/optimizer.h"

namespace perseus {
namespace optimizer {
namespace {
std::atomic<double> early_times_shift{0};
std::atomic<long> early_slices_remade{0};
std::atomic<long> plans_made{0};
std::atomic<bool> early_slices_wait{false};
}  // namespace

void SetEarlyTimesShiftForTesting(double relative) { early_times_shift = relative; }
long EarlySlicesRemadeForTesting() { return early_slices_remade; }
long PlansMadeForTesting() { return plans_made; }
void SetEarlySlicesStartDuringTheSweepForTesting(bool wait) { early_slices_wait = wait; }
}  // namespace optimizer

using optimizer::NodeCosts;

const FrontierPlan* Frontier::PlanForTime(double time_s) const {
  const FrontierPlan* best = nullptr;
  for (const FrontierPlan& p : plans) {
    if (p.time_s <= time_s * (1 + kNoSlowerThan)) best = &p;  // time ascending, energy descending
  }
  return best;
}

namespace {

constexpr long kMaxSweepSteps = 5'000'000;
constexpr int kMaxRecordedPlans = 1'000'000;
// Whatever the unit, at least this many record times fall between the
// fastest time and the relaxation's least-energy time (RecordTimes).
constexpr int kMinRecordTimes = 64;
// The discretizer's local search budget, in computations visited: every
// plan gets whole rounds of trades, slower-first and then speed-up, on
// problems of tens of computations (large problems' plans, whose options
// are many and fine, get no round), and the no-slowdown plan, the one jobs
// run, about 16 million (10-60 ms). Plans are chained, with four starts
// each, on problems of up to 128 computations.
constexpr long kSearchVisitsPerPlan = 1L << 14;
constexpr long kSearchVisitsNoSlowdown = 1L << 24;
// Slices above the one holding the relaxation's least-energy time that are
// made during the sweep (EarlySlices).
constexpr size_t kEarlySlicesPastLeastEnergy = 2;
static_assert(optimizer::Discretizer::Chains(128, kSearchVisitsPerPlan) &&
              !optimizer::Discretizer::Chains(129, kSearchVisitsPerPlan));

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

FrontierPlan MakePlan(const Problem& problem, PlanChoice choice) {
  PlanCost c = EvaluatePlan(problem, choice);
  return FrontierPlan{std::move(choice), c.time_s, c.energy_j, 0};
}

// Keeps the plans no other plan beats in both time and energy; time ascending.
std::vector<FrontierPlan> ParetoFilter(std::vector<FrontierPlan> plans) {
  std::sort(plans.begin(), plans.end(), [](const FrontierPlan& a, const FrontierPlan& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.energy_j < b.energy_j;
  });
  // Times within Frontier::kSameTime of each other differ only by floating-point
  // summation order; of such plans the cheaper one stands for both.
  std::vector<FrontierPlan> kept;
  for (FrontierPlan& p : plans) {
    if (!kept.empty() && p.time_s <= kept.back().time_s * (1 + Frontier::kSameTime)) {
      if (p.energy_j < kept.back().energy_j) kept.back() = std::move(p);
    } else if (kept.empty() || p.energy_j < kept.back().energy_j * (1 - 1e-12)) {
      kept.push_back(std::move(p));
    }
  }
  return kept;
}

Status CheckOptions(const Problem& problem, const FrontierOptions& options) {
  if (!(options.unit_time_s > 0) || !std::isfinite(options.unit_time_s)) {
    return Status::InvalidArgument("unit time: expected a positive number of seconds");
  }
  if (options.lower_bound_samples < -1 || options.lower_bound_samples > 10000) {
    return Status::InvalidArgument("lower bound samples: expected -1 (auto) or 0..10000");
  }
  if (options.max_clock_changes_per_gpu < -1) {
    return Status::InvalidArgument("max clock changes per GPU: expected -1 (no limit) or a count >= 0");
  }
  if (options.threads < 0) return Status::InvalidArgument("threads: expected 0 (every CPU) or a count >= 1");
  if (options.max_plans < 0) return Status::InvalidArgument("max plans: expected 0 (every unit time) or a count >= 1");
  if (problem.nodes.empty()) return Status::InvalidArgument("problem has no computations");
  return Status::Ok();
}

struct TimedTangent {
  Result<optimizer::EnergyLowerBound::Tangent> tangent = Status::Internal("not computed");
  double seconds = 0;  // making it
};

struct SweepResult {
  std::vector<FrontierPlan> candidates;  // energy descending; ParetoFilter sorts out the times
  int recorded = 0;
  optimizer::RelaxationCurve relaxation;
  int steps = 0;
  double end_time_s = 0;  // where the sweep stopped
  // The dual certificate of the relaxation at the all-max time (or the
  // sweep's range end nearest it), made beside the plans (StartCertificate);
  // not valid() unless FrontierOptions::lower_bound_samples < 0.
  std::future<TimedTangent> certificate;
  double plans_s = 0;  // making the discrete plans
  int threads = 1;     // on this many
  int plans_during_sweep = 0;  // of those recorded, made while the sweep ran
};

// The iteration time with every computation at its fastest option.
double FastestTime(const Problem& problem, const std::vector<NodeCosts>& costs) {
  std::vector<double> fastest(costs.size()), earliest_start;
  for (size_t i = 0; i < costs.size(); ++i) fastest[i] = costs[i].min_time_s();
  return optimizer::ForwardPass(optimizer::Dag(problem), fastest, earliest_start);
}

// The deadlines to record plans at, ascending: every unit of time back from
// the slowest down to the fastest time (every computation at its fastest
// option), the sweep's end (`end_s`, that fastest time up to rounding, or
// where the sweep stalled) and the all-max time. Where `max_plans` asks for fewer, the unit grows so that
// about that many fall between the fastest time and `least_energy_s` (where
// the relaxation's energy is least; the recording usually stops soon after
// it), and at most 4 x max_plans between the fastest and the slowest time
// (where discrete plans keep getting cheaper well past the relaxation's
// least-energy time). A unit as long as that span (a 1 ms unit on an
// iteration of a fraction of a millisecond, or a coarse one asked for)
// would leave a plan or two and miss the minimum-energy plan: the unit
// shrinks so that at least kMinRecordTimes fall before the least-energy
// time, and at most 64 x that many in all. Only `end_s` needs the whole
// sweep: the rest is known once the sweep has passed the least-energy time
// (EarlySlices).
Result<std::vector<double>> RecordTimes(double fastest_s, double end_s, double slowest_s, double all_max_s,
                                        double unit_s, int max_plans, double least_energy_s) {
  if (least_energy_s > fastest_s) {
    unit_s = std::min(unit_s, std::max((least_energy_s - fastest_s) / kMinRecordTimes,
                                       (slowest_s - fastest_s) / (64.0 * kMinRecordTimes)));
  }
  if (max_plans > 0) {
    unit_s = std::max({unit_s, (least_energy_s - fastest_s) / max_plans, (slowest_s - fastest_s) / (4.0 * max_plans)});
  }
  const double units = std::floor(std::max(0.0, slowest_s - fastest_s) / unit_s);
  if (units > kMaxRecordedPlans) {
    return Status::InvalidArgument("unit time " + std::to_string(unit_s) +
                                   " s is too small for this problem (over 1 million plans); use a larger one");
  }
  // Grid times within half a unit above the sweep's end (or below it, where
  // the sweep stalled short of the fastest time) are left to the end itself:
  // the end is a few ulps above the fastest time, and a grid time on the
  // fastest time would be kept beside the end but merged with the fastest
  // time while the sweep runs.
  std::vector<double> times = {end_s};
  if (all_max_s > end_s && all_max_s < slowest_s) times.push_back(all_max_s);
  for (long k = static_cast<long>(units); k >= 0; --k) {
    const double t = slowest_s - static_cast<double>(k) * unit_s;
    if (t >= end_s + unit_s / 2) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

bool Cancelled(const FrontierOptions& options) {
  return options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed);
}

// How the record times are split into tasks. Each slice of consecutive
// times starts from a fresh discretizer, so the plans are the same on any
// number of threads: a plan depends on the discretizer's earlier calls only
// where its search starts from earlier plans, which the no-slowdown plan's
// does (from the cheapest plan since the slice began). The fastest slice
// ends at the no-slowdown plan's time where that is among the first
// kSliceTimes, else it is the fastest time alone, so that the plans after
// it, which need no more than a stretch of the sweep, can be made before the
// sweep ends (EarlySlices), and only the fastest few wait for it; a later
// slice that the all-max time opens begins one time earlier, so that its
// search starts from the plan before it. Where every plan's search starts
// from earlier plans (small problems, fast anyway), plans are made one at a
// time, in order, on the caller's thread, each discretizer call following
// the last.
class Slicing {
 public:
  Slicing(const Problem& problem, const std::vector<double>& times, double all_max_time_s)
      : all_max_time_s_(all_max_time_s) {
    constexpr size_t kSliceTimes = 64;
    chained_ = optimizer::Discretizer::Chains(problem.num_nodes(), kSearchVisitsPerPlan);
    per_slice_ = chained_ ? 1 : kSliceTimes;
    // times[0] is the sweep's end, which equals no other time (while the
    // sweep runs, EarlySlices puts the fastest time there, which can equal
    // the all-max time).
    const auto all_max = times.empty() ? times.end() : std::find(times.begin() + 1, times.end(), all_max_time_s);
    const size_t at = static_cast<size_t>(all_max - times.begin());
    first_ = !chained_ && all_max != times.end() && at < per_slice_ ? at + 1 : 1;
    slices_ = times.size() <= first_ ? 1 : 1 + (times.size() - first_ + per_slice_ - 1) / per_slice_;
  }

  bool chained() const { return chained_; }  // one plan per slice, on one thread, each following the last
  double all_max_time_s() const { return all_max_time_s_; }
  size_t slices() const { return slices_; }
  // The first time of slice `slice`.
  size_t Start(size_t slice) const { return slice == 0 ? 0 : first_ + (slice - 1) * per_slice_; }
  // The first time slice `slice` replays: its own, or the one before when
  // that is the no-slowdown plan's.
  size_t Begin(const std::vector<double>& times, size_t slice) const {
    const size_t start = Start(slice);
    return !chained_ && start > 0 && times[start] == all_max_time_s_ ? start - 1 : start;
  }
  // The time after its last.
  size_t End(const std::vector<double>& times, size_t slice) const {
    return std::min(times.size(), slice == 0 ? first_ : Start(slice) + per_slice_);
  }

 private:
  double all_max_time_s_;
  bool chained_;
  size_t per_slice_, first_, slices_;
};

// What the recording has seen of the plans so far, in time order: when it
// can stop, and which plans are candidates for the frontier.
class Recording {
 public:
  Recording(const optimizer::RelaxationCurve& relaxation, double unit_time_s)
      : relaxation_(&relaxation), unit_time_s_(unit_time_s) {}
  // Whether every plan at times[k] or later is known to use more energy than
  // the cheapest one found. A later deadline's plan could only enter the
  // frontier by coming out faster than that, further below its deadline
  // than any plan so far by a factor of two, or than the previous deadline
  // (where times are far apart, a plan near the least-energy time can come
  // out well below its deadline); the relaxation bounds every plan at least
  // as slow as that horizon.
  bool Done(const std::vector<double>& times, size_t k) const {
    const double horizon = std::min(times[k] - 2 * max_shortfall_s_ - unit_time_s_, times[k > 0 ? k - 1 : 0]);
    return any_ && relaxation_->AtLeastTime(horizon) > cheapest_j_;
  }
  // Takes in the plan made for deadline `time_s`; true if it is a candidate:
  // only a plan cheaper than every faster one can be on the frontier.
  bool Add(double time_s, const FrontierPlan& plan) {
    max_shortfall_s_ = std::max(max_shortfall_s_, time_s - plan.time_s);
    if (any_ && plan.energy_j >= cheapest_j_) return false;
    any_ = true, cheapest_j_ = plan.energy_j;
    return true;
  }

 private:
  const optimizer::RelaxationCurve* relaxation_;
  double unit_time_s_;
  bool any_ = false;
  double cheapest_j_ = 0;       // the last candidate's energy
  double max_shortfall_s_ = 0;  // how much faster than its deadline a plan has come out
};

// The discrete plans at one slice's times, replayed by `replay` and made by
// `discretizer`; fewer if `abandon` is set or the solve is cancelled
// meanwhile.
// With `seen` (the recording up to the slice's first time), the slice stops
// where the recording will: a slice made in order, on the thread that
// records, need not make the plans past the recording's end.
std::vector<FrontierPlan> RecordSlice(const Problem& problem, const std::vector<double>& times, size_t slice,
                                      const Slicing& slicing, const FrontierOptions& options,
                                      const std::atomic<bool>& abandon, optimizer::SweepReplay& replay,
                                      optimizer::Discretizer& discretizer, std::optional<Recording> seen) {
  std::vector<FrontierPlan> plans;
  if (!slicing.chained()) discretizer.Forget();
  std::vector<double> durations_s;
  for (size_t k = slicing.Begin(times, slice); k < slicing.End(times, slice); ++k) {
    if (abandon.load(std::memory_order_relaxed) || Cancelled(options)) break;
    const bool recorded = k >= slicing.Start(slice);
    if (recorded && seen && seen->Done(times, k)) break;
    replay.DurationsAt(times[k], durations_s);
    const long search_visits = times[k] == slicing.all_max_time_s() ? kSearchVisitsNoSlowdown : kSearchVisitsPerPlan;
    PlanChoice choice = discretizer.Run(durations_s, times[k], search_visits, /*pair_moves=*/true);
    optimizer::plans_made.fetch_add(1, std::memory_order_relaxed);
    if (!recorded) continue;
    plans.push_back(MakePlan(problem, std::move(choice)));
    if (seen) seen->Add(times[k], plans.back());
  }
  return plans;
}

// Plans made while the sweep still runs, on threads - 1 workers (the sweep
// keeps a CPU of its own). Once the sweep is past the relaxation's
// least-energy time, every record time but the sweep's end is known
// (RecordTimes); a slice at or below that time, or just above it, can be
// made as soon as the sweep has passed its fastest time, from a copy of the
// stretch of trajectory it replays (SweepStretch: the same durations, to
// the bit, as the finished sweep's replay). Slices further above, where the
// recording stops somewhere, and the fastest one, which holds the sweep's
// end, wait for RecordPlans. A slice made here counts only if the finished
// sweep's record times for it are the same (Claim): a least-energy time
// that moves once more or a grid that differs leaves it to be made again.
class EarlySlices {
 public:
  EarlySlices(const Problem& problem, const std::vector<NodeCosts>& costs, const FrontierOptions& options,
              double all_max_time_s, double fastest_s, double slowest_s)
      : problem_(problem),
        costs_(costs),
        options_(options),
        all_max_time_s_(all_max_time_s),
        fastest_s_(fastest_s),
        slowest_s_(slowest_s) {}
  ~EarlySlices() { abandon_ = true; }  // before pool_ joins its workers

  // After each step of the sweep.
  void Offer(const optimizer::FrontierSweep& sweep, const optimizer::RelaxationCurve& relaxation) {
    if (times_.empty() && !Predict(sweep, relaxation)) return;
    // No more queued than the workers can start: a slice offered later
    // copies a longer stretch, but one offered now and never started (the
    // sweep ended first) would hold its copy for nothing.
    while (next_ > 0 && sweep.time_s() <= times_[slicing_->Begin(times_, next_)] &&
           pool_->queued() < static_cast<size_t>(pool_->workers())) {
      const size_t slice = next_--;
      auto stretch = std::make_shared<const optimizer::SweepStretch>(sweep, times_[slicing_->End(times_, slice) - 1]);
      pool_->Offer(slice, [this, slice, stretch](int worker) { return Make(slice, *stretch, worker); });
      if (optimizer::early_slices_wait) pool_->WaitUntilStarted();
    }
  }

  // No slice starts after this; those running finish.
  void Close() {
    if (pool_) pool_->Close();
  }
  // Those running stop at their next plan (their slices are then made again
  // if claimed).
  std::atomic<bool>& abandon() { return abandon_; }

  // The slice's plans, if made here for the same times as RecordPlans's
  // `slicing` of `times` gives it; nullopt: the caller makes them.
  std::optional<std::vector<FrontierPlan>> Claim(size_t slice, const std::vector<double>& times,
                                                 const Slicing& slicing) {
    if (!pool_) return std::nullopt;
    std::optional<Made> made = pool_->Claim(slice);
    if (!made) return std::nullopt;
    const size_t begin = slicing.Begin(times, slice), end = slicing.End(times, slice);
    if (made->plans.size() != end - slicing.Start(slice) ||
        !std::equal(times.begin() + static_cast<std::ptrdiff_t>(begin), times.begin() + static_cast<std::ptrdiff_t>(end),
                    made->times.begin(), made->times.end())) {
      ++optimizer::early_slices_remade;
      return std::nullopt;
    }
    return std::move(made->plans);
  }

 private:
  struct Made {
    std::vector<double> times;  // the slice's, from Slicing::Begin
    std::vector<FrontierPlan> plans;
  };

  // Once the relaxation's energy has risen past its least (it is convex in
  // the time), the record times below; false until then, or if there are
  // too few slices for a second thread.
  bool Predict(const optimizer::FrontierSweep& sweep, const optimizer::RelaxationCurve& relaxation) {
    if (predicted_) return false;
    const double least_j = relaxation.LeastEnergy();
    const double now_j = sweep.relaxation_cost_j() + problem_.pipeline_blocking_power_w() * sweep.time_s();
    if (!(now_j > least_j + 1e-9 * std::abs(least_j))) return false;
    predicted_ = true;
    const double least_energy_s = relaxation.MinEnergyTime();
    Result<std::vector<double>> times = RecordTimes(fastest_s_, fastest_s_, slowest_s_, all_max_time_s_,
                                                    options_.unit_time_s, options_.max_plans, least_energy_s);
    if (!times.ok()) return false;
    if (const double shift = optimizer::early_times_shift; shift != 0) {
      // The all-max time stays, and with it the slices' sizes: only the times differ.
      for (double& t : *times) t = t == all_max_time_s_ ? t : t * (1 + shift);
      std::sort(times->begin(), times->end());
    }
    const Slicing slicing(problem_, *times, all_max_time_s_);
    const size_t slices = slicing.slices();
    const int threads = WorkerCount(options_.threads, slices);
    if (slicing.chained() || threads < 2) return false;
    times_ = std::move(*times);
    slicing_.emplace(slicing);
    // The slice holding the least-energy time and the two above it: the
    // recording stops soon after that time (about 150 plans past it at
    // GPT-3 8 x 96), never before it, so these are almost always needed.
    next_ = 0;
    while (next_ + 1 < slices && times_[slicing_->Begin(times_, next_ + 1)] <= least_energy_s) ++next_;
    next_ = std::min(next_ + kEarlySlicesPastLeastEnergy, slices - 1);
    discretizers_.resize(static_cast<size_t>(threads - 1));
    pool_.emplace(threads - 1);
    return true;
  }

  Made Make(size_t slice, const optimizer::SweepStretch& stretch, int worker) {
    std::unique_ptr<optimizer::Discretizer>& discretizer = discretizers_[static_cast<size_t>(worker)];
    if (!discretizer) discretizer = std::make_unique<optimizer::Discretizer>(problem_, costs_);
    optimizer::SweepReplay replay(stretch);
    Made made;
    made.times.assign(times_.begin() + static_cast<std::ptrdiff_t>(slicing_->Begin(times_, slice)),
                      times_.begin() + static_cast<std::ptrdiff_t>(slicing_->End(times_, slice)));
    made.plans = RecordSlice(problem_, times_, slice, *slicing_, options_, abandon_, replay, *discretizer, std::nullopt);
    return made;
  }

  const Problem& problem_;
  const std::vector<NodeCosts>& costs_;
  const FrontierOptions& options_;
  const double all_max_time_s_, fastest_s_, slowest_s_;
  bool predicted_ = false;
  std::vector<double> times_;  // the record times once predicted; read-only after
  std::optional<Slicing> slicing_;  // of times_
  size_t next_ = 0;            // the next slice to offer, counting down; 0: none left
  std::vector<std::unique_ptr<optimizer::Discretizer>> discretizers_;  // per worker
  std::atomic<bool> abandon_{false};
  std::optional<AheadPool<Made>> pool_;  // last: joined first
};

// Per worker: a replay of the sweep and a discretizer, kept across its slices.
struct Recorder {
  Recorder(const Problem& problem, const std::vector<NodeCosts>& costs, const optimizer::FrontierSweep& sweep)
      : replay(sweep), discretizer(problem, costs) {}
  optimizer::SweepReplay replay;
  optimizer::Discretizer discretizer;
};

// Sets a flag when it goes out of scope (however the scope is left).
class SetOnExit {
 public:
  explicit SetOnExit(std::atomic<bool>& flag) : flag_(flag) {}
  ~SetOnExit() { flag_ = true; }
  SetOnExit(const SetOnExit&) = delete;
  SetOnExit& operator=(const SetOnExit&) = delete;

 private:
  std::atomic<bool>& flag_;
};

// Discrete plans recorded walking the sweep's trajectory back from the
// fastest time: a plan every unit of time and at the all-max time, until
// the relaxation proves every slower plan uses more energy than one already
// found. Plans are made ahead on worker threads (FrontierOptions::threads)
// and taken in order here, or taken from those made during the sweep
// (`early`); the workers are joined before this returns.
Status RecordPlans(const Problem& problem, const std::vector<NodeCosts>& costs,
                   const optimizer::FrontierSweep& sweep, const std::vector<double>& times, double all_max_time_s,
                   const FrontierOptions& options, EarlySlices& early, SweepResult& out) {
  const Slicing slicing(problem, times, all_max_time_s);
  const size_t slices = slicing.slices();
  out.threads = WorkerCount(slicing.chained() ? 1 : options.threads, slices);
  std::vector<std::unique_ptr<Recorder>> recorders(out.threads);
  std::atomic<bool> abandon{false};
  struct Made {
    std::vector<FrontierPlan> plans;
    bool during_sweep;
  };
  Recording recording(out.relaxation, options.unit_time_s);
  // On one thread each slice is made when taken, as the recording reaches
  // it: it sees the recording so far (on more, workers make slices ahead).
  const bool made_when_taken = out.threads == 1;
  InOrder<Made> made(slices, out.threads, [&](size_t slice, int worker) {
    if (std::optional<std::vector<FrontierPlan>> plans = early.Claim(slice, times, slicing)) {
      return Made{std::move(*plans), true};
    }
    if (!recorders[worker]) recorders[worker] = std::make_unique<Recorder>(problem, costs, sweep);
    return Made{RecordSlice(problem, times, slice, slicing, options, abandon, recorders[worker]->replay,
                            recorders[worker]->discretizer,
                            made_when_taken ? std::optional<Recording>(recording) : std::nullopt),
                false};
  });
  const SetOnExit abandon_on_exit(abandon), abandon_early_on_exit(early.abandon());  // before `made` joins
  std::optional<Made> slice;
  size_t slice_index = 0;  // of `slice`
  for (size_t k = 0; k < times.size(); ++k) {
    if (recording.Done(times, k)) break;
    if (k == 0 || k == slicing.End(times, slice_index)) {
      slice_index = k == 0 ? 0 : slice_index + 1;
      slice = made.Take(slice_index);
    }
    const size_t in_slice = k - slicing.Start(slice_index);
    if (Cancelled(options) || !slice || in_slice >= slice->plans.size()) break;
    FrontierPlan& plan = slice->plans[in_slice];
    ++out.recorded;
    out.plans_during_sweep += slice->during_sweep;
    if (options.progress) options.progress->plans_recorded.store(out.recorded, std::memory_order_relaxed);
    if (recording.Add(times[k], plan)) out.candidates.push_back(std::move(plan));
  }
  return Cancelled(options) ? Status::Unavailable("cancelled") : Status::Ok();
}

// The dual certificate of the relaxation's optimum `durations_s` at
// `time_s`: on a thread of its own, beside the plans, where there are CPUs
// for both (FrontierOptions::threads), else when asked for.
std::future<TimedTangent> StartCertificate(const Problem& problem, const std::vector<NodeCosts>& costs,
                                           const FrontierOptions& options, double time_s,
                                           std::vector<double> durations_s) {
  auto certify = [&problem, &costs, time_s, durations = std::move(durations_s)] {
    const auto start = std::chrono::steady_clock::now();
    TimedTangent made{optimizer::DualFlowTangent(problem, costs, durations, time_s), 0};
    made.seconds = Seconds(start);
    return made;
  };
  if (WorkerCount(options.threads, 2) >= 2) {
    try {
      return std::async(std::launch::async, certify);
    } catch (const std::system_error&) {
      // No thread to spare: made when asked for.
    }
  }
  return std::async(std::launch::deferred, std::move(certify));
}

// The sweep from slowest to fastest (`fastest_s`), then the discrete plans
// (RecordPlans), some of them made while the sweep runs (EarlySlices).
Result<SweepResult> Sweep(const Problem& problem, const std::vector<NodeCosts>& costs, const FrontierOptions& options,
                          double all_max_time_s, double fastest_s) {
  optimizer::FrontierSweep sweep(problem, costs);
  SweepResult out{{}, 0, optimizer::RelaxationCurve(problem.pipeline_blocking_power_w()), 0, 0, {}};
  const double slowest_s = sweep.time_s();
  EarlySlices early(problem, costs, options, all_max_time_s, fastest_s, slowest_s);
  out.relaxation.Add(sweep.time_s(), sweep.relaxation_cost_j());
  while (sweep.Step()) {
    if (sweep.steps() > kMaxSweepSteps) return Status::Internal("sweep did not converge (over 5 million steps)");
    if (Cancelled(options)) return Status::Unavailable("cancelled");
    out.relaxation.Add(sweep.time_s(), sweep.relaxation_cost_j());
    early.Offer(sweep, out.relaxation);
    if (options.progress) {
      options.progress->sweep_steps.store(sweep.steps(), std::memory_order_relaxed);
      if (slowest_s > fastest_s) {
        options.progress->sweep_fraction.store(std::min(1.0, (slowest_s - sweep.time_s()) / (slowest_s - fastest_s)),
                                               std::memory_order_relaxed);
      }
    }
  }
  early.Close();
  out.relaxation.Finish();
  out.steps = sweep.steps();
  out.end_time_s = sweep.time_s();
  Result<std::vector<double>> times = RecordTimes(fastest_s, sweep.time_s(), slowest_s, all_max_time_s,
                                                  options.unit_time_s, options.max_plans,
                                                  out.relaxation.MinEnergyTime());
  if (!times.ok()) return times.status();
  if (options.progress) {
    options.progress->record_times.store(static_cast<int>(times->size()), std::memory_order_relaxed);
  }
  if (options.lower_bound_samples < 0) {  // the default check certifies them
    const double certificate_time_s = std::clamp(all_max_time_s, sweep.time_s() * (1 + 1e-9), slowest_s);
    std::vector<double> durations_s;
    optimizer::SweepReplay(sweep).DurationsAt(certificate_time_s, durations_s);
    out.certificate = StartCertificate(problem, costs, options, certificate_time_s, std::move(durations_s));
  }
  const auto plans_start = std::chrono::steady_clock::now();
  PERSEUS_RETURN_IF_ERROR(RecordPlans(problem, costs, sweep, *times, all_max_time_s, options, early, out));
  out.plans_s = Seconds(plans_start);
  return out;
}

std::vector<double> SampleTimes(double fastest_s, double slowest_s, double all_max_s, int samples) {
  // The all-max time first (the bound users look at most), then spread out.
  std::vector<double> t;
  if (samples <= 0) return t;
  // Exactly at the fastest time the relaxation is degenerate; stay a hair above.
  double lo = fastest_s * (1 + 1e-9);
  t.push_back(std::max(all_max_s, lo));
  for (int k = 1; k < samples; ++k) t.push_back(lo + (slowest_s - lo) * k / samples);
  return t;
}

// What a relaxation cost's error is relative to: the cost itself, or the
// all-max energy where the cost is near zero (blocking power makes every
// computation's cost its energy less that power times its time).
double EnergyScale(double cost_j, const Frontier& f) { return std::max(std::abs(cost_j), f.all_max.energy_j); }

// Where the automatic check's one min-cost-flow solve disagrees with the
// sweep, its bounds are made from this many (problems of up to
// kFallbackSamplesMaxNodes computations, 0.1 s a solve at 1,536).
constexpr int kFallbackSamples = 8;
constexpr int kFallbackSamplesMaxNodes = 2048;

// Lower bounds from the sweep's relaxation, checked by the dual-flow
// certificate (the default) or independent min-cost-flow solves; on a
// disagreement with the latter their bounds are used.
Status AddLowerBounds(const Problem& problem, const std::vector<NodeCosts>& costs, const FrontierOptions& options,
                      SweepResult& sweep, double fastest_s, Frontier& f) {
  const optimizer::RelaxationCurve& relaxation = sweep.relaxation;
  const optimizer::EnergyLowerBound* fallback = nullptr;
  Result<optimizer::EnergyLowerBound> lb = Status::Internal("not computed");
  int samples = options.lower_bound_samples;
  if (samples < 0) {
    // The dual certificate at the all-max time, for any size; should it
    // fail, one min-cost-flow solve (small problems only) decides.
    TimedTangent made = sweep.certificate.get();
    f.stats.lower_bound_s += made.seconds;
    const Result<optimizer::EnergyLowerBound::Tangent>& cert = made.tangent;
    if (cert.ok()) {
      const double err = (relaxation.CostAt(cert->time_s) - cert->cost_j) / EnergyScale(cert->cost_j, f);
      f.stats.lower_bound_max_error = std::abs(err);
      f.stats.lower_bound_checked = std::abs(err) <= 1e-6;
    }
    samples = f.stats.lower_bound_checked || problem.num_nodes() > kAutoCheckMaxNodes ? 0 : 1;
  }
  if (samples > 0) {
    const auto start = std::chrono::steady_clock::now();
    double slowest_s = std::max(f.plans.back().time_s, fastest_s);
    lb = optimizer::EnergyLowerBound::Compute(problem, costs,
                                              SampleTimes(fastest_s, slowest_s, f.all_max.time_s, samples),
                                              options.cancel);
    if (!lb.ok()) return lb.status();
    f.stats.lower_bound_checked = true;
    for (const auto& tangent : lb->tangents()) {
      double err = (relaxation.CostAt(tangent.time_s) - tangent.cost_j) / EnergyScale(tangent.cost_j, f);
      f.stats.lower_bound_max_error = std::max(f.stats.lower_bound_max_error, std::abs(err));
      if (err > 1e-6) f.stats.lower_bound_checked = false;
    }
    if (!f.stats.lower_bound_checked && options.lower_bound_samples < 0 &&
        problem.num_nodes() <= kFallbackSamplesMaxNodes) {
      // The automatic check's one solve disagreed: its tangent line alone
      // bounds the plans far from its time by next to nothing (below zero,
      // found in review), so a few more make the envelope.
      lb = optimizer::EnergyLowerBound::Compute(problem, costs,
                                                SampleTimes(fastest_s, slowest_s, f.all_max.time_s, kFallbackSamples),
                                                options.cancel);
      if (!lb.ok()) return lb.status();
    }
    if (!f.stats.lower_bound_checked) fallback = &*lb;
    f.stats.lower_bound_s += Seconds(start);
  }
  // No plan uses negative energy; and a bound above a plan's own energy by
  // rounding (the two are summed differently) is that energy.
  auto bound = [&](const FrontierPlan& p) {
    const double b = std::max(0.0, fallback ? fallback->AtTime(p.time_s) : relaxation.AtTime(p.time_s));
    return b > p.energy_j && b <= p.energy_j * (1 + 1e-9) ? p.energy_j : b;
  };
  for (FrontierPlan& p : f.plans) p.lower_bound_j = bound(p);
  f.all_max.lower_bound_j = bound(f.all_max);
  return Status::Ok();
}

// Most of the solver's tolerances are relative to the times and energies
// they compare, but some constants are absolute, sized for computations of
// milliseconds and up (the min cut's 1e-9 floor under a residual; before
// 2026-11-29 also a 1e-9 s window around every hull vertex and a 1 J floor
// under the certificate's check). A profile of sub-microsecond computations
// lost its savings to them and got a bound above its plans (found in
// review), so a problem whose fastest computation is shorter than
// kShortestSolvedTime_s is solved with every time and energy multiplied by
// the power of two that brings that computation to between 1 and 2 ms
// (powers stay the same; the scaling and its undoing are exact), and the
// frontier's times and energies scaled back. 0: no scaling needed.
constexpr double kShortestSolvedTime_s = 1e-4;

int TimeScaleExponent(const Problem& problem) {
  double shortest_s = std::numeric_limits<double>::infinity();
  for (const ProblemNode& n : problem.nodes) {
    for (const FreqPoint& o : n.options) shortest_s = std::min(shortest_s, o.time_s);
  }
  if (!(shortest_s > 0) || shortest_s >= kShortestSolvedTime_s) return 0;
  return std::ilogb(1e-3 / shortest_s) + 1;  // shortest_s x 2^k in [1, 2) ms
}

Problem ScaleTimes(Problem problem, int exponent) {
  for (ProblemNode& n : problem.nodes) {
    for (FreqPoint& o : n.options) o.time_s = std::ldexp(o.time_s, exponent), o.energy_j = std::ldexp(o.energy_j, exponent);
  }
  return problem;
}

void ScaleTimes(FrontierPlan& plan, int exponent) {
  plan.time_s = std::ldexp(plan.time_s, exponent);
  plan.energy_j = std::ldexp(plan.energy_j, exponent);
  plan.lower_bound_j = std::ldexp(plan.lower_bound_j, exponent);
}

}  // namespace

Result<Frontier> SolveFrontier(const Problem& problem, const FrontierOptions& options) {
  PERSEUS_RETURN_IF_ERROR(CheckOptions(problem, options));
  if (const int exponent = TimeScaleExponent(problem); exponent != 0) {
    FrontierOptions scaled_options = options;
    scaled_options.unit_time_s = std::ldexp(options.unit_time_s, exponent);
    Result<Frontier> f = SolveFrontier(ScaleTimes(problem, exponent), scaled_options);
    if (!f.ok()) return f.status();
    ScaleTimes(f->all_max, -exponent);
    for (FrontierPlan& p : f->plans) ScaleTimes(p, -exponent);
    return f;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<NodeCosts> costs = optimizer::BuildNodeCosts(problem);
  Frontier f;
  f.all_max = MakePlan(problem, AllMaxPlan(problem));
  const double fastest_s = FastestTime(problem, costs);
  Result<SweepResult> sweep = Sweep(problem, costs, options, f.all_max.time_s, fastest_s);
  if (!sweep.ok()) return sweep.status();
  f.stats.sweep_steps = sweep->steps;
  f.stats.plans_s = sweep->plans_s;
  f.stats.plan_threads = sweep->threads;
  f.stats.plans_during_sweep = sweep->plans_during_sweep;
  f.stats.sweep_complete = sweep->end_time_s <= fastest_s * (1 + 1e-6);
  sweep->candidates.push_back(f.all_max);
  f.stats.candidate_plans = sweep->recorded + 1;
  f.plans = ParetoFilter(std::move(sweep->candidates));
  f.stats.solve_s = Seconds(t0);
  if (Cancelled(options)) return Status::Unavailable("cancelled");
  PERSEUS_RETURN_IF_ERROR(AddLowerBounds(problem, costs, options, *sweep, fastest_s, f));
  if (options.max_clock_changes_per_gpu >= 0) {
    auto t2 = std::chrono::steady_clock::now();
    LimitFrontierClockChanges(problem, options.max_clock_changes_per_gpu, &f, options.cancel, options.threads);
    f.stats.clock_limit_s = Seconds(t2);
    if (Cancelled(options)) return Status::Unavailable("cancelled");
  }
  return f;
}

namespace {

// A bound for a plan of time `time_s` that is not on the unlimited frontier
// `plans` (time ascending): a frontier plan's bound holds for every plan no
// slower than it, so the first plan at least as slow gives the tightest one
// here, or none (0) past the slowest. A limited plan from plans[i] is no
// slower than it unless a lower clock is faster than the highest
// (LimitClockChanges); keeping plans[i]'s bound then put bounds above plans'
// energies (found in review).
double BoundAtLeastAsSlow(const std::vector<FrontierPlan>& plans, double time_s) {
  auto it = std::partition_point(plans.begin(), plans.end(), [&](const FrontierPlan& p) {
    return p.time_s < time_s * (1 - Frontier::kSameTime);
  });
  return it == plans.end() ? 0 : it->lower_bound_j;
}

}  // namespace

void LimitFrontierClockChanges(const Problem& problem, int max_changes_per_gpu, Frontier* f,
                               const std::atomic<bool>* cancel, int threads, bool move_runs,
                               const std::vector<PlanChoice>* one_clock_plans, Frontier* unmoved) {
  if (f->plans.empty()) {
    if (unmoved) *unmoved = *f;
    return;
  }
  if (f->plans.size() > kMaxLimitedPlans) *f = SubFrontier(*f, ThinPlanIndices(*f, kMaxLimitedPlans, KeyPlanIndices(*f)));
  // Plans are independent: limited on every CPU, and the plans on one clock
  // per GPU (task 0, the longest) made beside them.
  auto make = [&](size_t task, int) {
    std::vector<FrontierPlan> out;
    if (task == 0) {
      const std::vector<PlanChoice> searched =
          one_clock_plans ? std::vector<PlanChoice>{} : OneClockPerGpuPlans(problem, cancel);
      for (const PlanChoice& choice : one_clock_plans ? *one_clock_plans : searched) out.push_back(MakePlan(problem, choice));
    } else {
      const FrontierPlan& p = f->plans[task - 1];
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return std::vector<FrontierPlan>{p};
      // Moved runs spend the slack the limit's speed-ups left, up to the
      // source's time: the unmoved plan is kept too, for its faster point
      // (dropping it lost up to 2% at some times: a review).
      const PlanChoice limited = LimitClockChanges(problem, p.choice, max_changes_per_gpu);
      if (move_runs) out.push_back(MakePlan(problem, MoveLimitedPlansRuns(problem, p.choice, limited, cancel)));
      out.push_back(MakePlan(problem, limited));
    }
    for (FrontierPlan& p : out) p.lower_bound_j = BoundAtLeastAsSlow(f->plans, p.time_s);
    return out;
  };
  const size_t tasks = f->plans.size() + 1;
  InOrder<std::vector<FrontierPlan>> made(tasks, WorkerCount(threads, tasks), make);
  // A task's unmoved plans: the one-clock plans (task 0), else its last.
  std::vector<FrontierPlan> plans, unmoved_plans;
  for (size_t task = 0; task < tasks; ++task) {
    std::vector<FrontierPlan> from_task = *made.Take(task);
    if (unmoved) unmoved_plans.insert(unmoved_plans.end(), task == 0 ? from_task.begin() : from_task.end() - 1, from_task.end());
    for (FrontierPlan& p : from_task) plans.push_back(std::move(p));
  }
  f->plans = std::move(plans);  // every task is done with the source plans
  if (unmoved) {
    *unmoved = *f;
    unmoved->plans = ParetoFilter(std::move(unmoved_plans));
  }
  f->plans = ParetoFilter(std::move(f->plans));
}

}  // namespace perseus
