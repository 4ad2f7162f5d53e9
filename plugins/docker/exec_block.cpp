// Finding the image's blocked programs, deciding their masks, and caching the answer.
#include "exec_block.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include "container.hpp"
#include "host_side.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

constexpr const char* kSystemDirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                       "/usr/bin",        "/sbin",          "/bin"};

std::string base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  int bits = 0, acc = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

// HEAD /containers/{id}/archive?path=P: 404 when absent, else the stat header.
PathStat stat_path(const Daemon& daemon, const std::string& id, const std::string& path) {
  Response r = daemon.call("HEAD", "/containers/" + id + "/archive?path=" + url_encode(path));
  PathStat st;
  if (r.status != 200) return st;
  st.exists = true;
  auto header = r.headers.find("x-docker-container-path-stat");
  if (header == r.headers.end()) return st;
  json::error_code ec;
  auto parsed = json::parse(base64_decode(header->second), ec);
  if (ec || !parsed.is_object()) return st;
  if (const auto* t = parsed.as_object().if_contains("linkTarget"); t && t->is_string()) {
    st.link_target = std::string(t->as_string());
    st.symlink = !st.link_target.empty();
  }
  return st;
}

std::string cache_key(const std::string& image_id, const std::vector<std::string>& candidates) {
  std::string joined = image_id;
  for (const auto& c : candidates) joined += "\n" + c;
  std::ostringstream key;
  key << std::hex << std::hash<std::string>{}(joined);
  std::string id = image_id.substr(image_id.find(':') + 1).substr(0, 24);
  return "v3-" + id + "-" + key.str();  // v3: with the multi-call programs
}

}  // namespace

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string> exec_dirs(const std::string& path_env) {
  std::vector<std::string> dirs;
  std::istringstream in(path_env);
  for (std::string dir; std::getline(in, dir, ':');)
    if (!dir.empty() && dir.front() == '/' &&
        std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
      dirs.push_back(dir);
  for (const char* d : kSystemDirs)
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.emplace_back(d);
  return dirs;
}

std::vector<std::string> exec_candidates(const std::vector<std::string>& names,
                                         const std::string& path_env) {
  std::vector<std::string> dirs = exec_dirs(path_env);
  std::vector<std::string> out;
  for (const auto& name : names) {
    if (name.find('/') != std::string::npos) {
      out.push_back(name);
      continue;
    }
    for (const auto& d : dirs) out.push_back((d == "/" ? "" : d) + "/" + name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ExecMasks decide_masks(const std::vector<std::string>& candidates,
                       const std::map<std::string, PathStat>& stats, const Multicall& multicall) {
  ExecMasks m;
  m.multicall = multicall.files;
  m.multicall_aliases = multicall.aliases;
  auto listed = [](const std::vector<std::string>& list, const std::string& p) {
    return std::find(list.begin(), list.end(), p) != list.end();
  };
  for (const auto& path : candidates) {
    auto it = stats.find(path);
    if (it == stats.end() || !it->second.exists) continue;
    std::string target = path;
    if (it->second.symlink) {
      target = it->second.link_target;
      // A link to a multi-call program (su -> busybox) reaches its mask, when it provides the
      // name; a link to a program of another name would need that program blocked instead.
      if (base_name(target) != base_name(path) && !listed(m.multicall, target) &&
          !listed(m.multicall_aliases, target)) {
        m.refusal = "blocked program '" + path + "' is a link to the program '" + target +
                    "' of another name, which does not provide it: masking it would block that "
                    "program under every name";
        return m;
      }
      auto resolved = stats.find(target);
      if (resolved != stats.end() && !resolved->second.exists) {
        if (!listed(m.dangling, target)) m.dangling.push_back(target);
        continue;
      }
    }
    if (!listed(m.files, target)) m.files.push_back(target);
  }
  for (const auto& program : m.multicall)
    if (!listed(m.files, program)) m.files.push_back(program);
  return m;
}

namespace {

// The cached masks in `dir`, read without following a link.
std::optional<ExecMasks> load(const PrivateDir& dir, const std::string& key) {
  std::optional<std::string> text = dir.read_file(key + ".json", 1u << 20);
  if (!text) return std::nullopt;
  json::error_code ec;
  auto parsed = json::parse(*text, ec);
  if (ec || !parsed.is_object()) return std::nullopt;
  ExecMasks m;
  const auto& o = parsed.as_object();
  if (const auto* r = o.if_contains("refusal"); r && r->is_string()) m.refusal = r->as_string();
  for (auto [name, list] :
       {std::pair{"files", &m.files}, std::pair{"dangling", &m.dangling},
        std::pair{"multicall", &m.multicall}, std::pair{"multicall_aliases", &m.multicall_aliases}})
    if (const auto* f = o.if_contains(name); f && f->is_array())
      for (const auto& p : f->as_array())
        if (p.is_string()) list->emplace_back(p.as_string());
  return m;
}

void store(const PrivateDir& dir, const std::string& key, const ExecMasks& masks) {
  json::array files, dangling, multicall, aliases;
  for (const auto& f : masks.files) files.emplace_back(f);
  for (const auto& d : masks.dangling) dangling.emplace_back(d);
  for (const auto& p : masks.multicall) multicall.emplace_back(p);
  for (const auto& p : masks.multicall_aliases) aliases.emplace_back(p);
  try {
    dir.write_file(key + ".json",
                   json::serialize(json::object{{"refusal", masks.refusal},
                                                {"files", files},
                                                {"dangling", dangling},
                                                {"multicall", multicall},
                                                {"multicall_aliases", aliases}}),
                   0600);
  } catch (const Error&) {
    // A cache that cannot be written costs the next run a lookup, nothing else.
  }
}

}  // namespace

ExecMasks ExecBlockCache::masks(const Daemon& daemon, const PrivateDir& dir,
                                const std::string& image_id, const std::vector<std::string>& names,
                                const std::string& path_env, const MulticallScan& scan,
                                const std::vector<std::string>& extra) {
  auto candidates = exec_candidates(names, path_env);
  for (const auto& e : extra)
    if (std::find(candidates.begin(), candidates.end(), e) == candidates.end())
      candidates.push_back(e);
  std::string key = cache_key(image_id, candidates);
  {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) return it->second;
  }
  std::optional<ExecMasks> found = load(dir, key);
  if (!found) {
    // A container that is created and never started: the daemon stats paths of its root.
    Container probe(daemon, "cordon-exec-probe-" + new_run_id(),
                    probe_body(image_id, "exec-probe"));
    std::map<std::string, PathStat> stats;
    for (const auto& c : candidates) stats[c] = stat_path(daemon, probe.id(), c);
    for (auto& [path, st] : stats)
      if (st.symlink && base_name(st.link_target) == base_name(path))
        stats[st.link_target] = stat_path(daemon, probe.id(), st.link_target);
    std::vector<std::string> applets;
    for (const auto& n : names) applets.push_back(base_name(n));
    found = decide_masks(candidates, stats, scan(applets, exec_dirs(path_env)));
    store(dir, key, *found);
  }
  std::lock_guard lock(mutex_);
  memory_[key] = *found;
  return *found;
}

}  // namespace cordon::docker
