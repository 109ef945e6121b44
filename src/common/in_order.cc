// How many worker threads.
#include "common/in_order.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/file_util.h"

namespace perseus {
namespace {

// The CPUs in this process's affinity mask (a container or `taskset` may
// allow fewer than the machine has), for masks of any size.
int AllowedCpus() {
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 8) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    const size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(0, bytes, set);
    const int count = CPU_COUNT_S(bytes, set);
    CPU_FREE(set);
    if (rc == 0) return count;
    if (errno != EINVAL) break;  // EINVAL: the kernel's mask is larger
  }
  return static_cast<int>(std::thread::hardware_concurrency());
}

// The file's text, or "" when it cannot be read (no such cgroup file).
std::string TextOrEmpty(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// The tighter of two limits, 0 meaning none.
int Tighter(int limit, int cpus) { return cpus > 0 && (limit == 0 || cpus < limit) ? cpus : limit; }

// ceil(quota / period) for a positive quota and period, else 0.
int QuotaCpus(double quota, double period) {
  return quota > 0 && period > 0 ? static_cast<int>(std::ceil(quota / period)) : 0;
}

// The quota in one cgroup directory: v2 "cpu.max" ("max 100000" or
// "200000 100000"), or v1 cfs_quota_us (-1: none) over cfs_period_us.
int DirectoryCpuLimit(const std::string& dir) {
  std::istringstream v2(TextOrEmpty(dir + "/cpu.max"));
  std::string quota;
  double period = 0;
  if (v2 >> quota >> period) return quota == "max" ? 0 : QuotaCpus(std::atof(quota.c_str()), period);
  return QuotaCpus(std::atof(TextOrEmpty(dir + "/cpu.cfs_quota_us").c_str()),
                   std::atof(TextOrEmpty(dir + "/cpu.cfs_period_us").c_str()));
}

// The tightest limit of `path` and its ancestors under `base`.
int HierarchyCpuLimit(const std::string& base, std::string path) {
  int limit = 0;
  for (;;) {
    limit = Tighter(limit, DirectoryCpuLimit(base + (path == "/" ? "" : path)));
    if (path.empty() || path == "/") return limit;
    const size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
}

}  // namespace

int CgroupCpuLimit(const std::string& cgroup_root, const std::string& proc_self_cgroup) {
  int limit = 0;
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2's line is "0::path".
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (controllers.empty()) {
      limit = Tighter(limit, HierarchyCpuLimit(cgroup_root, path));               // v2
      limit = Tighter(limit, HierarchyCpuLimit(cgroup_root + "/unified", path));  // v2 beside v1 (hybrid)
    } else if (("," + controllers + ",").find(",cpu,") != std::string::npos) {
      limit = Tighter(limit, HierarchyCpuLimit(cgroup_root + "/" + controllers, path));
      if (controllers != "cpu") limit = Tighter(limit, HierarchyCpuLimit(cgroup_root + "/cpu", path));
    }
  }
  return limit;
}

int WorkerCount(int requested, size_t tasks) {
  const int quota = CgroupCpuLimit("/sys/fs/cgroup", TextOrEmpty("/proc/self/cgroup"));
  const int cpus = Tighter(std::max(AllowedCpus(), 1), quota);
  const int wanted = requested > 0 ? std::min(requested, cpus) : cpus;
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(wanted), 1, std::max<size_t>(tasks, 1)));
}

}  // namespace perseus
