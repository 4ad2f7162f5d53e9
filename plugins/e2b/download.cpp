// Copying a run's files back, each through cordon::Workspace rooted at its write path.
#include "download.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/workspace.hpp>

#include <map>
#include <memory>

#include "paths.hpp"

namespace cordon::e2b {

namespace {

// No empty, "." or ".." component: the path means what it says.
bool plain(const std::string& path) {
  std::size_t at = 1;
  while (at <= path.size()) {
    auto end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

}  // namespace

Downloaded apply_download(const std::vector<TarFile>& files, const DownloadSpec& spec) {
  Downloaded d;
  std::map<std::string, std::unique_ptr<Workspace>> roots;
  WorkspaceRules rules;
  rules.blocked = spec.blocked;
  rules.max_write_bytes = spec.max_file_bytes;
  for (const auto& f : files) {
    std::string remote = "/" + f.path;
    if (!plain(remote)) {
      d.skipped.push_back(remote + ": not a plain path");
      continue;
    }
    std::string local = within(remote, spec.remote_ws)
                            ? spec.local_ws + remote.substr(spec.remote_ws.size())
                            : remote;
    const std::string* root = nullptr;
    for (const auto& w : spec.writes)
      if (within(local, w) && local != w && (!root || w.size() > root->size())) root = &w;
    if (!root) {
      d.skipped.push_back(local + ": not beneath a write path");
      continue;
    }
    try {
      auto& ws = roots[*root];
      if (!ws) ws = std::make_unique<Workspace>(*root, rules);
      WriteOptions options;
      options.parents = true;
      ws->write(local.substr(root->size() + 1), f.content, options);
      ++d.files;
      d.bytes += f.content.size();
    } catch (const Error& e) {
      d.skipped.push_back(local + ": " + e.what());
    }
  }
  return d;
}

}  // namespace cordon::e2b
