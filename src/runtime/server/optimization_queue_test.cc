#include "runtime/server/optimization_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

namespace perseus::server {
namespace {

TEST(OptimizationQueueTest, OneWorkerOptimisesEachQueuedJobOnceAtATime) {
  std::mutex mu;
  std::map<std::string, int> runs;
  std::atomic<int> running{0}, most_at_once{0};
  OptimizationQueue queue(1, [&](const std::string& id) {
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
  OptimizationQueue queue(2, [&](const std::string&) {
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

// A solve that runs for hours holds one worker; the jobs queued behind it
// are optimised on the other, and no job is optimised twice at once.
TEST(OptimizationQueueTest, ALongSolveDoesNotHoldUpTheJobsBehindIt) {
  std::atomic<bool> release{false};
  std::mutex mu;
  std::map<std::string, int> runs, running;
  int most_of_one_at_once = 0;
  OptimizationQueue queue(2, [&](const std::string& id) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++runs[id];
      most_of_one_at_once = std::max(most_of_one_at_once, ++running[id]);
    }
    while (id == "huge" && !release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    --running[id];
  });
  queue.Enqueue("huge");
  for (int wait_ms = 0; wait_ms < 10000; ++wait_ms) {  // running on one worker
    {
      std::lock_guard<std::mutex> lock(mu);
      if (running["huge"] == 1) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int i = 0; i < 20; ++i) {
    queue.Enqueue("small" + std::to_string(i % 5));
    queue.Enqueue("huge");  // running already: not again
  }
  // The small jobs finish while "huge" still runs.
  for (int wait_ms = 0; wait_ms < 10000; ++wait_ms) {
    {
      std::lock_guard<std::mutex> lock(mu);
      int done = 0;
      for (int i = 0; i < 5; ++i) done += runs["small" + std::to_string(i)] > 0 && running["small" + std::to_string(i)] == 0;
      if (done == 5) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    for (int i = 0; i < 5; ++i) EXPECT_GE(runs["small" + std::to_string(i)], 1) << i;
    EXPECT_EQ(running["huge"], 1);
  }
  release = true;
  queue.WaitUntilIdle();
  EXPECT_EQ(runs["huge"], 1);
  EXPECT_EQ(most_of_one_at_once, 1);
}

}  // namespace
}  // namespace perseus::server
