// The CPU time the whole machine has spent, for the benchmarks' "CPU per run" figures: every
// process and kernel thread counts, so also the kernel's deferred work (tearing down a network
// namespace, a container's cgroup) that no process is charged with. Run on an idle machine.
#pragma once

#include <unistd.h>

#include <cstdio>

namespace cordon::bench {

/// Milliseconds of CPU the machine has spent busy since boot, all CPUs together: the first line
/// of /proc/stat less idle and iowait, counted in clock ticks (10 ms here). 0 if unreadable.
inline double machine_busy_ms() {
  std::FILE* f = std::fopen("/proc/stat", "re");
  if (!f) return 0;
  unsigned long long v[8] = {};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                      &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (n < 5) return 0;
  unsigned long long busy = 0;
  for (int i = 0; i < n; ++i)
    if (i != 3 && i != 4) busy += v[i];  // 3: idle, 4: iowait
  return static_cast<double>(busy) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace cordon::bench
