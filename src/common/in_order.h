// Independent tasks run on several threads, their results taken in order.
//
// Workers start tasks 0, 1, 2, ... in ascending order, at most two per
// worker ahead of what the caller has taken; the caller takes the results in
// the same order (Take blocks until that task is done) and may Stop() early,
// after which no further task starts. A task's result must not depend on
// which worker ran it or on the number of workers; the worker index is given
// only so that each worker can keep its own scratch space. With one worker
// no thread starts: Take runs the task on the caller's thread. An exception
// thrown by a task is rethrown by its Take; should a thread fail to start,
// the ones that did do the work (or, with none, the caller).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace perseus {

// The worker threads for `tasks` tasks: `requested` (0: the CPUs this
// process may run on), never more than those CPUs nor than the tasks, and
// at least one. The CPUs this process may run on: those in its affinity
// mask, and no more than its cgroup's CPU quota allows (a Kubernetes CPU
// limit), rounded up.
int WorkerCount(int requested, size_t tasks);

// The CPUs a cgroup CPU quota allows, rounded up; 0 when none applies.
// Reads cgroup v2 `cpu.max` and v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`
// of the cgroup named in `proc_self_cgroup` (the text of /proc/self/cgroup)
// and of its ancestors, under `cgroup_root` (/sys/fs/cgroup), the tightest.
int CgroupCpuLimit(const std::string& cgroup_root, const std::string& proc_self_cgroup);

template <typename Result>
class InOrder {
 public:
  using Produce = std::function<Result(size_t task, int worker)>;

  // REQUIRES: workers >= 1 (WorkerCount); worker indices passed to
  // `produce` are below it.
  InOrder(size_t tasks, int workers, Produce produce)
      : produce_(std::move(produce)), slots_(tasks), ahead_(2 * static_cast<size_t>(workers)) {
    if (workers <= 1) return;  // Take runs each task
    try {
      for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(w); });
    } catch (const std::system_error&) {
      // Fewer threads than asked for; with none, Take runs the tasks.
    }
  }
  ~InOrder() {
    Stop();
    for (std::thread& t : threads_) t.join();
  }
  InOrder(const InOrder&) = delete;
  InOrder& operator=(const InOrder&) = delete;

  // The result of task k; nullopt when Stop() came before it started.
  // Rethrows what the task threw. REQUIRES: k < tasks, taken in order.
  std::optional<Result> Take(size_t k) {
    if (threads_.empty()) return TakeInline(k);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return slots_[k].done || (stopped_ && k >= next_); });
    taken_ = k + 1;
    room_.notify_all();
    if (!slots_[k].done) return std::nullopt;
    Slot slot = std::move(slots_[k]);
    slots_[k] = Slot{};
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(slot.result);
  }

  // Tasks not yet started will not start.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    room_.notify_all();
    done_.notify_all();
  }

 private:
  struct Slot {
    bool done = false;
    std::optional<Result> result;
    std::exception_ptr error;
  };

  std::optional<Result> TakeInline(size_t k) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return std::nullopt;
    }
    return produce_(k, 0);
  }

  void Work(int worker) {
    for (;;) {
      size_t k;
      {
        std::unique_lock<std::mutex> lock(mu_);
        room_.wait(lock, [&] { return stopped_ || next_ == slots_.size() || next_ < taken_ + ahead_; });
        if (stopped_ || next_ == slots_.size()) return;
        k = next_++;
      }
      Slot slot;
      try {
        slot.result = produce_(k, worker);
      } catch (...) {
        slot.error = std::current_exception();
      }
      slot.done = true;
      {
        std::lock_guard<std::mutex> lock(mu_);
        slots_[k] = std::move(slot);
      }
      done_.notify_all();
    }
  }

  Produce produce_;
  std::mutex mu_;
  std::condition_variable done_;  // a slot filled, or stopped
  std::condition_variable room_;  // a result taken, or stopped
  std::vector<Slot> slots_;       // guarded by mu_
  const size_t ahead_;            // tasks started beyond the last taken, at most
  size_t next_ = 0;               // guarded by mu_
  size_t taken_ = 0;              // guarded by mu_
  bool stopped_ = false;          // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace perseus
