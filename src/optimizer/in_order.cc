// How many worker threads.
#include "optimizer/in_order.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>

namespace perseus::optimizer {
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

}  // namespace

int WorkerCount(int requested, size_t tasks) {
  const int cpus = std::max(AllowedCpus(), 1);
  const int wanted = requested > 0 ? std::min(requested, cpus) : cpus;
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(wanted), 1, std::max<size_t>(tasks, 1)));
}

}  // namespace perseus::optimizer
