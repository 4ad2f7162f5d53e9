// Planning of the sandbox's tree. Pure.
#include "layout.hpp"

#include "host_paths.hpp"

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
  if (p.ino != 0) {
    step.dev = p.dev;
    step.ino = p.ino;
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

// The nearest step covering `path` (itself or an ancestor), if any.
const MountStep* covering(const std::vector<MountStep>& steps, const std::string& path) {
  const MountStep* best = nullptr;
  for (const auto& s : steps)
    if (is_within(path, s.target) && (!best || s.target.size() > best->target.size())) best = &s;
  return best;
}

// A path is visible inside when the nearest step covering it is a bind.
bool visible(const std::vector<MountStep>& steps, const std::string& path) {
  const MountStep* best = covering(steps, path);
  return best != nullptr && best->kind == MountStep::Kind::bind;
}

// The ancestors of `path` strictly between the writable bind that shows it and itself.
void add_pins(const MountStep& bind, const std::string& path, std::vector<std::string>& pins) {
  if (!bind.writable || path == bind.target) return;
  std::string parent = path.substr(0, path.rfind('/'));
  std::vector<std::string> chain;
  while (parent.size() > bind.target.size() && is_within(parent, bind.target)) {
    chain.push_back(parent);
    parent = parent.substr(0, parent.rfind('/'));
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    if (std::find(pins.begin(), pins.end(), *it) == pins.end()) pins.push_back(*it);
}

void add_masks(const HostView& view, Layout& layout) {
  std::vector<Mask> wanted;
  auto add = [&](const HostPath& p) {
    if (visible(layout.steps, p.path) &&
        std::find(wanted.begin(), wanted.end(), Mask{p.path, p.dir, 0, 0}) == wanted.end())
      wanted.push_back({p.path, p.dir, p.dev, p.ino});
  };
  for (const auto* list : {&view.blocked, &view.own_state, &view.aliases, &view.blocked_exec})
    for (const auto& p : *list) add(p);
  // A mask on a directory hides everything beneath it.
  for (const auto& m : wanted) {
    bool nested = std::any_of(wanted.begin(), wanted.end(), [&m](const Mask& o) {
      return o.path != m.path && is_within(m.path, o.path);
    });
    if (nested) continue;
    layout.masks.push_back(m);
    add_pins(*covering(layout.steps, m.path), m.path, layout.pins);
  }
  std::sort(layout.pins.begin(), layout.pins.end());
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
  add_bind(binds, view.workspace, view.workspace_writable);
  layout.private_tmp = binds.find("/tmp") == binds.end();

  std::vector<MountStep> steps;
  for (auto& [target, step] : binds) steps.push_back(step);
  place_home(view, options, layout, steps);
  // HOME's own tmpfs and the root's share the budget, so that both full still fit in it.
  if (layout.home_kind == HomeKind::tmpfs) layout.tmpfs_bytes /= 2;
  std::sort(steps.begin(), steps.end(),
            [](const MountStep& a, const MountStep& b) { return a.target < b.target; });
  layout.steps = without_redundant(steps);
  set_create_flags(layout.steps);
  add_masks(view, layout);
  add_links(view, layout);
  return layout;
}

}  // namespace cordon::landlock
