// SimulatedGpu: piecewise-constant power integrated over an injected clock,
// with the imperfections of a GpuRealism.
#include "runtime/gpu/simulated_gpu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace perseus::runtime {
namespace {

// Independent, reproducible random streams per (seed, GPU index, purpose).
enum Stream : uint32_t { kVariationStream = 0, kPhaseStream = 1, kRunStream = 2 };

std::mt19937_64 MakeRng(uint64_t seed, int index, Stream stream) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(index),
                    static_cast<uint32_t>(stream)};
  return std::mt19937_64(seq);
}

// [0, 1) with 53 random bits; the same on every platform (unlike
// std::uniform_real_distribution).
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Box-Muller, one standard normal per two uniforms.
double Normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - Uniform(rng);  // (0, 1]
  const double u2 = Uniform(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double PowerFactor(const GpuRealism& r, int index) {
  if (r.gpu_variation <= 0) return 1.0;
  std::mt19937_64 rng = MakeRng(r.seed, index, kVariationStream);
  return std::max(0.5, 1.0 + r.gpu_variation * Normal(rng));
}

// The counter starts at `start_s`; with a period, its first step falls at a
// random phase in (0, period], as a GPU's counter is not aligned with the job.
CoarseEnergyCounter MakeCounter(const GpuRealism& r, int index, double start_s) {
  if (r.energy_period_s <= 0) return CoarseEnergyCounter(0, 1, start_s);
  std::mt19937_64 rng = MakeRng(r.seed, index, kPhaseStream);
  const double first_step_s = start_s + r.energy_period_s * (1.0 - Uniform(rng));
  return CoarseEnergyCounter(r.energy_period_s, r.energy_sample_fraction, start_s, first_step_s);
}

}  // namespace

SimulatedGpu::SimulatedGpu(GpuSpec spec, int index, SecondsClock now_s, GpuRealism realism)
    : spec_(std::move(spec)),
      realism_(realism),
      label_("GPU " + std::to_string(index)),
      uuid_("SIM-" + std::to_string(index) + "-" + spec_.name),
      now_s_(std::move(now_s)),
      power_factor_(PowerFactor(realism_, index)),
      rng_(MakeRng(realism_.seed, index, kRunStream)),
      clock_change_s_(-std::numeric_limits<double>::infinity()),
      counter_(MakeCounter(realism_, index, now_s_())) {}

Result<std::unique_ptr<SimulatedGpu>> SimulatedGpu::Create(const std::string& gpu_name, int index,
                                                           SecondsClock now_s, GpuRealism realism) {
  Result<GpuSpec> spec = FindGpu(gpu_name);
  if (!spec.ok()) return spec.status().WithContext(std::string("simulated GPU ") + std::to_string(index));
  return std::make_unique<SimulatedGpu>(std::move(spec).value(), index, std::move(now_s), realism);
}

double SimulatedGpu::WaitingPowerW() const {
  return (spec_.blocking_power_w > 0 ? spec_.blocking_power_w : spec_.idle_power_w) * power_factor_;
}

double SimulatedGpu::NextUniform() { return Uniform(rng_); }
double SimulatedGpu::NextNormal() { return Normal(rng_); }

void SimulatedGpu::AdvanceTo(double now_s) {
  while (counter_.time_s() < now_s) {
    if (busy_.empty() || now_s <= busy_.front().start_s) {
      counter_.Advance(now_s, WaitingPowerW());
      return;
    }
    const Busy& b = busy_.front();
    if (counter_.time_s() < b.start_s) counter_.Advance(b.start_s, WaitingPowerW());
    counter_.Advance(std::min(now_s, b.end_s), b.power_w);
    if (counter_.time_s() >= b.end_s) busy_.pop_front();
  }
}

int SimulatedGpu::RequestedSmClockMhzAt(double time_s) const {
  const int f = time_s >= clock_change_s_ ? locked_sm_clock_mhz_ : previous_sm_clock_mhz_;
  return f > 0 ? f : spec_.max_sm_clock_mhz;
}

int SimulatedGpu::EffectiveSmClockMhzAt(double time_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  return EffectiveSmClockMhzLocked(time_s);
}

int SimulatedGpu::EffectiveSmClockMhzLocked(double time_s) const {
  const int f = RequestedSmClockMhzAt(time_s);
  const int cap = realism_.achieved_clock_cap_mhz;
  if (cap <= 0 || f <= cap) return f;
  int best = 0;
  for (int s : spec_.supported_sm_clocks_mhz) {
    if (s <= cap) best = std::max(best, s);
  }
  if (best > 0) return best;
  return *std::min_element(spec_.supported_sm_clocks_mhz.begin(), spec_.supported_sm_clocks_mhz.end());
}

// A lock that takes effect while the computation runs splits it: the share
// of its work done before the change runs at the old clock, the rest at the
// new one (a computation that starts right after its clock was requested
// begins at the previous computation's clock, as on hardware).
OperatingPoint SimulatedGpu::PiecewisePoint(const BasePoint& base, double start_s) const {
  const OperatingPoint before = base(EffectiveSmClockMhzLocked(start_s));
  if (clock_change_s_ <= start_s) return before;
  const OperatingPoint after = base(EffectiveSmClockMhzLocked(clock_change_s_));
  const double head_s = clock_change_s_ - start_s;
  if (head_s >= before.time_s || before.time_s <= 0) return before;
  const double rest_share = 1 - head_s / before.time_s;
  OperatingPoint op;
  op.time_s = head_s + rest_share * after.time_s;
  op.energy_j = before.power_w * head_s + rest_share * after.energy_j;
  op.power_w = op.time_s > 0 ? op.energy_j / op.time_s : 0;
  return op;
}

OperatingPoint SimulatedGpu::RunBase(const BasePoint& base) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now_s = now_s_();
  AdvanceTo(now_s);
  const double start_s = std::max(now_s, busy_.empty() ? now_s : busy_.back().end_s);
  const OperatingPoint point = PiecewisePoint(base, start_s);
  if (first_work_s_ < 0) first_work_s_ = start_s;
  double time_factor = std::max(0.05, 1.0 + realism_.time_jitter * NextNormal());
  if (NextUniform() < realism_.outlier_probability) time_factor *= realism_.outlier_factor;
  double power_factor = power_factor_;
  if (realism_.thermal_drift > 0) {
    const double warm = realism_.thermal_tau_s > 0 ? 1.0 - std::exp(-(start_s - first_work_s_) / realism_.thermal_tau_s)
                                                   : 1.0;  // tau 0: warm at once
    power_factor *= 1.0 + realism_.thermal_drift * warm;
  }
  OperatingPoint op;
  op.time_s = point.time_s * time_factor;
  op.power_w = point.power_w * power_factor;
  op.energy_j = point.energy_j * power_factor * time_factor;
  if (op.time_s > 0) busy_.push_back(Busy{start_s, start_s + op.time_s, op.power_w});
  return op;
}

OperatingPoint SimulatedGpu::Run(const KernelWork& work) {
  return RunBase([&](int clock_mhz) { return ModelComputation(spec_, work, clock_mhz); });
}

OperatingPoint SimulatedGpu::Run(const std::vector<FreqPoint>& curve) {
  if (curve.empty()) return OperatingPoint{};
  return RunBase([&](int clock_mhz) {
    const FreqPoint* nearest = &curve.front();
    for (const FreqPoint& p : curve) {
      if (std::abs(p.freq_mhz - clock_mhz) < std::abs(nearest->freq_mhz - clock_mhz)) nearest = &p;
    }
    OperatingPoint op;
    op.time_s = nearest->time_s;
    op.energy_j = nearest->energy_j;
    op.power_w = nearest->time_s > 0 ? nearest->energy_j / nearest->time_s : 0;
    return op;
  });
}

int SimulatedGpu::CurrentSmClockMhz() const {
  std::lock_guard<std::mutex> lock(mu_);
  return locked_sm_clock_mhz_ > 0 ? locked_sm_clock_mhz_ : spec_.max_sm_clock_mhz;
}

void SimulatedGpu::RequestClock(int sm_clock_mhz) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now_s = now_s_();
  previous_sm_clock_mhz_ = now_s >= clock_change_s_ ? locked_sm_clock_mhz_ : previous_sm_clock_mhz_;
  locked_sm_clock_mhz_ = sm_clock_mhz;
  clock_change_s_ = now_s + realism_.clock_latency_s;
}

Status SimulatedGpu::SetSmClockMhz(int sm_clock_mhz) {
  PERSEUS_RETURN_IF_ERROR(CheckSupportedSmClock(spec_.supported_sm_clocks_mhz, sm_clock_mhz, label_));
  RequestClock(sm_clock_mhz);
  return Status::Ok();
}

Status SimulatedGpu::ResetSmClock() {
  RequestClock(0);
  return Status::Ok();
}

Result<int> SimulatedGpu::AchievedSmClockMhz() {
  std::lock_guard<std::mutex> lock(mu_);
  return EffectiveSmClockMhzLocked(now_s_());
}

std::optional<double> SimulatedGpu::ClockLockEffectiveSinceS() {
  std::lock_guard<std::mutex> lock(mu_);
  if (locked_sm_clock_mhz_ <= 0 || now_s_() < clock_change_s_) return std::nullopt;
  return clock_change_s_;
}

Result<double> SimulatedGpu::TotalEnergyJ() {
  std::lock_guard<std::mutex> lock(mu_);
  AdvanceTo(now_s_());
  return counter_.ReportedEnergyJ();
}

double SimulatedGpu::TrueEnergyJ() {
  std::lock_guard<std::mutex> lock(mu_);
  AdvanceTo(now_s_());
  return counter_.TrueEnergyJ();
}

std::optional<std::vector<GpuControl::CounterUpdate>> SimulatedGpu::CounterUpdatesAfter(double after_time_s) {
  if (counter_.period_s() <= 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  AdvanceTo(now_s_());
  return counter_.UpdatesAfter(after_time_s);
}

Result<double> SimulatedGpu::PowerW() {
  std::lock_guard<std::mutex> lock(mu_);
  const double now_s = now_s_();
  AdvanceTo(now_s);
  for (const Busy& b : busy_) {
    if (b.start_s <= now_s && now_s < b.end_s) return b.power_w;
  }
  return WaitingPowerW();
}

}  // namespace perseus::runtime
