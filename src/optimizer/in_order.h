// Independent tasks run on several threads, their results taken in order.
//
// Workers start tasks 0, 1, 2, ... in ascending order; the caller takes the
// results in the same order (Take blocks until that task is done) and may
// Stop() early, after which no further task starts. A task's result must not
// depend on which worker ran it or on the number of workers; the worker
// index is given only so that each worker can keep its own scratch space.
// With one worker no thread starts: Take runs the task on the caller's
// thread, so nothing runs ahead of what the caller takes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace perseus::optimizer {

// The worker threads for `tasks` tasks: `requested` (0: the CPUs this
// process may run on), at most one per task and at least one.
int WorkerCount(int requested, size_t tasks);

template <typename Result>
class InOrder {
 public:
  using Produce = std::function<Result(size_t task, int worker)>;

  // Starts WorkerCount(threads, tasks) workers.
  InOrder(size_t tasks, int threads, Produce produce) : produce_(std::move(produce)), results_(tasks) {
    const int workers = WorkerCount(threads, tasks);
    if (workers == 1) return;  // Take runs each task
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(w); });
  }
  ~InOrder() {
    Stop();
    for (std::thread& t : threads_) t.join();
  }
  InOrder(const InOrder&) = delete;
  InOrder& operator=(const InOrder&) = delete;

  // REQUIRES: k < tasks, not taken before, and no Stop() before it started.
  Result Take(size_t k) {
    if (threads_.empty()) return produce_(k, 0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return results_[k].has_value(); });
    Result out = std::move(*results_[k]);
    results_[k].reset();
    return out;
  }

  // Tasks not yet started will not start.
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }

 private:
  void Work(int worker) {
    for (;;) {
      size_t k;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopped_ || next_ == results_.size()) return;
        k = next_++;
      }
      Result r = produce_(k, worker);
      {
        std::lock_guard<std::mutex> lock(mu_);
        results_[k] = std::move(r);
      }
      done_.notify_all();
    }
  }

  Produce produce_;
  std::mutex mu_;
  std::condition_variable done_;
  std::vector<std::optional<Result>> results_;  // guarded by mu_
  size_t next_ = 0;                             // guarded by mu_
  bool stopped_ = false;                        // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace perseus::optimizer
