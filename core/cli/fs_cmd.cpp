// `cordon fs read|write|list|remove`: the workspace file API, kept beneath the workspace by the
// kernel, with the policy's size caps and blocked paths.
#include <cordon/runner.hpp>
#include <cordon/workspace.hpp>

#include <boost/json.hpp>

#include <iostream>
#include <iterator>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct FsOptions {
  std::optional<std::string> workspace;
  std::optional<std::string> backend;
  RuntimeOptions runtime;
  std::optional<std::string> policy;
  std::string path;
  bool json = false;
  bool parents = false;
};

// Exit status of a refused or failed file operation.
constexpr int kFsFailed = 2;

const char* kind_name(WorkspaceEntry::Kind k) {
  switch (k) {
    case WorkspaceEntry::Kind::file:
      return "file";
    case WorkspaceEntry::Kind::directory:
      return "dir";
    case WorkspaceEntry::Kind::symlink:
      return "link";
    case WorkspaceEntry::Kind::other:
      return "other";
  }
  return "other";
}

void print_list(const std::vector<WorkspaceEntry>& entries, bool json) {
  if (!json) {
    for (const auto& e : entries)
      std::cout << kind_name(e.kind) << "\t" << e.size << "\t" << e.name << "\n";
    return;
  }
  boost::json::array out;
  for (const auto& e : entries)
    out.push_back({{"name", e.name}, {"kind", kind_name(e.kind)}, {"size", e.size}});
  std::cout << boost::json::serialize(out) << "\n";
}

// The workspace of backend `name`'s commands (ssh: on the remote host), or nullptr when they
// see this machine's files.
std::unique_ptr<WorkspaceFiles> backend_workspace(const FsOptions& o, const std::string& name) {
  if (!o.workspace || o.workspace->empty() || o.workspace->front() != '/')
    throw Error(code::kBadArgument,
                "--backend needs --workspace: an absolute path where '" + name + "' runs commands",
                "cordon fs read --backend " + name + " --workspace /srv/ws PATH");
  Config config;
  auto registry = make_registry(o.runtime, config);
  Backend* backend = registry->backend(name);
  if (!backend) {
    const auto* entry = registry->find(name);
    throw entry && entry->error ? *entry->error
                                : Error(code::kUnknownBackend, "no backend named '" + name + "'",
                                        "cordon backends lists them");
  }
  std::filesystem::path root(*o.workspace);
  Policy policy = policy_of(o.policy, root);
  return backend->open_workspace(backend_settings(policy, config.backends, name), root,
                                 workspace_rules(policy));
}

// Runs one file operation on the workspace the options name.
template <class F>
void with_workspace(const FsOptions& o, F&& op) {
  run_verb(kFsFailed, [&] {
    if (o.backend)
      if (auto files = backend_workspace(o, *o.backend)) {
        op(*files);
        return 0;
      }
    auto root = workspace_of(o.workspace);
    Config config;
    auto registry = make_registry(o.runtime, config);
    Workspace ws(root,
                 local_workspace_rules(policy_of(o.policy, root), *registry, o.runtime, root));
    op(ws);
    return 0;
  });
}

CLI::App* add_verb(CLI::App* fs, const char* name, const char* help, std::shared_ptr<FsOptions> o) {
  auto* v = fs->add_subcommand(name, help);
  v->add_option("PATH", o->path, "a path relative to the workspace")->required();
  v->add_option("--workspace", o->workspace, "the workspace directory (default: current)");
  v->add_option("--policy", o->policy,
                "policy file or preset name for size caps and blocked paths (default: standard)");
  v->add_option("--backend", o->backend,
                "the workspace where this backend runs commands (ssh: on the remote host, over "
                "SFTP); needs --workspace");
  add_runtime_options(v, o->runtime);
  return v;
}

}  // namespace

void register_fs(CLI::App& app) {
  auto* fs = app.add_subcommand("fs", "read and write files beneath a workspace, race-free");
  fs->require_subcommand(1);
  auto o = std::make_shared<FsOptions>();

  add_verb(fs, "read", "print a file", o)->callback([o] {
    with_workspace(*o, [&](WorkspaceFiles& ws) { std::cout << ws.read(o->path); });
  });
  auto* write = add_verb(fs, "write", "replace a file atomically with standard input", o);
  write->add_flag("--parents", o->parents,
                  "create missing parent directories (none on the way may be a symlink)");
  write->callback([o] {
    std::string data{std::istreambuf_iterator<char>(std::cin), {}};
    with_workspace(*o, [&](WorkspaceFiles& ws) { ws.write(o->path, data, {o->parents}); });
  });
  auto* list = add_verb(fs, "list", "list a directory", o);
  list->add_flag("--json", o->json, "print JSON");
  list->callback([o] {
    with_workspace(*o, [&](WorkspaceFiles& ws) { print_list(ws.list(o->path), o->json); });
  });
  add_verb(fs, "remove", "remove a file, symlink or empty directory", o)->callback([o] {
    with_workspace(*o, [&](WorkspaceFiles& ws) { ws.remove(o->path); });
  });
}

}  // namespace cordon::cli
