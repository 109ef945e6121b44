// SimulatedGpu: a GpuControl backed by the built-in GPU model, for emulated
// ranks (no GPU needed).
//
// It keeps the SM clock the rank asked for and an energy counter driven by an
// injected clock: the rank calls Run(work) when a computation starts, gets the
// computation's duration back (and advances its own, possibly virtual, time by
// it), and the counter integrates the computation's power over that interval
// and the waiting power (the spec's blocking power, or its idle power if that
// is 0) over every other interval.
//
// A GpuRealism (realism.h) makes it behave like hardware: the counter steps
// every period from sampled power, a clock lock takes effect after a latency
// and may be capped, durations jitter and occasionally take much longer, busy
// power drifts up as the GPU warms, and each GPU draws a little more or less
// than its model. The default, IdealRealism(), turns all of that off. Every
// random draw comes from a PRNG seeded with realism.seed and the GPU index, so
// a deterministic clock gives deterministic results.
// Thread safety: thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "perseus/gpu_model.h"
#include "perseus/profile.h"
#include "runtime/gpu/gpu_control.h"
#include "runtime/gpu/realism.h"

namespace perseus::runtime {

class SimulatedGpu : public GpuControl {
 public:
  // REQUIRES: spec.max_sm_clock_mhz > 0 and a non-empty supported clock list.
  SimulatedGpu(GpuSpec spec, int index, SecondsClock now_s, GpuRealism realism = IdealRealism());
  // `gpu_name` as accepted by FindGpu ("a100", "H100-SXM5-80GB", ...).
  static Result<std::unique_ptr<SimulatedGpu>> Create(const std::string& gpu_name, int index, SecondsClock now_s,
                                                      GpuRealism realism = IdealRealism());

  // A computation of `work` is launched now. It runs from now, or from the
  // end of the computation still running, at the clock in effect when it
  // starts (EffectiveSmClockMhzAt) and, when a requested clock takes effect
  // while it runs, at that clock for the rest of its work; with this GPU's
  // noise applied. Returns its actual time, power and energy.
  OperatingPoint Run(const KernelWork& work);
  // The same for work whose ground truth is given per clock (a profile's
  // points for one stage and instruction: time and energy; power =
  // energy / time): the point whose clock is nearest the clock in effect.
  // An empty `curve` runs nothing and returns zeros.
  OperatingPoint Run(const std::vector<FreqPoint>& curve);

  // The locked SM clock as requested, or the maximum when unlocked.
  int CurrentSmClockMhz() const;
  // The clock a computation starting at `time_s` runs at: the requested
  // clock once clock_latency_s has passed since the lock (the previous one
  // before), at most achieved_clock_cap_mhz (snapped to the highest supported
  // clock <= the cap). REQUIRES: time_s is not before the last clock change.
  int EffectiveSmClockMhzAt(double time_s) const;
  const GpuSpec& spec() const { return spec_; }
  const GpuRealism& realism() const { return realism_; }
  // This GPU's power relative to its model (1 + gpu_variation x a normal draw).
  double power_factor() const { return power_factor_; }
  // Energy drawn since creation, integrated exactly (ground truth; the
  // counter TotalEnergyJ() reports only steps).
  double TrueEnergyJ();

  std::string Name() const override { return spec_.name; }
  std::string Uuid() const override { return uuid_; }
  Result<std::vector<int>> SupportedSmClocksMhz() override { return spec_.supported_sm_clocks_mhz; }
  Status SetSmClockMhz(int sm_clock_mhz) override;
  Status ResetSmClock() override;
  Result<double> TotalEnergyJ() override;
  Result<double> PowerW() override;
  // EffectiveSmClockMhzAt(now).
  Result<int> AchievedSmClockMhz() override;
  bool ReportsClockEffect() const override { return true; }
  std::optional<double> ClockLockEffectiveSinceS() override;
  // The counter's steps after `after_time_s`; nullopt with a continuous
  // counter (energy_period_s 0), where TotalEnergyJ() is exact at any time.
  std::optional<std::vector<CounterUpdate>> CounterUpdatesAfter(double after_time_s) override;

 private:
  struct Busy {
    double start_s;
    double end_s;
    double power_w;
  };
  // The base (noise-free) point of a computation at `clock_mhz`.
  using BasePoint = std::function<OperatingPoint(int clock_mhz)>;
  OperatingPoint RunBase(const BasePoint& base);
  // REQUIRES: mu_ held.
  OperatingPoint PiecewisePoint(const BasePoint& base, double start_s) const;
  // Integrates energy up to `now_s`; REQUIRES: mu_ held.
  void AdvanceTo(double now_s);
  double WaitingPowerW() const;
  // REQUIRES: mu_ held.
  int RequestedSmClockMhzAt(double time_s) const;
  int EffectiveSmClockMhzLocked(double time_s) const;
  void RequestClock(int sm_clock_mhz);
  double NextUniform();  // [0, 1); REQUIRES: mu_ held
  double NextNormal();   // standard normal; REQUIRES: mu_ held

  const GpuSpec spec_;
  const GpuRealism realism_;
  const std::string label_;
  const std::string uuid_;
  const SecondsClock now_s_;
  double power_factor_ = 1;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;          // guarded by mu_, and the fields below
  int locked_sm_clock_mhz_ = 0;  // requested; 0: unlocked
  int previous_sm_clock_mhz_ = 0;  // in effect before clock_change_s_; 0: unlocked
  double clock_change_s_;        // when the requested clock takes effect
  double first_work_s_ = -1;     // start of the first computation; < 0: none yet
  CoarseEnergyCounter counter_;
  std::deque<Busy> busy_;  // sorted, non-overlapping, ending after counter_.time_s()
};

}  // namespace perseus::runtime
