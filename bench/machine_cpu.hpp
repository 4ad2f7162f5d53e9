// The CPU time the whole machine has spent, for the benchmarks' "CPU per run" figures: every
// process and kernel thread counts, so also the kernel's deferred work (tearing down a network
// namespace, a container's cgroup) that no process is charged with. Run on an idle machine.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace cordon::bench {

/// Milliseconds of CPU the machine has spent busy, all CPUs together: the time elapsed on every
/// online CPU less what /proc/stat counts idle or iowait. The kernel keeps idle time exactly
/// (it is exported in 10 ms clock ticks, an error that averages out over many windows), while
/// its busy counters are sampled at the tick, which misses much of a run's short bursts. Only
/// differences between two calls mean anything. 0 if unreadable.
inline double machine_busy_ms() {
  std::FILE* f = std::fopen("/proc/stat", "re");
  if (!f) return 0;
  unsigned long long v[5] = {};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4]);
  std::fclose(f);
  if (n < 5) return 0;
  double idle_ms =
      static_cast<double>(v[3] + v[4]) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  return now_ms * static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)) - idle_ms;
}

/// How long the kernel is given to finish a run's deferred work (namespaces and cgroups are torn
/// down by its own threads, after the run has ended) before a measuring window closes.
inline constexpr std::chrono::milliseconds kSettle{150};

/// The machine's busy CPU in ms while `work()` runs, its deferred kernel work included: the
/// machine settles first (kSettle), so that no earlier work's teardown is counted, and the
/// window stays open kSettle after `work()`, so that its own is. Run on an idle machine: the
/// machine's background in the window counts too.
template <class Work>
double settled_busy_ms(Work&& work) {
  std::this_thread::sleep_for(kSettle);
  double busy = machine_busy_ms();
  work();
  std::this_thread::sleep_for(kSettle);
  return machine_busy_ms() - busy;
}

}  // namespace cordon::bench
