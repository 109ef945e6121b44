// Progress on stderr for long work. Silent for the first two seconds (short
// runs print nothing), then one line a second naming the current phase and
// what its detail function reports, and a last line with the total time.
// Never writes to stdout. Thread-safe; one thread of its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "perseus/optimizer.h"

namespace perseus::cli {

// "sweep 37% of the time range (1200 steps)", then once the sweep is done
// "10428 sweep steps, 812 plans made (at most 20500)": plans stop
// early once the relaxation shows slower ones cannot be on the frontier.
std::string DescribeFrontierProgress(const FrontierProgress& progress);

class Progress {
 public:
  // quiet: print nothing at all.
  explicit Progress(bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a phase ("solving the frontier"); `detail` ("1200 sweep steps")
  // is called from the progress thread and must be thread-safe.
  void Phase(std::string name, std::function<std::string()> detail = {});
  // Stops; prints "perseus: done in X s" when a line was printed before.
  void Finish();
  // Stops without the "done" line (the work failed; its error follows).
  // The destructor does this when Finish was not called.
  void Stop();
  // Drops the current phase's detail (see DetailScope).
  void ClearDetail();

 private:
  void Run();
  bool StopThread();  // true when this call stopped it
  double Elapsed_s() const;

  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::condition_variable wake_;
  std::string phase_;
  std::function<std::string()> detail_;
  bool stop_ = false;
  bool printed_ = false;
  std::thread thread_;
};

// Clears the phase's detail when destroyed. Declare it right after the object
// a detail reads (a local of the function that sets the phase), so that the
// progress thread never calls the detail once that object is gone.
class DetailScope {
 public:
  explicit DetailScope(Progress& progress) : progress_(progress) {}
  ~DetailScope() { progress_.ClearDetail(); }
  DetailScope(const DetailScope&) = delete;
  DetailScope& operator=(const DetailScope&) = delete;

 private:
  Progress& progress_;
};

}  // namespace perseus::cli
