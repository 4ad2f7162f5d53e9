// The seatbelt backend on a host that is not macOS: discovered, compiling, proving nothing.
#include "seatbelt_backend.hpp"

#include <sys/utsname.h>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/error.hpp>

#include <sstream>

namespace cordon::seatbelt {

namespace {

std::string system_name() {
  utsname u{};
  return ::uname(&u) == 0 ? u.sysname : "an unknown system";
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> dirs;
  std::stringstream in(path);
  for (std::string d; std::getline(in, d, ':');)
    if (!d.empty() && d.front() == '/') dirs.push_back(d);
  return dirs;
}

}  // namespace

ProfileInput profile_input(const Plan& plan, const std::string& run_dir) {
  ProfileInput in;
  in.policy = plan.policy;
  in.workspace = plan.workspace;
  in.home = plan.policy.filesystem.home == HomeMode::host ? plan.host_home
                                                          : std::filesystem::path(run_dir) / "home";
  in.tmp = std::filesystem::path(run_dir) / "tmp";
  if (auto it = plan.env.find("PATH"); it != plan.env.end()) in.path_dirs = split_path(it->second);
  for (const auto& p : plan.protected_paths) in.protected_paths.push_back(p.string());
  return in;
}

std::vector<std::string> sandbox_exec_argv(const Profile& profile,
                                           const std::vector<std::string>& argv) {
  std::vector<std::string> out = {kSandboxExec, "-p", profile.text};
  for (const auto& [name, value] : profile.params) out.push_back("-D" + name + "=" + value);
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

ProbeResult SeatbeltBackend::do_probe() {
  ProbeResult r;
  std::string sys = system_name();
  r.available = false;
  r.reason = "macOS only: Seatbelt (sandbox-exec) is macOS's sandbox, and this host runs " + sys;
  for (auto id : cap::all()) r.proofs.push_back({std::string(id), false, "macOS only"});
  r.facts.push_back("cordon policy compile --backend seatbelt prints the profile it would use");
  return r;
}

RunResult SeatbeltBackend::do_run(const Plan&, OutputSink&) {
  // Never reached: the probe proves nothing here, so run() refuses first.
  RunResult r;
  r.error = Error(code::kBackendUnavailable, "the seatbelt backend runs on macOS only");
  return r;
}

std::optional<std::string> SeatbeltBackend::do_compile(const Plan& plan) {
  Profile p = generate_profile(profile_input(plan, "/private/tmp/cordon-run-RUN"));
  std::string out = "; cordon's Seatbelt profile for policy '" + plan.policy.name + "'\n";
  out += "; run as: " + std::string(kSandboxExec) + " -p PROFILE";
  for (const auto& [name, value] : p.params) out += " -D" + name + "=<" + name + ">";
  out += " -- PROGRAM ARGS...\n; with the parameters:\n";
  for (const auto& [name, value] : p.params) out += ";   " + name + " = " + value + "\n";
  return out + p.text;
}

}  // namespace cordon::seatbelt
