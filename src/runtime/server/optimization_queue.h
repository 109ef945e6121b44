// OptimizationQueue: jobs waiting for their frontier, optimised on a few
// background threads, so that one long solve (a job of tens of thousands of
// computations takes minutes) does not hold up the others; a job is queued
// at most once at a time, so it is never optimised twice at once.
//
// Locking: one mutex inside guards the queue and is never held while
// `optimize` runs (which takes the job's lock itself). A caller may hold a
// job's mutex while calling Enqueue: the queue's mutex is only ever taken
// after a job's, never before (JobService's lock order).
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace perseus::server {

class OptimizationQueue {
 public:
  // Starts `workers` (at least one) threads, which call `optimize(job_id)`
  // for each queued job, oldest first.
  OptimizationQueue(int workers, std::function<void(const std::string&)> optimize);
  // Stop().
  ~OptimizationQueue();
  OptimizationQueue(const OptimizationQueue&) = delete;
  OptimizationQueue& operator=(const OptimizationQueue&) = delete;

  // Queues `job_id` unless it is queued or being optimised.
  void Enqueue(const std::string& job_id);
  // Blocks until nothing is queued or running (tests).
  void WaitUntilIdle();
  // Takes no more jobs and waits for the running `optimize` calls to return
  // (the caller makes them return early, e.g. with a cancel flag). Idempotent.
  void Stop();

 private:
  void Loop();

  const std::function<void(const std::string&)> optimize_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // guarded by mu_
  std::set<std::string> queued_;   // queued or being optimised; guarded by mu_
  int busy_ = 0;                   // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace perseus::server
