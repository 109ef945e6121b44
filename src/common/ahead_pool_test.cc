// AheadPool: offered tasks run on workers; a claim gives the result, waits
// for a running task, and takes back a queued one (which then never runs).
#include "common/ahead_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace perseus {
namespace {

using std::chrono::milliseconds;

// Blocks its task until Open(); tells when the task has started.
class Gate {
 public:
  void Open() { open_.set_value(); }
  void Wait() { opened_.wait(); }
  void MarkStarted() { started_.set_value(); }
  void WaitStarted() { started_future_.wait(); }

 private:
  std::promise<void> open_;
  std::shared_future<void> opened_ = open_.get_future().share();
  std::promise<void> started_;
  std::future<void> started_future_ = started_.get_future();
};

// Offers a task that holds the pool's worker until `gate` opens, then gives
// `result`; returns once it has started.
void OfferHeld(AheadPool<int>& pool, size_t key, Gate& gate, int result) {
  pool.Offer(key, [&gate, result](int) {
    gate.MarkStarted();
    gate.Wait();
    return result;
  });
  gate.WaitStarted();
}

TEST(AheadPool, AFinishedTaskGivesItsResult) {
  AheadPool<int> pool(2);
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  pool.Offer(4, [&](int) {
    finished.set_value();  // the result is stored right after
    return 16;
  });
  done.wait();
  EXPECT_EQ(pool.Claim(4), 16);  // finished, or a moment from it: waited for
  EXPECT_EQ(pool.Claim(4), std::nullopt);  // taken: a second claim finds nothing
}

TEST(AheadPool, EveryClaimGetsTheResultOrNothingStarted) {
  AheadPool<int> pool(2);
  std::atomic<int> ran{0};
  for (size_t k = 0; k < 20; ++k) pool.Offer(k, [&ran, k](int) { ++ran; return static_cast<int>(k * k); });
  // Claims wait for running tasks; queued ones come back undone, so each
  // result is either the task's or nullopt, and only tasks that ran give one.
  int given = 0;
  for (size_t k = 0; k < 20; ++k) {
    std::optional<int> r = pool.Claim(k);
    if (r) {
      EXPECT_EQ(*r, static_cast<int>(k * k));
      ++given;
    }
  }
  pool.Close();
  EXPECT_LE(given, ran.load());
  EXPECT_EQ(pool.queued(), 0u);
}

TEST(AheadPool, QueuedCountsTasksNotYetStarted) {
  AheadPool<int> pool(1);
  Gate gate;
  OfferHeld(pool, 0, gate, 0);
  EXPECT_EQ(pool.queued(), 0u);  // running, not queued
  pool.Offer(1, [](int) { return 1; });
  pool.Offer(2, [](int) { return 2; });
  EXPECT_EQ(pool.queued(), 2u);
  EXPECT_EQ(pool.Claim(2), std::nullopt);  // taken back
  EXPECT_EQ(pool.queued(), 1u);
  gate.Open();
  EXPECT_EQ(pool.Claim(0), 0);
}

TEST(AheadPool, WaitUntilStartedReturnsOnceNoTaskIsQueued) {
  AheadPool<int> pool(1);
  Gate gate;
  OfferHeld(pool, 0, gate, 0);
  pool.Offer(1, [](int) { return 1; });
  // Task 1 waits behind the held one: the wait lasts until it starts.
  std::future<void> waited = std::async(std::launch::async, [&] { pool.WaitUntilStarted(); });
  EXPECT_EQ(waited.wait_for(milliseconds(50)), std::future_status::timeout);
  gate.Open();
  waited.get();
  EXPECT_EQ(pool.queued(), 0u);
  EXPECT_EQ(pool.Claim(1), 1);
  // Taken back or closed, nothing is left to wait for.
  Gate held;
  OfferHeld(pool, 2, held, 2);
  pool.Offer(3, [](int) { return 3; });
  EXPECT_EQ(pool.Claim(3), std::nullopt);
  pool.WaitUntilStarted();
  pool.Offer(4, [](int) { return 4; });
  std::future<void> closed = std::async(std::launch::async, [&] { pool.WaitUntilStarted(); });
  pool.Close();
  closed.get();
  held.Open();
  EXPECT_EQ(pool.Claim(2), 2);
}

TEST(AheadPool, AClaimWaitsForARunningTask) {
  AheadPool<int> pool(1);
  Gate gate;
  OfferHeld(pool, 7, gate, 49);
  std::future<std::optional<int>> claim = std::async(std::launch::async, [&] { return pool.Claim(7); });
  EXPECT_EQ(claim.wait_for(milliseconds(50)), std::future_status::timeout);  // still running
  gate.Open();
  EXPECT_EQ(claim.get(), 49);
}

TEST(AheadPool, AClaimedQueuedTaskNeverRuns) {
  AheadPool<int> pool(1);
  Gate gate;
  std::atomic<bool> second_ran{false};
  OfferHeld(pool, 1, gate, 1);  // the only worker is busy; task 2 waits in the queue
  pool.Offer(2, [&](int) {
    second_ran = true;
    return 2;
  });
  EXPECT_EQ(pool.Claim(2), std::nullopt);  // the caller does it instead
  EXPECT_EQ(pool.Claim(2), std::nullopt);  // and claiming again does not wait
  gate.Open();
  EXPECT_EQ(pool.Claim(1), 1);
  Gate third;  // the worker passes 2 by to reach it
  pool.Offer(3, [&](int) {
    third.MarkStarted();
    return 3;
  });
  third.WaitStarted();
  EXPECT_EQ(pool.Claim(3), 3);
  EXPECT_FALSE(second_ran);
}

TEST(AheadPool, NeverOfferedAndClosedComeBackEmpty) {
  AheadPool<int> pool(2);
  EXPECT_EQ(pool.Claim(5), std::nullopt);
  pool.Close();
  pool.Offer(6, [](int) { return 6; });  // after Close: not taken
  EXPECT_EQ(pool.Claim(6), std::nullopt);
}

TEST(AheadPool, AClosedPoolStartsNoQueuedTask) {
  std::atomic<int> started{0};
  Gate gate;
  {
    AheadPool<int> pool(1);
    OfferHeld(pool, 0, gate, 0);
    for (size_t k = 1; k < 10; ++k) pool.Offer(k, [&](int) { return ++started; });
    pool.Close();
    gate.Open();
    EXPECT_EQ(pool.Claim(0), 0);  // the running task finishes
    for (size_t k = 1; k < 10; ++k) EXPECT_EQ(pool.Claim(k), std::nullopt);
  }  // joins
  EXPECT_EQ(started.load(), 0);  // of the queued ones
}

TEST(AheadPool, AClaimRethrowsWhatTheTaskThrew) {
  AheadPool<int> pool(1);
  Gate gate;
  pool.Offer(0, [&](int) -> int {
    gate.MarkStarted();
    throw std::runtime_error("task failed");
  });
  gate.WaitStarted();
  EXPECT_THROW(pool.Claim(0), std::runtime_error);
}

TEST(AheadPool, EveryWorkerIndexIsBelowTheWorkerCount) {
  std::set<int> seen;
  std::mutex mu;
  AheadPool<int> pool(3);
  ASSERT_EQ(pool.workers(), 3);
  for (size_t k = 0; k < 60; ++k) {
    pool.Offer(k, [&](int worker) {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(worker);
      return worker;
    });
  }
  for (size_t k = 0; k < 60; ++k) pool.Claim(k);
  for (int w : seen) EXPECT_TRUE(w >= 0 && w < 3) << w;
}

TEST(AheadPool, DestroyingWithTasksQueuedJoinsCleanly) {
  std::atomic<int> finished{0};
  {
    AheadPool<int> pool(2);
    for (size_t k = 0; k < 100; ++k) {
      pool.Offer(k, [&](int) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        return ++finished;
      });
    }
  }
  EXPECT_LE(finished.load(), 100);  // some ran, the rest never started; nothing hangs or leaks
}

}  // namespace
}  // namespace perseus
