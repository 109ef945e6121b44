#include "runtime/server/optimization_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

namespace perseus::server {
namespace {

TEST(OptimizationQueueTest, OptimisesEachQueuedJobOnceAtATime) {
  std::mutex mu;
  std::map<std::string, int> runs;
  std::atomic<int> running{0}, most_at_once{0};
  OptimizationQueue queue([&](const std::string& id) {
    most_at_once = std::max(most_at_once.load(), ++running);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    {
      std::lock_guard<std::mutex> lock(mu);
      ++runs[id];
    }
    --running;
  });
  for (int i = 0; i < 3; ++i) {
    queue.Enqueue("a");  // queued (or running) already: once
    queue.Enqueue("b");
  }
  queue.WaitUntilIdle();
  EXPECT_EQ(runs["a"], 1);
  EXPECT_EQ(runs["b"], 1);
  EXPECT_EQ(most_at_once.load(), 1);
  queue.Enqueue("a");  // done: queued again
  queue.WaitUntilIdle();
  EXPECT_EQ(runs["a"], 2);
}

TEST(OptimizationQueueTest, StopWaitsForTheRunningJobAndTakesNoMore) {
  std::atomic<bool> cancel{false}, started{false};
  std::atomic<int> runs{0};
  OptimizationQueue queue([&](const std::string&) {
    started = true;
    ++runs;
    while (!cancel) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  queue.Enqueue("slow");
  queue.Enqueue("next");
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  cancel = true;  // what JobService's cancel flag does to a solve
  queue.Stop();
  queue.Enqueue("late");
  queue.WaitUntilIdle();  // returns: stopped
  EXPECT_LE(runs.load(), 2);
  queue.Stop();  // idempotent
}

}  // namespace
}  // namespace perseus::server
