// Tasks handed to worker threads before the caller needs them, claimed by key.
//
// A producer that learns of work bit by bit (the optimizer's sweep passing the
// times whose plans can then be made) offers each task under a key; workers
// run the offered tasks, oldest first. When the caller needs a key's result
// it claims it: a finished task gives its result (or rethrows what it threw),
// a running one is waited for, and one still queued or never offered gives
// nullopt, and no worker will start it after that: the caller does that work
// itself. Close() starts no queued task any more (those left are the
// caller's); the destructor closes and joins the workers, which finish the
// tasks they have started. A task's result must not depend on which worker ran
// it; the worker index lets each keep its own scratch space.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace perseus {

template <typename Result>
class AheadPool {
 public:
  using Task = std::function<Result(int worker)>;

  // `workers` threads (fewer if the system refuses some; with none, every
  // claim after an offer gives nullopt and the caller does the work).
  explicit AheadPool(int workers) {
    try {
      for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Work(w); });
    } catch (const std::system_error&) {
      // The threads that started do the work.
    } catch (...) {
      Close();
      for (std::thread& t : threads_) t.join();
      throw;
    }
  }
  ~AheadPool() {
    Close();
    for (std::thread& t : threads_) t.join();
  }
  AheadPool(const AheadPool&) = delete;
  AheadPool& operator=(const AheadPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }

  // Tasks offered and not yet started (nor claimed back).
  size_t queued() const {
    std::lock_guard<std::mutex> lock(mu_);
    return queued_;
  }

  // REQUIRES: `key` not offered before.
  void Offer(size_t key, Task task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || threads_.empty()) return;
      slots_[key].task = std::move(task);
      queue_.push_back(key);
      ++queued_;
    }
    work_.notify_one();
  }

  // Waits until no offered task is still queued: each has started, or been
  // claimed back, or the pool closed. For tests that need a task to run
  // before the producer goes on.
  void WaitUntilStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    started_.wait(lock, [&] { return queued_ == 0 || closed_; });
  }
  // No queued task starts after this; running ones finish.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    work_.notify_all();
    started_.notify_all();
  }

  // Key's result: waits for it while a worker runs it; nullopt if it was
  // never offered or has not started (it then never will). A key is claimed
  // once.
  std::optional<Result> Claim(size_t key) {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state == State::kClaimed) return std::nullopt;
    if (it->second.state == State::kQueued) {
      it->second.state = State::kClaimed;  // the worker that dequeues it skips it
      it->second.task = nullptr;           // and what it holds goes now
      --queued_;
      started_.notify_all();
      return std::nullopt;
    }
    // Looked up again after each wake: another claim of the same key may
    // have taken and erased it meanwhile.
    done_.wait(lock, [&] {
      it = slots_.find(key);
      return it == slots_.end() || it->second.state == State::kDone;
    });
    if (it == slots_.end()) return std::nullopt;
    Slot slot = std::move(it->second);
    slots_.erase(it);
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(slot.result);
  }

 private:
  enum class State { kQueued, kRunning, kDone, kClaimed };
  struct Slot {
    State state = State::kQueued;
    Task task;
    std::optional<Result> result;
    std::exception_ptr error;
  };

  void Work(int worker) {
    for (;;) {
      Task task;
      size_t key;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (closed_) return;
        key = queue_.front();
        queue_.pop_front();
        Slot& slot = slots_[key];
        if (slot.state == State::kClaimed) {
          slots_.erase(key);
          continue;
        }
        --queued_;
        slot.state = State::kRunning;
        task = std::move(slot.task);
      }
      started_.notify_all();
      std::optional<Result> result;
      std::exception_ptr error;
      try {
        result = task(worker);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        Slot& slot = slots_[key];
        slot.result = std::move(result);
        slot.error = error;
        slot.state = State::kDone;
      }
      done_.notify_all();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable work_;  // a task queued, or closed
  std::condition_variable done_;  // a task finished
  std::condition_variable started_;  // a queued task started or was claimed back, or closed
  std::map<size_t, Slot> slots_;  // guarded by mu_
  std::deque<size_t> queue_;      // offered keys not yet started, oldest first; guarded by mu_
  size_t queued_ = 0;             // slots kQueued; guarded by mu_
  bool closed_ = false;           // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace perseus
