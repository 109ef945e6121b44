// InOrder: results in task order whatever the threads' timing, early stops,
// and the worker count.
#include "common/in_order.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/file_util.h"
#include "common/temp_dir_for_test.h"

namespace perseus {
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
    // A task not started before the stop never will be; Take says so.
    EXPECT_EQ(tasks.Take(999), std::nullopt);
  }  // joins the workers
  // Workers start at most two tasks each beyond the last one taken.
  EXPECT_LE(started.load(), 2 + 2 * 2);
}

TEST(InOrder, WorkersStayAFewTasksAheadOfTheCaller) {
  std::atomic<int> started{0};
  InOrder<int> tasks(1000, 3, [&](size_t k, int) {
    ++started;
    return static_cast<int>(k);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(started.load(), 2 * 3);  // nothing taken yet
  for (size_t k = 0; k < 10; ++k) EXPECT_EQ(tasks.Take(k), static_cast<int>(k));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(started.load(), 10 + 2 * 3);
}

TEST(InOrder, ATasksExceptionIsRethrownByItsTake) {
  for (int workers : {1, 3}) {
    InOrder<int> tasks(5, workers, [](size_t k, int) -> int {
      if (k == 2) throw std::runtime_error("task 2 failed");
      return static_cast<int>(k);
    });
    EXPECT_EQ(tasks.Take(0), 0);
    EXPECT_EQ(tasks.Take(1), 1);
    EXPECT_THROW(tasks.Take(2), std::runtime_error) << workers << " workers";
    EXPECT_EQ(tasks.Take(3), 3);  // the others are unaffected
  }
}

TEST(InOrder, OneWorkerRunsEachTaskOnTheCallersThreadWhenTaken) {
  const std::thread::id caller = std::this_thread::get_id();
  int started = 0;
  InOrder<bool> tasks(10, 1, [&](size_t, int worker) {
    ++started;
    return worker == 0 && std::this_thread::get_id() == caller;
  });
  EXPECT_EQ(started, 0);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(tasks.Take(k), true);
  EXPECT_EQ(started, 3);  // nothing ran ahead
}

TEST(InOrder, DestroyedWithoutTakingJoinsCleanly) {
  std::atomic<int> started{0};
  { InOrder<int> tasks(50, 4, [&](size_t, int) { return ++started; }); }
  EXPECT_LE(started.load(), 50);
}

// A cgroup tree under a temporary root: files written by path.
class CgroupTree {
 public:
  void Write(const std::string& relative, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(dir_.Path(relative)).parent_path());
    dir_.Write(relative, text);
  }
  const std::string& root() const { return dir_.path(); }

 private:
  ScopedTempDir dir_;
};

TEST(CgroupCpuLimit, Version2QuotaRoundsUpAndMaxMeansNone) {
  CgroupTree t;
  t.Write("kubepods/pod1/cpu.max", "250000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(t.root(), "0::/kubepods/pod1\n"), 3);
  t.Write("kubepods/pod1/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(t.root(), "0::/kubepods/pod1\n"), 0);
}

TEST(CgroupCpuLimit, AnAncestorsQuotaBindsAndTheTightestWins) {
  CgroupTree t;
  t.Write("cpu.max", "max 100000\n");
  t.Write("a/cpu.max", "400000 100000\n");
  t.Write("a/b/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(t.root(), "0::/a/b\n"), 4);
  t.Write("a/b/cpu.max", "150000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(t.root(), "0::/a/b\n"), 2);
}

TEST(CgroupCpuLimit, Version1QuotaUnderItsControllers) {
  CgroupTree t;
  t.Write("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "150000\n");
  t.Write("cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
  const std::string self = "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n0::/\n";
  EXPECT_EQ(CgroupCpuLimit(t.root(), self), 2);
  t.Write("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "-1\n");
  EXPECT_EQ(CgroupCpuLimit(t.root(), self), 0);
}

TEST(CgroupCpuLimit, NothingReadableMeansNoLimit) {
  CgroupTree t;
  EXPECT_EQ(CgroupCpuLimit(t.root(), ""), 0);
  EXPECT_EQ(CgroupCpuLimit(t.root(), "garbage\n0::/missing\n"), 0);
  EXPECT_EQ(CgroupCpuLimit(t.root() + "/absent", "1:cpu:/\n"), 0);
}

TEST(WorkerCount, AtLeastOneAtMostOnePerTaskAndPerCpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpus = CPU_COUNT(&set);
  Result<std::string> self = ReadFile("/proc/self/cgroup");
  const int quota = CgroupCpuLimit("/sys/fs/cgroup", self.ok() ? *self : "");
  if (quota > 0) cpus = std::min(cpus, quota);
  EXPECT_EQ(WorkerCount(0, 100000), cpus);  // the CPUs this process may run on
  EXPECT_EQ(WorkerCount(100000, 100000), cpus);
  EXPECT_EQ(WorkerCount(1, 100), 1);
  EXPECT_EQ(WorkerCount(8, 1), 1);
  EXPECT_EQ(WorkerCount(4, 0), 1);
  EXPECT_EQ(WorkerCount(-3, 100000), cpus);
}

}  // namespace
}  // namespace perseus
