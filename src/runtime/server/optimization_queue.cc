#include "runtime/server/optimization_queue.h"

#include <algorithm>
#include <utility>

namespace perseus::server {

OptimizationQueue::OptimizationQueue(int workers, std::function<void(const std::string&)> optimize)
    : optimize_(std::move(optimize)) {
  for (int i = 0; i < std::max(workers, 1); ++i) threads_.emplace_back([this] { Loop(); });
}

OptimizationQueue::~OptimizationQueue() { Stop(); }

void OptimizationQueue::Enqueue(const std::string& job_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || !queued_.insert(job_id).second) return;
    queue_.push_back(job_id);
  }
  cv_.notify_all();
}

void OptimizationQueue::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return (queue_.empty() || stopping_) && busy_ == 0; });
}

void OptimizationQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void OptimizationQueue::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::string id = queue_.front();
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    optimize_(id);
    lock.lock();
    queued_.erase(id);
    --busy_;
    cv_.notify_all();
  }
}

}  // namespace perseus::server
