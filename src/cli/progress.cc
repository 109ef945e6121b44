// Progress lines on stderr for work over two seconds.
#include "cli/progress.h"

#include <cstdio>

namespace perseus::cli {

namespace {
constexpr auto kSilentFor = std::chrono::seconds(2);
constexpr auto kEvery = std::chrono::seconds(1);
}  // namespace

Progress::Progress(bool quiet) {
  if (!quiet) thread_ = std::thread([this] { Run(); });
}

Progress::~Progress() { Stop(); }

void Progress::Phase(std::string name, std::function<std::string()> detail) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = std::move(name);
  detail_ = std::move(detail);
}

bool Progress::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  return true;
}

void Progress::Finish() {
  if (StopThread() && printed_) std::fprintf(stderr, "perseus: done in %.1f s\n", Elapsed_s());
}

void Progress::Stop() { StopThread(); }

void Progress::ClearDetail() {
  std::lock_guard<std::mutex> lock(mu_);
  detail_ = nullptr;
}

double Progress::Elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  if (wake_.wait_for(lock, kSilentFor, [this] { return stop_; })) return;
  do {
    std::string line = phase_;
    if (detail_) line += ": " + detail_();
    std::fprintf(stderr, "perseus: %s (%.0f s)\n", line.c_str(), Elapsed_s());
    printed_ = true;
  } while (!wake_.wait_for(lock, kEvery, [this] { return stop_; }));
}

std::string DescribeFrontierProgress(const FrontierProgress& progress) {
  const int steps = progress.sweep_steps.load(std::memory_order_relaxed);
  const int times = progress.record_times.load(std::memory_order_relaxed);
  if (times == 0) {
    const int percent = static_cast<int>(100 * progress.sweep_fraction.load(std::memory_order_relaxed));
    return "sweep " + std::to_string(percent) + "% of the time range (" + std::to_string(steps) + " steps)";
  }
  return std::to_string(steps) + " sweep steps, " + std::to_string(progress.plans_recorded.load()) +
         " plans made (at most " + std::to_string(times) + ")";
}

}  // namespace perseus::cli
