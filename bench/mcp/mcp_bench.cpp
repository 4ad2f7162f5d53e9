// execute_command of /bin/true through one `cordon mcp` server (the standard policy, landlock),
// sequentially and 4 calls at a time, against a `cordon run` process per command and a bwrap
// spawn per command (`bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true`). Wall
// time per command and the machine's CPU time per command (/proc/stat: every process, the
// server and its sandboxes included), each as a ratio of bwrap's.
//   cordon-bench-mcp [N]
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Cost {
  double wall_ms = 0, cpu_ms = 0;
};

double machine_cpu_ms() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;
  unsigned long long v[8] = {}, busy = 0;
  for (auto& x : v) stat >> x;
  busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

Cost measure(int n, const std::function<void()>& batch, int per_batch = 1) {
  double cpu0 = machine_cpu_ms();
  auto t0 = Clock::now();
  for (int i = 0; i < n / per_batch; ++i) batch();
  double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return {wall / n, (machine_cpu_ms() - cpu0) / n};
}

int run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) return 127;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// One `cordon mcp` server on two pipes.
class Server {
 public:
  explicit Server(const std::string& workspace) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) std::exit(1);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      ::execl(CORDON_CLI, CORDON_CLI, "mcp", "--policy", "standard", "--workspace",
              workspace.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = ::fdopen(in[1], "w");
    from_ = ::fdopen(out[0], "r");
    send(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
    receive();
  }
  ~Server() {
    std::fclose(to_);
    ::waitpid(pid_, nullptr, 0);
    std::fclose(from_);
  }
  void send(const std::string& line) {
    std::fputs((line + "\n").c_str(), to_);
    std::fflush(to_);
  }
  boost::json::value receive() {
    std::string line;
    for (int c; (c = std::fgetc(from_)) != EOF && c != '\n';) line += static_cast<char>(c);
    return boost::json::parse(line);
  }
  // `count` calls of /bin/true sent at once, then every answer read.
  void calls(int count) {
    for (int i = 0; i < count; ++i)
      send(
          R"({"jsonrpc":"2.0","id":)" + std::to_string(++id_) +
          R"(,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":["/bin/true"]}}})");
    for (int i = 0; i < count; ++i) {
      auto r = receive();
      const auto& result = r.as_object().at("result").as_object();
      if (result.at("isError").as_bool()) {
        std::fprintf(stderr, "bench-mcp: a call failed: %s\n", boost::json::serialize(r).c_str());
        std::exit(1);
      }
    }
  }

 private:
  pid_t pid_ = 0;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  int id_ = 0;
};

void line(const char* what, Cost c, Cost base) {
  std::printf("%-34s %7.2f ms  %5.2f of bwrap | CPU %7.2f ms  %5.2f of bwrap\n", what, c.wall_ms,
              c.wall_ms / base.wall_ms, c.cpu_ms, c.cpu_ms / base.cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 40;
  n -= n % 4;
  char dir[] = "/tmp/cordon-bench-mcp-XXXXXX";
  if (!::mkdtemp(dir)) return 1;
  ::chmod(dir, 0755);  // the sandbox's identity (65534 when run as root) enters it
  std::vector<std::string> bwrap = {"bwrap", "--unshare-all", "--ro-bind", "/",     "/",
                                    "--dev", "/dev",          "--proc",    "/proc", "true"};
  std::vector<std::string> cordon_run = {CORDON_CLI, "run", "--workspace", dir, "--", "/bin/true"};
  if (run(bwrap) != 0) {
    std::fprintf(stderr, "bench-mcp: bwrap does not run here\n");
    return 1;
  }
  run(cordon_run);
  Cost base = measure(n, [&] { run(bwrap); });
  Cost process = measure(n, [&] { run(cordon_run); });
  Cost serial, parallel;
  {
    Server server(dir);
    server.calls(1);  // the first call probes the backends
    serial = measure(n, [&] { server.calls(1); });
    parallel = measure(
        n, [&] { server.calls(4); }, 4);
  }
  ::rmdir(dir);
  std::printf("mcp: %d commands of /bin/true, standard policy, per command\n", n);
  std::printf("%-34s %7.2f ms  (baseline) | CPU %7.2f ms\n", "bwrap spawn", base.wall_ms,
              base.cpu_ms);
  line("cordon run process", process, base);
  line("cordon mcp, one call at a time", serial, base);
  line("cordon mcp, 4 calls at a time", parallel, base);
  return 0;
}
