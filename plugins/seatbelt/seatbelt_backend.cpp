// The seatbelt backend: its probe (the canary on macOS, "macOS only" elsewhere), its run through
// the launcher, and its profile compiled for review.
#include "seatbelt_backend.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <filesystem>
#include <sstream>

#include "blocked_links.hpp"
#include "canary.hpp"
#include "host_programs.hpp"

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

// Where a command may write, so where an other name of a blocked file could have been planted:
// the write grants, a HOME of the caller's, everything with write = "host". The run's own HOME
// and TMPDIR are new.
std::vector<std::string> writable_dirs(const ProfileInput& in) {
  const auto& f = in.policy.filesystem;
  if (f.write_host) return {"/"};
  std::vector<std::string> w = f.write;
  if (f.home == HomeMode::host) w.push_back(in.home.string());
  return w;
}

// The run's own directory under the temporary directory, removed with everything in it.
struct RunDir {
  std::string path = (std::filesystem::temp_directory_path() / "cordon-seatbelt-XXXXXX").string();
  RunDir() {
    if (!::mkdtemp(path.data()))
      throw Error(code::kIsolationFailed, "cannot make the run's directory under " +
                                              std::filesystem::temp_directory_path().string());
  }
  ~RunDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
};

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

std::vector<std::string> sandbox_exec_argv(const Profile& profile, const std::string& profile_file,
                                           const std::vector<std::string>& argv) {
  std::vector<std::string> out = {kSandboxExec, "-f", profile_file};
  for (const auto& [name, value] : profile.params) out.push_back("-D" + name + "=" + value);
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

ProbeResult SeatbeltBackend::do_probe() {
  std::string sys = system_name();
  if (sys == "Darwin") return canary_probe(kSandboxExec);
  ProbeResult r;
  r.available = false;
  r.reason = "macOS only: Seatbelt (sandbox-exec) is macOS's sandbox, and this host runs " + sys;
  for (auto id : cap::all()) r.proofs.push_back({std::string(id), false, "macOS only"});
  r.facts.push_back("cordon policy compile --backend seatbelt prints the profile it would use");
  return r;
}

RunResult run_sandboxed(const Plan& plan, OutputSink& sink, const std::string& launcher) {
  try {
    RunDir run_dir;
    ProfileInput in = profile_input(plan, run_dir.path);
    add_program_links(in, find_program_links(in));
    std::vector<std::string> notes = add_blocked_links(in, writable_dirs(in));
    add_program_other_names(in, writable_dirs(in));
    // The run's own HOME and TMPDIR, for the command's user alone (the caller's HOME exists).
    if (plan.policy.filesystem.home != HomeMode::host) ::mkdir(in.home.c_str(), 0700);
    ::mkdir(in.tmp.c_str(), 0700);
    Profile profile = generate_profile(in);
    std::string profile_file = run_dir.path + "/profile.sb";
    OwnedFd file = PrivateDir::create(run_dir.path).create_file("profile.sb", O_WRONLY);
    if (::write(file.get(), profile.text.data(), profile.text.size()) !=
        static_cast<ssize_t>(profile.text.size()))
      throw Error(code::kIsolationFailed, "cannot write the run's profile " + profile_file);
    sdk::ChildSpec spec = sdk::child_spec(plan, in.home);
    spec.argv = sandbox_exec_argv(profile, profile_file, plan.argv);
    spec.argv.front() = launcher;
    spec.exec_paths = {launcher};
    std::erase_if(spec.env, [](const std::string& v) { return v.rfind("TMPDIR=", 0) == 0; });
    spec.env.push_back("TMPDIR=" + in.tmp.string());
    RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
    for (const auto& req : plan.requirements)
      r.report.push_back({req.id, "the generated Seatbelt profile (sandbox-exec)"});
    r.notes.insert(r.notes.end(), notes.begin(), notes.end());
    return r;
  } catch (const Error& e) {
    RunResult r;
    r.error = e;
    return r;
  }
}

RunResult SeatbeltBackend::do_run(const Plan& plan, OutputSink& sink) {
  // Reached only where the probe proved something: on macOS, which cordon does not build for.
  return run_sandboxed(plan, sink, kSandboxExec);
}

std::optional<std::string> SeatbeltBackend::do_compile(const Plan& plan) {
  ProfileInput in = profile_input(plan, "/private/tmp/cordon-run-RUN");
  auto links = find_program_links(in);
  add_program_links(in, links);
  const std::vector<std::string> blocked = in.policy.filesystem.blocked;
  auto notes = add_blocked_links(in, writable_dirs(in));
  add_program_other_names(in, writable_dirs(in));
  Profile p = generate_profile(in);
  std::string out = "; cordon's Seatbelt profile for policy '" + plan.policy.name + "'\n";
  out += "; run as: " + std::string(kSandboxExec) + " -f PROFILE_FILE";
  for (const auto& [name, value] : p.params) out += " -D" + name + "=<" + name + ">";
  out += " -- PROGRAM ARGS...\n; with the parameters:\n";
  for (const auto& [name, value] : p.params) out += ";   " + name + " = " + value + "\n";
  // What actually runs: the symlinks among the programs' places, resolved on this host.
  if (!links.empty()) out += "; programs that resolve to another file on this host:\n";
  for (const auto& line : describe_program_links(links)) out += ";   " + line + "\n";
  // The other names (hard links) of blocked files found on this host: blocked too.
  const auto& all = in.policy.filesystem.blocked;
  if (all.size() > blocked.size())
    out += "; other names (hard links) of blocked files, blocked too:\n";
  for (auto it = all.begin() + static_cast<std::ptrdiff_t>(blocked.size()); it != all.end(); ++it)
    out += ";   " + *it + "\n";
  for (const auto& n : notes) out += "; note: " + n + "\n";
  return out + p.text;
}

}  // namespace cordon::seatbelt
