// Planning of the sandbox's tree. Pure.
#include "layout.hpp"

#include <algorithm>
#include <map>

namespace cordon::landlock {

bool is_within(const std::string& path, const std::string& ancestor) {
  if (ancestor == "/") return !path.empty() && path.front() == '/';
  if (path.compare(0, ancestor.size(), ancestor) != 0) return false;
  return path.size() == ancestor.size() || path[ancestor.size()] == '/';
}

namespace {

const std::vector<std::string> kDevices = {"null", "zero", "full", "random", "urandom", "tty"};

// Kernel-provided trees the sandbox gets fresh; host paths under them are never bound.
bool is_special(const std::string& path) {
  return is_within(path, "/proc") || is_within(path, "/dev");
}

using BindMap = std::map<std::string, MountStep>;

void add_bind(BindMap& binds, const HostPath& p, bool writable) {
  if (p.path == "/" || is_special(p.path)) return;
  auto [it, inserted] = binds.try_emplace(p.path);
  auto& step = it->second;
  if (inserted) {
    step.target = step.source = p.path;
    step.dir = p.dir;
  }
  step.writable = step.writable || writable;
}

// read = "host" shows every top-level entry but these: the kernel's trees (made fresh), the
// private /tmp, and /run, which holds the host's live endpoints rather than files to read —
// the user's systemd and D-Bus sessions (`systemd-run --user` runs anything outside the
// sandbox) and container daemons' sockets (root, for a member of their group). A policy that
// writes a path under /run gets that path.
bool hidden_from_host_reads(const std::string& name) {
  return name == "proc" || name == "dev" || name == "tmp" || name == "run";
}

void add_root_entries(const HostView& view, Layout& layout, BindMap& binds, bool writable) {
  for (const auto& e : view.root_entries) {
    std::string path = "/" + e.name;
    if (hidden_from_host_reads(e.name)) continue;
    if (e.kind == RootEntry::Kind::symlink)
      layout.symlinks.emplace_back(path, e.link_target);
    else
      add_bind(binds, {path, e.kind == RootEntry::Kind::dir}, writable);
  }
}

// The nearest step whose target is a strict ancestor of `path`, if any.
const MountStep* nearest_ancestor(const std::vector<MountStep>& steps, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& s : steps)
    if (s.target != path && is_within(path, s.target) &&
        (!best || s.target.size() > best->target.size()))
      best = &s;
  return best;
}

void place_home(const HostView& view, const LayoutOptions& options, Layout& layout,
                std::vector<MountStep>& steps) {
  if (!options.home_private) {
    layout.home = view.home;
    layout.home_kind = HomeKind::host;
    return;
  }
  const std::string& home = view.home;
  bool unusable = home.empty() || home.front() != '/' || home == "/" || is_special(home);
  bool granted_whole = false;
  bool under_bind = false;
  for (const auto& s : steps) {
    granted_whole = granted_whole || s.target == home || (!s.dir && is_within(home, s.target));
    under_bind = under_bind || (s.target != home && is_within(home, s.target));
  }
  if (unusable || granted_whole || (under_bind && !view.home_exists)) {
    layout.home = kFallbackHome;
    layout.home_kind = HomeKind::root_dir;
    return;
  }
  layout.home = home;
  if (!under_bind) {
    layout.home_kind = HomeKind::root_dir;
    return;
  }
  layout.home_kind = HomeKind::tmpfs;
  MountStep tmpfs;
  tmpfs.kind = MountStep::Kind::home_tmpfs;
  tmpfs.target = home;
  tmpfs.writable = true;
  steps.push_back(tmpfs);
}

// Drops a bind that an ancestor bind already provides (same or more access), unless the
// private home's tmpfs lies between them and hides it.
std::vector<MountStep> without_redundant(const std::vector<MountStep>& steps) {
  std::vector<MountStep> kept;
  for (const auto& s : steps) {
    const MountStep* parent = nearest_ancestor(kept, s.target);
    bool covered = s.kind == MountStep::Kind::bind && parent != nullptr &&
                   parent->kind == MountStep::Kind::bind && (parent->writable || !s.writable);
    if (!covered) kept.push_back(s);
  }
  return kept;
}

void set_create_flags(std::vector<MountStep>& steps) {
  for (auto& s : steps) {
    const MountStep* parent = nearest_ancestor(steps, s.target);
    s.create_target = parent == nullptr || parent->kind == MountStep::Kind::home_tmpfs;
  }
}

// A path is visible inside when the nearest step covering it is a bind.
bool visible(const std::vector<MountStep>& steps, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& s : steps)
    if (is_within(path, s.target) && (!best || s.target.size() > best->target.size())) best = &s;
  return best != nullptr && best->kind == MountStep::Kind::bind;
}

void add_masks(const HostView& view, Layout& layout) {
  auto add = [&layout](const std::string& path) {
    if (visible(layout.steps, path) &&
        std::find(layout.masks.begin(), layout.masks.end(), path) == layout.masks.end())
      layout.masks.push_back(path);
  };
  for (const auto& b : view.blocked) add(b.path);
  for (const auto& p : view.blocked_exec) add(p);
}

void add_links(const HostView& view, Layout& layout) {
  for (const auto& link : view.links) {
    const auto& path = link.first;
    bool on_root = !visible(layout.steps, path) && nearest_ancestor(layout.steps, path) == nullptr;
    bool clashes = false;
    for (const auto& s : layout.steps) clashes = clashes || is_within(s.target, path);
    for (const auto& l : layout.symlinks) clashes = clashes || l.first == path;
    clashes = clashes || is_within(layout.home, path) || is_special(path) || path == "/tmp";
    if (on_root && !clashes) layout.symlinks.push_back(link);
  }
}

}  // namespace

Layout plan_layout(const HostView& view, const LayoutOptions& options) {
  Layout layout;
  layout.read_host = view.read_host;
  layout.workspace = view.workspace.path;
  layout.devices = kDevices;
  layout.tmpfs_bytes = options.tmpfs_bytes;
  BindMap binds;
  bool write_root = std::any_of(view.write.begin(), view.write.end(),
                                [](const HostPath& p) { return p.path == "/"; });
  if (view.read_host) add_root_entries(view, layout, binds, write_root);
  for (const auto& p : view.read) add_bind(binds, p, false);
  for (const auto& p : view.write) add_bind(binds, p, true);
  add_bind(binds, view.workspace, true);
  layout.private_tmp = binds.find("/tmp") == binds.end();

  std::vector<MountStep> steps;
  for (auto& [target, step] : binds) steps.push_back(step);
  place_home(view, options, layout, steps);
  std::sort(steps.begin(), steps.end(),
            [](const MountStep& a, const MountStep& b) { return a.target < b.target; });
  layout.steps = without_redundant(steps);
  set_create_flags(layout.steps);
  add_masks(view, layout);
  add_links(view, layout);
  return layout;
}

}  // namespace cordon::landlock
