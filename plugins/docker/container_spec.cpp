// The create body, clause by clause. Pure.
#include "container_spec.hpp"

#include <boost/json/array.hpp>

#include <algorithm>
#include <filesystem>

namespace cordon::docker {

namespace json = boost::json;

namespace {

// `path` equals `base` or lies below it; the remainder (with its leading '/') goes to `rest`.
bool inside(const std::string& path, const std::string& base, std::string& rest) {
  if (path == base) {
    rest.clear();
    return true;
  }
  std::string prefix = base == "/" ? "/" : base + "/";
  if (path.rfind(prefix, 0) != 0) return false;
  rest = path.substr(prefix.size() - 1);
  return true;
}

json::array strings(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items) out.emplace_back(s);
  return out;
}

json::object bind(const std::string& source, const std::string& target, bool writable) {
  return json::object{{"Type", "bind"},
                      {"Source", source},
                      {"Target", target},
                      {"ReadOnly", !writable},
                      {"BindOptions", json::object{{"Propagation", "rprivate"}}}};
}

std::string tmpfs_options(const SpecInput& in, const char* mode) {
  std::string uid = in.user.substr(0, in.user.find(':'));
  std::string gid =
      in.user.find(':') == std::string::npos ? uid : in.user.substr(in.user.find(':') + 1);
  bool numeric = !uid.empty() && std::all_of(uid.begin(), uid.end(), ::isdigit) &&
                 std::all_of(gid.begin(), gid.end(), ::isdigit);
  std::string opts = std::string("rw,nosuid,nodev,mode=") + mode;
  if (numeric) opts += ",uid=" + uid + ",gid=" + gid;
  if (const auto& mb = in.plan.policy.limits.memory_mb)
    opts += ",size=" + std::to_string(*mb) + "m";
  return opts;
}

json::array ulimits(const Limits& l) {
  json::array out;
  auto add = [&out](const char* name, std::uint64_t v) {
    out.push_back(json::object{{"Name", name}, {"Soft", v}, {"Hard", v}});
  };
  if (l.cpu_seconds) add("cpu", *l.cpu_seconds);
  if (l.max_open_files) add("nofile", *l.max_open_files);
  if (l.max_file_size_mb) add("fsize", *l.max_file_size_mb << 20);
  return out;
}

// Granted variables, HOME, and the image's own variables removed unless granted: the daemon
// merges the image's ENV, and a name without '=' deletes one.
json::array environment(const SpecInput& in, const std::string& home, ContainerSpec& spec) {
  std::vector<std::string> env;
  for (const auto& [k, v] : in.plan.env)
    if (k != "HOME") env.push_back(k + "=" + v);
  env.push_back("HOME=" + home);
  for (const auto& kv : in.image_env) {
    std::string name = kv.substr(0, kv.find('='));
    if (name.empty() || name == "HOME" || in.plan.env.count(name)) continue;
    env.push_back(name);
    spec.removed_env.push_back(name);
  }
  return strings(env);
}

// The host mounts, then the masks. The daemon refuses two mounts at one target: a path masked
// twice is bound once, and a mask at a mount's own target replaces that mount.
json::array mount_list(const SpecInput& in, ContainerSpec& spec) {
  std::vector<std::pair<std::string, bool>> masks;  // target, directory
  auto add = [&masks](const std::string& target, bool dir, std::vector<std::string>& record) {
    record.push_back(target);
    if (std::none_of(masks.begin(), masks.end(),
                     [&target](const auto& m) { return m.first == target; }))
      masks.emplace_back(target, dir);
  };
  for (const auto& [target, dir] : masks_for(spec.mounts, in.blocked))
    add(target, dir, spec.masked);
  for (const auto& [target, dir] : masks_for(spec.mounts, in.own_state))
    add(target, dir, spec.hidden);
  for (const auto& program : in.exec_masks) add(program, false, spec.exec_masked);
  for (const auto& program : in.mount_exec_masks) add(program, false, spec.mount_exec_masked);
  std::erase_if(spec.mounts, [&masks](const HostMount& m) {
    return std::any_of(masks.begin(), masks.end(),
                       [&m](const auto& mask) { return mask.first == m.target; });
  });
  json::array out;
  for (const auto& m : spec.mounts) out.push_back(bind(m.source, m.target, m.writable));
  for (const auto& [target, dir] : masks)
    out.push_back(bind(dir ? in.mask_dir : in.mask_file, target, false));
  return out;
}

// The private /tmp and HOME. A tmpfs at a mount's own target would hide the mount (the daemon
// mounts the tmpfs last): a host /tmp that is mounted is the /tmp, and a mount at the private
// HOME is refused. Mounts below either are deeper, so the daemon mounts them after the tmpfs.
json::object tmpfs_list(const SpecInput& in, ContainerSpec& spec) {
  json::object tmpfs;
  spec.private_tmp = std::none_of(spec.mounts.begin(), spec.mounts.end(),
                                  [](const HostMount& m) { return m.target == "/tmp"; });
  if (spec.private_tmp) tmpfs["/tmp"] = tmpfs_options(in, "1777");
  if (in.plan.policy.filesystem.home != HomeMode::private_home) return tmpfs;
  for (const auto& m : spec.mounts)
    if (m.target == spec.home)
      throw Error(code::kIsolationFailed,
                  "'" + m.source + "' (" + m.why + ") would be mounted at '" + spec.home +
                      "', the private HOME, whose tmpfs would hide it",
                  "mount it elsewhere, or set filesystem.home = \"host\"");
  tmpfs[spec.home] = tmpfs_options(in, "0700");
  spec.private_home = true;
  return tmpfs;
}

json::object host_config(const SpecInput& in, ContainerSpec& spec) {
  const Policy& p = in.plan.policy;
  json::object hc;
  hc["Mounts"] = mount_list(in, spec);
  hc["Tmpfs"] = tmpfs_list(in, spec);
  hc["ReadonlyRootfs"] = true;
  hc["NetworkMode"] = p.network.allow ? "default" : "none";
  hc["IpcMode"] = "private";
  hc["CapDrop"] = json::array{"ALL"};
  json::array security{"no-new-privileges"};
  if (in.seccomp) {
    security.emplace_back(in.seccomp->security_opt());
    spec.seccomp = in.seccomp->summary();
  }
  hc["SecurityOpt"] = std::move(security);
  hc["Init"] = true;
  hc["Privileged"] = false;
  hc["LogConfig"] = json::object{{"Type", "none"}, {"Config", json::object{}}};
  if (p.limits.memory_mb) {
    std::int64_t bytes = static_cast<std::int64_t>(*p.limits.memory_mb << 20);
    hc["Memory"] = bytes;
    hc["MemorySwap"] = bytes;  // equal: no swap on top
  }
  if (p.limits.max_processes) {
    spec.pids_limit = static_cast<std::int64_t>(*p.limits.max_processes) + 1;  // + the init
    hc["PidsLimit"] = spec.pids_limit;
  }
  if (p.limits.cpu_percent)
    hc["NanoCpus"] = static_cast<std::int64_t>(*p.limits.cpu_percent) * 10000000;
  hc["Ulimits"] = ulimits(p.limits);
  if (!in.settings.runtime.empty()) hc["Runtime"] = in.settings.runtime;
  return hc;
}

}  // namespace

std::vector<HostMount> host_mounts(const Plan& plan, const Settings& settings,
                                   const std::vector<std::string>& write_paths) {
  std::vector<HostMount> out;
  std::string ws = plan.workspace.string();
  // Writable only when a write grant covers it, as the policy says.
  out.push_back({ws, ws, grants_write(plan.policy, plan.workspace), "workspace"});
  for (const auto& w : write_paths)
    if (w != ws) out.push_back({w, w, true, "filesystem.write"});
  // The daemon cleans a target lexically; so does cordon, to compare them.
  for (const auto& m : settings.mounts) {
    std::string target = std::filesystem::path(m.target).lexically_normal().string();
    if (target.size() > 1 && target.back() == '/') target.pop_back();
    out.push_back({m.source, target, m.writable, "backends.docker.mounts"});
  }
  if (plan.policy.filesystem.home == HomeMode::host && !plan.host_home.empty())
    out.push_back({plan.host_home.string(), plan.host_home.string(), true, "filesystem.home"});
  return out;
}

std::vector<std::pair<std::string, bool>> masks_for(const std::vector<HostMount>& mounts,
                                                    const std::vector<BlockedPath>& blocked) {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& b : blocked) {
    if (!b.exists) continue;
    for (const auto& m : mounts) {
      std::string rest;
      if (!inside(b.path, m.source, rest)) continue;
      std::string target = rest.empty() ? m.target : (m.target == "/" ? rest : m.target + rest);
      if (std::find(out.begin(), out.end(), std::make_pair(target, b.directory)) == out.end())
        out.emplace_back(target, b.directory);
    }
  }
  return out;
}

std::vector<HostMount> pins_for(const std::vector<HostMount>& mounts,
                                const std::vector<BlockedPath>& masked) {
  std::vector<HostMount> out;
  // A pin inside a masked directory would show what the mask hides (it is mounted after it).
  auto hidden = [&](const std::string& source) {
    std::string rest;
    return std::any_of(masked.begin(), masked.end(), [&](const BlockedPath& b) {
      return b.exists && inside(source, b.path, rest);
    });
  };
  auto taken = [&](const std::string& target) {
    auto at = [&target](const HostMount& m) { return m.target == target; };
    return std::any_of(mounts.begin(), mounts.end(), at) || std::any_of(out.begin(), out.end(), at);
  };
  for (const auto& b : masked) {
    if (!b.exists) continue;
    for (const auto& m : mounts) {
      std::string rest;
      if (!m.writable || !inside(b.path, m.source, rest)) continue;
      // Each directory of `rest` but its last component (the masked path itself).
      for (auto slash = rest.find('/', 1); slash != std::string::npos;
           slash = rest.find('/', slash + 1)) {
        std::string dir = rest.substr(0, slash);
        std::string target = m.target == "/" ? dir : m.target + dir;
        if (!taken(target) && !hidden(m.source + dir))
          out.push_back({m.source + dir, target, true, kPinWhy});
      }
    }
  }
  return out;
}

void refuse_mounts_of_own_state(const std::vector<HostMount>& mounts,
                                const std::vector<std::string>& own_state) {
  for (const auto& m : mounts)
    for (const auto& state : own_state) {
      std::string rest;
      if (state.empty() || !inside(m.source, state, rest)) continue;
      throw Error(code::kPathEscape,
                  "the " + m.why + " '" + m.source + "' is " + (rest.empty() ? "" : "inside ") +
                      "cordon's own state '" + state + "', which no command may reach",
                  "run the command in a directory of its own, outside cordon's state and plugin "
                  "directories");
    }
}

ContainerSpec make_spec(const SpecInput& in) {
  ContainerSpec spec;
  const Plan& plan = in.plan;
  spec.home = plan.policy.filesystem.home == HomeMode::host && !plan.host_home.empty()
                  ? plan.host_home.string()
                  : std::string(kPrivateHome);
  spec.mounts = in.mounts;
  json::object labels{{"cordon.run", in.run_id}};
  for (const auto& l : in.labels) labels[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
  bool has_stdin = plan.stdin_data.has_value();
  spec.body = json::object{{"Image", in.settings.image},
                           {"Entrypoint", json::array{}},
                           {"Cmd", strings(plan.argv)},
                           {"Env", environment(in, spec.home, spec)},
                           {"WorkingDir", plan.workspace.string()},
                           {"User", in.user},
                           {"Hostname", "cordon"},
                           {"Tty", false},
                           {"AttachStdin", has_stdin},
                           {"OpenStdin", has_stdin},
                           {"StdinOnce", has_stdin},
                           {"AttachStdout", true},
                           {"AttachStderr", true},
                           {"NetworkDisabled", !plan.policy.network.allow},
                           {"Labels", std::move(labels)}};
  spec.body["HostConfig"] = host_config(in, spec);
  return spec;
}

}  // namespace cordon::docker
