// N runs of /bin/true on one host: over one reused connection (the ssh backend, as the C++ API
// and a long-lived host use it), against fresh `ssh host true` and `ssh` through a
// ControlMaster. Wall time per command, and the CPU time of this machine per command (from
// /proc/stat: client and sshd together, as both run here), each as a ratio of the ControlMaster
// figure, the baseline of the issue. With CORDON (this build's cordon, run on the host as the
// fixture's login) it also measures the remote-cordon path: the standard policy (less the
// cgroup totals, which the login cannot have) enforced by the remote landlock backend, over the
// connection's `cordon serve`, and with a process of its own per run.
//   cordon-bench-ssh FIXTURE_DIR [N [CORDON]]   FIXTURE_DIR: made by scripts/sshd start
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

#include "machine_cpu.hpp"
#include "ssh_backend.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Cost {
  double wall_ms = 0;
  double cpu_ms = 0;
};

using cordon::bench::settled_busy_ms;

// Wall per run, and the machine's CPU per run, settled (machine_cpu.hpp).
Cost measure(int n, const std::function<bool()>& once) {
  double wall = 0;
  double cpu = settled_busy_ms([&] {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i)
      if (!once()) {
        std::fprintf(stderr, "bench-ssh: a command failed\n");
        std::exit(1);
      }
    wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  });
  return {wall / n, cpu / n};
}

struct Sink final : cordon::OutputSink {
  void write(cordon::Stream, std::string_view) override {}
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cordon-bench-ssh FIXTURE_DIR [N]\n");
    return 2;
  }
  std::string dir = argv[1];
  int n = argc > 2 ? std::atoi(argv[2]) : 20;
  int port = 0;
  std::string user;
  std::ifstream(dir + "/ports") >> port;
  std::ifstream(dir + "/user") >> user;
  std::string ssh = "ssh -q -i " + dir + "/client_key -o UserKnownHostsFile=" + dir +
                    "/known_hosts -o BatchMode=yes -p " + std::to_string(port);
  std::string target = user + "@127.0.0.1";
  std::string control =
      "-o ControlMaster=auto -o ControlPath=" + dir + "/cm-%C -o ControlPersist=60";

  cordon::Policy policy;
  policy.filesystem.read_host = policy.filesystem.write_host = true;
  policy.filesystem.home = cordon::HomeMode::host;
  policy.network.allow = true;
  policy.limits.timeout = std::chrono::seconds(30);
  cordon::Plan plan;
  plan.policy = policy;
  plan.requirements = cordon::derive_requirements(policy);
  plan.argv = {"true"};
  plan.workspace = "/tmp";
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  plan.settings = {{"host", "127.0.0.1"},
                   {"port", port},
                   {"user", user},
                   {"identity", dir + "/client_key"},
                   {"known_hosts", dir + "/known_hosts"}};
  cordon::ssh::SshBackend backend(cordon::BackendContext{"ssh", nullptr, "/var/tmp"});
  Sink sink;
  auto run = [&] {
    plan.deadline = Clock::now() + std::chrono::seconds(30);
    auto r = backend.run(plan, sink);
    if (r.error) std::fprintf(stderr, "%s\n", r.error->message().c_str());
    return !r.error && r.exit_code == 0;
  };
  run();  // the handshake and the probe: paid once per process
  Cost reused = measure(n, run);
  Cost fresh = measure(n, [&] { return std::system((ssh + " " + target + " true").c_str()) == 0; });
  std::system((ssh + " " + control + " " + target + " true").c_str());  // starts the master
  Cost master = measure(
      n, [&] { return std::system((ssh + " " + control + " " + target + " true").c_str()) == 0; });
  std::system((ssh + " " + control + " -O exit " + target + " 2>/dev/null").c_str());

  // The remote-cordon path: served, and (through a wrapper without `serve`) a process per run.
  std::optional<Cost> served, per_process;
  if (argc > 3) {
    std::string cordon = argv[3];
    cordon::Policy standard = cordon::load_preset("standard");
    standard.limits.memory_mb.reset();
    standard.limits.max_processes.reset();
    standard = cordon::resolve_paths(std::move(standard), {"/tmp", "/root"});
    cordon::Plan remote = plan;
    remote.policy = standard;
    remote.requirements = cordon::derive_requirements(standard);
    remote.settings["cordon"] = cordon;
    auto on = [&](cordon::ssh::SshBackend& b) {
      return [&] {
        remote.deadline = Clock::now() + std::chrono::seconds(30);
        auto r = b.run(remote, sink);
        if (r.error) std::fprintf(stderr, "%s\n", r.error->message().c_str());
        return !r.error && r.exit_code == 0;
      };
    };
    cordon::ssh::SshBackend serving(cordon::BackendContext{"ssh", nullptr, "/var/tmp"});
    on(serving)();
    served = measure(n, on(serving));
    std::string wrapper = "/tmp/cordon-bench-no-serve-" + std::to_string(::getpid());
    std::ofstream(wrapper) << "#!/bin/sh\n[ \"$1\" = serve ] && exit 2\nexec '" << cordon
                           << "' \"$@\"\n";
    ::chmod(wrapper.c_str(), 0755);
    remote.settings["cordon"] = wrapper;
    cordon::ssh::SshBackend single(cordon::BackendContext{"ssh", nullptr, "/var/tmp"});
    on(single)();
    per_process = measure(n, on(single));
    std::remove(wrapper.c_str());
  }

  std::printf("ssh: %d runs of true on 127.0.0.1 (this machine's sshd), per command\n", n);
  auto line = [&](const char* name, Cost c) {
    std::printf("%-34s %8.2f ms  %5.2f of ControlMaster | CPU %8.2f ms  %5.2f of ControlMaster\n",
                name, c.wall_ms, c.wall_ms / master.wall_ms, c.cpu_ms, c.cpu_ms / master.cpu_ms);
  };
  line("fresh `ssh host true`", fresh);
  line("ssh through a ControlMaster", master);
  line("cordon ssh backend, reused", reused);
  if (served) line("  remote cordon, served", *served);
  if (per_process) line("  remote cordon, a process per run", *per_process);
  return 0;
}
