// Checks across keys: settings that each look fine but together say two opposite things.
#include "policy_keys.hpp"

namespace cordon::detail {

namespace {

// `rest` ("", "/x/../y", "/../z") normalised under a root token: "", "/y", "/../z". A leading
// ".." is kept: it leaves the root, and the token may stand for any directory.
std::string rooted(std::string_view rest) {
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  std::string normal = normal_path(rest);
  return normal == "." ? "" : "/" + normal;
}

// A path in a form that does not depend on `~` or `{workspace}` being expanded: the leading
// token kept as it is, the rest lexically normalised, relative paths under `{workspace}`.
std::string comparable(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) return "~" + rooted(path.substr(1));
  if (path.rfind("{workspace}", 0) == 0) return "{workspace}" + rooted(path.substr(11));
  if (!path.empty() && path[0] == '/') return normal_path(path);
  return "{workspace}" + rooted(path);
}

Mark origin_mark(const Policy& policy, const std::string& key) {
  auto it = policy.origins.find(key);
  if (it == policy.origins.end()) return {};
  return Mark{std::make_shared<const std::string>(it->second.file), it->second.line,
              it->second.column};
}

// Where the first of `keys` not taken from a shipped preset was written (the user's file says
// which to change), else where the first was.
Mark user_mark(const Policy& policy, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = policy.origins.find(key);
    if (it != policy.origins.end() && !it->second.file.starts_with("preset:"))
      return origin_mark(policy, key);
  }
  return origin_mark(policy, *keys.begin());
}

// Read from the tree as written, so that a port outside 1-65535 (refused by the decoder, which
// then keeps no list) does not hide the contradiction next to it: one check reports both.
bool lists_ports(const Node& root, const char* key) {
  const Node* network = root.find("network");
  const Node* ports = network && network->is_table() ? network->find(key) : nullptr;
  return ports && ports->is_array() && !ports->items.empty();
}

void check_ports(const Policy& policy, const Node& root, Diagnostics& diag) {
  if (!policy.network.allow) return;
  for (const char* key : {"connect_ports", "bind_ports"}) {
    if (!lists_ports(root, key)) continue;
    diag.add(code::kContradiction,
             "'network.allow = true' opens the whole network, so 'network." + std::string(key) +
                 "' would be ignored",
             origin_mark(policy, std::string("network.") + key),
             "remove the port lists, or set allow = false to open only those ports");
  }
}

// A shell runs the commands of a string as processes of its own: without subprocesses every
// pipeline fails at run time ("Cannot fork").
void check_shell(const Policy& policy, Diagnostics& diag) {
  if (policy.process.shell == ShellMode::off || policy.process.allow_subprocess) return;
  diag.add(code::kContradiction,
           std::string("'process.shell = \"") + to_string(policy.process.shell) +
               "\"' runs command strings under /bin/sh, which starts a process for each command, "
               "but 'process.allow_subprocess = false' forbids starting one",
           user_mark(policy, {"process.shell", "process.allow_subprocess"}),
           "set shell = \"off\" (argv and plain command strings need no shell), or allow "
           "subprocesses");
}

void check_paths(const Policy& policy, const std::vector<std::string>& granted, const char* key,
                 const char* verb, Diagnostics& diag) {
  std::vector<std::string> blocked;
  for (const auto& b : policy.filesystem.blocked) blocked.push_back(comparable(b));
  for (const auto& g : granted) {
    const std::string path = comparable(g);
    for (std::size_t i = 0; i < blocked.size(); ++i) {
      if (!detail::path_within(path, blocked[i])) continue;
      diag.add(code::kContradiction,
               "path '" + g + "' is both " + verb + " ('filesystem." + key + "') and blocked by '" +
                   policy.filesystem.blocked[i] + "'",
               origin_mark(policy, std::string("filesystem.") + key),
               "remove it from one of the two lists");
      break;
    }
  }
}

void check_programs(const Policy& policy, Diagnostics& diag) {
  for (const auto& program : policy.process.allowed_commands) {
    for (const auto& blocked : policy.process.blocked_commands) {
      if (program != blocked) continue;
      diag.add(code::kContradiction, "program '" + program + "' is both allowed and blocked",
               origin_mark(policy, "process.allowed_commands"),
               "remove it from one of the two lists");
    }
  }
}

}  // namespace

std::vector<Error> warnings_of(const Policy& policy) {
  std::vector<Error> out;
  auto add = [&](const char* key, std::string message, std::string hint) {
    out.emplace_back(code::kPolicyWarning, std::move(message), std::move(hint),
                     origin_mark(policy, key).location());
  };
  if (!policy.network.allow && !policy.network.connect_ports.empty())
    add("network.connect_ports",
        "'network.connect_ports' opens TCP ports while the network is denied, but host names "
        "will not resolve: resolvers are asked over UDP, which stays denied",
        "connect to addresses (or names in /etc/hosts), or set network.allow = true");
  if (!policy.process.blocked_imports.empty())
    add("process.blocked_imports",
        "'process.blocked_imports' is advisory: no kernel can stop an import, so a run is not "
        "refused for it and the command can still import these modules",
        "cordon scan --policy reports such imports in a script before it runs; block what a "
        "module would do (network, paths, commands) to enforce it");
  return out;
}

void check_contradictions(const Policy& policy, const Node& root, Diagnostics& diag) {
  check_ports(policy, root, diag);
  check_shell(policy, diag);
  if (!policy.filesystem.write_host)
    check_paths(policy, policy.filesystem.write, "write", "writable", diag);
  if (!policy.filesystem.read_host)
    check_paths(policy, policy.filesystem.read, "read", "readable", diag);
  check_programs(policy, diag);
}

}  // namespace cordon::detail
