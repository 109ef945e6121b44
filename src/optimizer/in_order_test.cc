// InOrder: results in task order whatever the threads' timing, early stops,
// and the worker count.
#include "optimizer/in_order.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace perseus::optimizer {
namespace {

TEST(InOrder, ResultsComeInTaskOrderWhateverFinishesFirst) {
  // Early tasks take longest, so later ones finish first.
  InOrder<size_t> squares(40, 4, [](size_t k, int) {
    std::this_thread::sleep_for(std::chrono::microseconds(k < 8 ? 2000 : 10));
    return k * k;
  });
  for (size_t k = 0; k < 40; ++k) EXPECT_EQ(squares.Take(k), k * k);
}

TEST(InOrder, EveryWorkerIndexIsBelowTheWorkerCount) {
  std::set<int> seen;
  std::mutex mu;
  InOrder<int> tasks(100, 3, [&](size_t, int worker) {
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(worker);
    return worker;
  });
  for (size_t k = 0; k < 100; ++k) tasks.Take(k);
  for (int w : seen) EXPECT_TRUE(w >= 0 && w < 3) << w;
}

TEST(InOrder, StopStartsNoFurtherTask) {
  std::atomic<int> started{0};
  {
    InOrder<int> tasks(1000, 2, [&](size_t k, int) {
      ++started;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return static_cast<int>(k);
    });
    EXPECT_EQ(tasks.Take(0), 0);
    EXPECT_EQ(tasks.Take(1), 1);
    tasks.Stop();
  }  // joins the workers
  // At most the tasks running or claimed when Stop came, one per worker.
  EXPECT_LE(started.load(), 2 + 2 + 2);
}

TEST(InOrder, OneWorkerRunsEachTaskOnTheCallersThreadWhenTaken) {
  const std::thread::id caller = std::this_thread::get_id();
  int started = 0;
  InOrder<bool> tasks(10, 1, [&](size_t, int worker) {
    ++started;
    return worker == 0 && std::this_thread::get_id() == caller;
  });
  EXPECT_EQ(started, 0);
  for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(tasks.Take(k));
  EXPECT_EQ(started, 3);  // nothing ran ahead
}

TEST(InOrder, DestroyedWithoutTakingJoinsCleanly) {
  std::atomic<int> started{0};
  { InOrder<int> tasks(50, 4, [&](size_t, int) { return ++started; }); }
  EXPECT_LE(started.load(), 50);
}

TEST(WorkerCount, AtLeastOneAtMostOnePerTask) {
  EXPECT_EQ(WorkerCount(8, 3), 3);
  EXPECT_EQ(WorkerCount(2, 100), 2);
  EXPECT_EQ(WorkerCount(4, 0), 1);
  EXPECT_GE(WorkerCount(0, 1000), 1);  // the CPUs this process may run on
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(WorkerCount(0, 1000), std::min(CPU_COUNT(&set), 1000));
}

}  // namespace
}  // namespace perseus::optimizer
