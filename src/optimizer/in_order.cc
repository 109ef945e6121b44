// How many worker threads.
#include "optimizer/in_order.h"

#include <sched.h>

#include <algorithm>

namespace perseus::optimizer {

int WorkerCount(int requested, size_t tasks) {
  int cpus = requested;
  if (cpus <= 0) {
    // The affinity mask, not the machine: a container or `taskset` may allow fewer.
    cpu_set_t set;
    CPU_ZERO(&set);
    cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  }
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(std::max(cpus, 1)), 1, std::max<size_t>(tasks, 1)));
}

}  // namespace perseus::optimizer
