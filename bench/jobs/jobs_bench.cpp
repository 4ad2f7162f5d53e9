// Background jobs, measured: start to first output byte, and the tail of a 1 GB log. Prints
// medians and ratios against a plain baseline; asserts nothing.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Runs a shell command line and returns its stdout.
std::string capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    ::pclose(p);
  }
  return out;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Env {
  std::string dir, state, policy, cli = CORDON_CLI;
  Env() {
    char tmpl[] = "/var/tmp/cordon-bench-jobs-XXXXXX";
    dir = ::mkdtemp(tmpl);
    std::filesystem::permissions(dir, std::filesystem::perms(0755));
    state = dir + "/state";
    policy = dir + "/policy.toml";
    std::ofstream(policy) << "version = 1\n[policy]\nname = \"bench\"\n[limits]\n"
                             "max_log_bytes = 2147483648\n";
  }
  ~Env() { std::filesystem::remove_all(dir); }
  std::string job(const std::string& args) const {
    return cli + " job " + args + " --state-dir " + state;
  }
  std::string start(const std::string& command) const {
    std::string out = capture(cli + " job start --state-dir " + state + " --policy " + policy +
                              " --workspace " + dir + " -- sh -c '" + command + "'");
    return out.substr(0, out.find('\n'));
  }
};

void first_byte(const Env& env, int rounds) {
  std::vector<double> job, run;
  for (int i = 0; i < rounds; ++i) {
    auto t = Clock::now();
    std::string id = env.start("echo ready; sleep 100");
    while (capture(env.job("output " + id + " --tail 1")).find("ready") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    job.push_back(ms_since(t));
    capture(env.job("stop " + id + " --grace 100ms"));
    t = Clock::now();
    capture(env.cli + " run --policy " + env.policy + " --workspace " + env.dir +
            " -- sh -c 'echo ready'");
    run.push_back(ms_since(t));
  }
  std::printf("job start -> first output byte: %.1f ms (median of %d)\n", median(job), rounds);
  std::printf("cordon run of the same command:  %.1f ms; ratio %.2f\n", median(run),
              median(job) / median(run));
}

void tail_of_huge_log(const Env& env, int rounds) {
  std::string id = env.start("head -c 1073741824 /dev/zero | tr \"\\\\0\" x; echo; seq 1 20");
  capture(env.job("wait " + id));
  std::string log = env.state + "/" + id + "/output.log";
  std::vector<double> ours, plain;
  for (int i = 0; i < rounds; ++i) {
    auto t = Clock::now();
    capture(env.job("output " + id + " --tail 20"));
    ours.push_back(ms_since(t));
    t = Clock::now();
    capture("tail -n 20 " + log);
    plain.push_back(ms_since(t));
  }
  std::printf("job output --tail 20 on a %.2f GB log: %.1f ms (median of %d)\n",
              std::filesystem::file_size(log) / 1e9, median(ours), rounds);
  std::printf("tail -n 20 of the same file:          %.1f ms; ratio %.2f\n", median(plain),
              median(ours) / median(plain));
}

}  // namespace

int main() {
  Env env;
  first_byte(env, 20);
  tail_of_huge_log(env, 20);
  return 0;
}
