// The SBPL profile of a policy (profile.hpp). Pure.
#include "profile.hpp"

#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <map>

namespace cordon::seatbelt {

namespace {

namespace fs = std::filesystem;

// Builds the text and the parameters together, so that no path is ever written into the text.
class Builder {
 public:
  std::string param(const std::string& prefix, const std::string& value) {
    std::string name = prefix + "_" + std::to_string(counts_[prefix]++);
    params_.emplace_back(name, value);
    return "(param \"" + name + "\")";
  }
  // `(allow|deny OPS (FILTER (param ..)) ...)`, one filter per path; nothing when none.
  void paths(const std::string& verb, const std::string& ops, const std::string& filter,
             const std::string& prefix, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::string rule = "(" + verb + " " + ops;
    for (const auto& v : values) rule += "\n    (" + filter + " " + param(prefix, v) + ")";
    line(rule + ")");
  }
  void line(const std::string& s) { text_ += s + "\n"; }
  void comment(const std::string& s) { text_ += "\n; " + s + "\n"; }
  Profile done() { return {std::move(text_), std::move(params_)}; }

 private:
  std::map<std::string, int> counts_;
  std::string text_;
  std::vector<std::pair<std::string, std::string>> params_;
};

// Each path as Seatbelt sees it, once, in order.
std::vector<std::string> unique(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::string m = macos_path(p);
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

bool within(const std::string& path, const std::string& root) {
  return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
}

// What any process needs on macOS to start (the dynamic loader and its cache, the system
// libraries), whatever the policy reads.
const std::vector<std::string> kSystemReads = {"/System/Library", "/System/Cryptexes",
                                               "/System/Volumes/Preboot/Cryptexes", "/usr/lib",
                                               "/private/var/db/dyld"};
const std::vector<std::string> kDevices = {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom",
                                           "/dev/tty"};

void base(Builder& b, const ProfileInput& in) {
  b.line("(version 1)");
  b.line("(deny default)");
  b.comment(
      "what any process needs: its own signals and process list, sysctls, logging, "
      "user lookups, stat() for realpath, the standard devices");
  b.line("(allow signal (target same-sandbox))");
  b.line("(allow process-info* (target same-sandbox))");
  b.line("(allow sysctl-read)");
  b.line("(allow mach-lookup (global-name \"com.apple.system.logger\")");
  b.line("    (global-name \"com.apple.system.opendirectoryd.libinfo\"))");
  b.line("(allow ipc-posix-sem)");
  b.line("(allow file-read-metadata)");
  b.paths("allow", "file-read* file-write-data file-ioctl", "literal", "DEV", kDevices);
  b.paths("allow", "file-read* file-map-executable", "subpath", "SYSTEM", kSystemReads);
  if (in.policy.process.allow_subprocess) b.line("(allow process-fork)");
}

std::vector<std::string> writable(const ProfileInput& in) {
  std::vector<std::string> w = in.policy.filesystem.write;
  w.push_back(in.home.string());
  w.push_back(in.tmp.string());
  return unique(w);
}

void files(Builder& b, const ProfileInput& in) {
  const auto& f = in.policy.filesystem;
  b.comment("reads: " + std::string(f.read_host ? "everything" : "the granted paths") +
            ", the workspace, HOME and TMPDIR");
  if (f.read_host) {
    b.line("(allow file-read*)");
  } else {
    std::vector<std::string> r = f.read;
    r.push_back(in.workspace.string());
    for (const auto& w : f.write) r.push_back(w);
    r.push_back(in.home.string());
    r.push_back(in.tmp.string());
    b.paths("allow", "file-read*", "subpath", "READ", unique(r));
  }
  b.comment("writes: " + std::string(f.write_host ? "everything" : "the granted paths") +
            ", HOME and TMPDIR");
  if (f.write_host)
    b.line("(allow file-write*)");
  else
    b.paths("allow", "file-write*", "subpath", "WRITE", writable(in));
}

// Every path a program name may be executed by, as Seatbelt sees it.
std::vector<std::string> candidates(const ProfileInput& in, const std::vector<std::string>& names) {
  return unique(program_candidates(in, names));
}

// The blocked programs under every name they are looked for by, and the files those resolve to.
std::vector<std::string> denied_programs(const ProfileInput& in) {
  auto names = denied_program_names(in.policy);
  if (names.empty()) return {};
  auto denied = candidates(in, names);
  for (const auto& r : in.resolved_programs) denied.push_back(macos_path(r));
  return unique(denied);
}

// Denials come after the grants: the last matching rule wins.
void blocked(Builder& b, const ProfileInput& in) {
  std::vector<std::string> all = in.policy.filesystem.blocked;
  all.insert(all.end(), in.protected_paths.begin(), in.protected_paths.end());
  auto paths = unique(all);
  auto programs = denied_programs(in);
  if (paths.empty() && programs.empty()) return;
  if (!paths.empty()) {
    b.comment("blocked paths and cordon's own state: not read, listed, written or executed");
    b.paths("deny", "file-read* file-write* process-exec", "subpath", "BLOCKED", paths);
  }
  // Nor moved out of the way: no unlink or rename of a blocked path or program, or of an
  // ancestor the command may write.
  paths.insert(paths.end(), programs.begin(), programs.end());
  std::vector<std::string> pinned;
  auto w = writable(in);
  for (const auto& p : paths)
    for (fs::path a = p; a.has_relative_path(); a = a.parent_path()) {
      bool grantable = in.policy.filesystem.write_host ||
                       std::any_of(w.begin(), w.end(),
                                   [&](const auto& root) { return within(a.string(), root); });
      if (grantable && std::find(pinned.begin(), pinned.end(), a.string()) == pinned.end())
        pinned.push_back(a.string());
    }
  b.paths("deny", "file-write-unlink", "literal", "PINNED", pinned);
}

void programs(Builder& b, const ProfileInput& in) {
  const auto& p = in.policy.process;
  b.comment(p.allowed_commands.empty() ? "programs: any may run"
                                       : "programs: only the allowed ones may run");
  if (p.allowed_commands.empty()) {
    b.line("(allow process-exec)");
  } else {
    auto allowed = candidates(in, p.allowed_commands);
    for (const auto& r : in.resolved_allowed) allowed.push_back(macos_path(r));
    b.paths("allow", "process-exec", "literal", "EXEC", unique(allowed));
  }
  if (auto denied = denied_programs(in); !denied.empty()) {
    b.comment(
        "blocked programs, under every name they are looked for by: not run, and not read, "
        "since a copy of one would run");
    b.paths("deny", "process-exec file-read-data", "literal", "NOEXEC", denied);
  }
  if (!p.allow_subprocess) {
    b.comment("no subprocess: the command itself is the only process");
    b.line("(deny process-fork)");
  }
}

void network(Builder& b, const Policy& policy) {
  const auto& n = policy.network;
  if (n.allow) {
    b.comment("network: allowed");
    b.line("(allow network* system-socket)");
    return;
  }
  if (n.connect_ports.empty() && n.bind_ports.empty()) {
    b.comment("network: none (the default deny)");
    return;
  }
  b.comment("network: TCP on the listed ports only, to or from any host");
  b.line("(allow system-socket)");
  auto rule = [&](const std::string& ops, const char* side, const std::vector<std::uint16_t>& ps) {
    if (ps.empty()) return;
    std::string r = "(allow " + ops;
    for (auto port : ps) {
      if (port == 0)
        throw Error(code::kBadValue, "seatbelt cannot grant port 0", "name ports from 1 to 65535");
      r += std::string("\n    (") + side + " tcp \"*:" + std::to_string(port) + "\")";
    }
    b.line(r + ")");
  };
  rule("network-outbound", "remote", n.connect_ports);
  rule("network-bind network-inbound", "local", n.bind_ports);
}

}  // namespace

const std::vector<std::string>& standard_program_dirs() {
  static const std::vector<std::string> dirs = {
      "/bin",           "/usr/bin",          "/sbin",         "/usr/sbin",
      "/usr/local/bin", "/opt/homebrew/bin", "/opt/local/bin"};
  return dirs;
}

std::vector<std::string> denied_program_names(const Policy& policy) {
  std::vector<std::string> names = policy.process.blocked_commands;
  if (!names.empty()) names.insert(names.end(), {"busybox", "toybox"});
  return names;
}

std::vector<std::string> program_candidates(const ProfileInput& in,
                                            const std::vector<std::string>& names) {
  std::vector<std::string> dirs = in.path_dirs;
  for (const auto& d : standard_program_dirs()) dirs.push_back(d);
  std::vector<std::string> out;
  auto add = [&out](std::string path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  };
  for (const auto& n : names) {
    if (n.find('/') != std::string::npos) {
      add(n);
      continue;
    }
    for (const auto& d : dirs) add(d + "/" + n);
  }
  return out;
}

std::string macos_path(const std::string& path) {
  std::string p = fs::path(path).lexically_normal().string();
  if (p.size() > 1 && p.back() == '/') p.pop_back();
  for (const char* top : {"/tmp", "/var", "/etc"})
    if (within(p, top)) return "/private" + p;
  return p;
}

Profile generate_profile(const ProfileInput& in) {
  Builder b;
  base(b, in);
  files(b, in);
  programs(b, in);
  blocked(b, in);
  network(b, in.policy);
  return b.done();
}

}  // namespace cordon::seatbelt
