// Shell modes, command strings and the blocked-command check on resolved programs.
#include <cordon/command_source.hpp>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/shell_syntax.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

namespace cordon {

namespace fs = std::filesystem;

namespace {

// Looseness order: off < sandboxed < unsafe.
int looseness(ShellMode m) { return static_cast<int>(m); }

const char* kShellPath = "/bin/sh";

// The program `name` resolves to, as exec would find it; empty when it is nowhere.
fs::path resolve_program(const std::string& name, const std::string& path_env,
                         const std::string& workspace) {
  std::error_code ec;
  if (name.find('/') != std::string::npos) {
    fs::path p = fs::path(name).is_absolute() ? fs::path(name) : fs::path(workspace) / name;
    auto real = fs::canonical(p, ec);
    return ec ? p.lexically_normal() : real;
  }
  std::stringstream dirs(path_env);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) {
      auto real = fs::canonical(p, ec);
      return ec ? p : real;
    }
  }
  return {};
}

// True when `program` (as given and as resolved) is what `blocked` names.
bool matches(const std::string& given, const fs::path& resolved, const std::string& blocked,
             const std::string& path_env, const std::string& workspace) {
  if (given == blocked || fs::path(given).filename() == blocked) return true;
  if (resolved.empty()) return false;
  if (resolved.filename() == blocked) return true;
  fs::path target = resolve_program(blocked, path_env, workspace);
  return !target.empty() && target == resolved;
}

void check_one(const std::string& program, const Policy& policy, const std::string& path_env,
               const std::string& workspace) {
  fs::path resolved = resolve_program(program, path_env, workspace);
  for (const auto& blocked : policy.process.blocked_commands) {
    if (!matches(program, resolved, blocked, path_env, workspace)) continue;
    std::string via =
        resolved.empty() || resolved == program ? "" : " (resolves to '" + resolved.string() + "')";
    throw Error(code::kBlockedCommand,
                "program '" + program + "'" + via + " is blocked by process.blocked_commands ('" +
                    blocked + "')",
                "the policy does not allow this program; ask the operator if it is needed");
  }
}

bool is_assignment_word(const std::string& word) {
  auto eq = word.find('=');
  if (eq == 0 || eq == std::string::npos) return false;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return std::isdigit(static_cast<unsigned char>(word[0])) == 0 &&
         std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), name_char);
}

// The first word of each simple command of a shell string, as far as a splitter can tell.
std::vector<std::string> command_heads(const std::string& script) {
  std::vector<std::string> heads;
  std::string current;
  bool at_head = true;
  for (char c : script + ";") {
    if (std::string_view(";&|\n()`").find(c) != std::string_view::npos) {
      if (!current.empty()) heads.push_back(current);
      current.clear();
      at_head = true;
    } else if (c == ' ' || c == '\t') {
      // `FOO=1 sudo x`: an assignment before the program is not the program.
      if (!current.empty() && !is_assignment_word(current))
        heads.push_back(current), at_head = false;
      current.clear();
    } else if (at_head && c != '\'' && c != '"') {
      current += c;
    }
  }
  return heads;
}

}  // namespace

ShellMode effective_shell_mode(const Policy& policy, const char* env_value) {
  ShellMode mode = policy.process.shell;
  if (!env_value) return mode;
  auto asked = parse_shell_mode(env_value);
  if (!asked)
    throw Error(code::kBadArgument,
                std::string(kShellEnv) + "='" + env_value + "' is not a shell mode",
                "use off, sandboxed or unsafe (or unset it)");
  return looseness(*asked) < looseness(mode) ? *asked : mode;
}

PreparedCommand prepare_command(const CommandInput& input, ShellMode mode) {
  PreparedCommand out;
  if (!input.command) {
    out.argv = checked_argv(input.argv);
    return out;
  }
  if (input.command->find('\0') != std::string::npos)
    throw Error(code::kControlChar, "the command string contains a NUL byte");
  if (mode == ShellMode::off) {
    out.argv = split_command(*input.command);
    return out;
  }
  out.argv = {kShellPath, "-c", *input.command};
  if (mode == ShellMode::unsafe) {
    out.shell_unsafe = true;
    out.notes.push_back("shell = unsafe: the command string ran under /bin/sh -c");
    return out;
  }
  out.shell_sandboxed = true;
  const char* clause = "process.shell = \"sandboxed\"";
  out.extra_requirements = {{std::string(cap::fs_write_confine), clause},
                            {std::string(cap::proc_isolate), clause}};
  out.notes.push_back("shell = sandboxed: the command string ran under /bin/sh -c in the sandbox");
  return out;
}

void check_blocked_commands(const std::vector<std::string>& argv, const Policy& policy,
                            const std::string& path_env, const std::string& workspace) {
  if (policy.process.blocked_commands.empty() || argv.empty()) return;
  check_one(argv[0], policy, path_env, workspace);
  bool shell =
      argv.size() >= 3 && fs::path(argv[0]).filename().string().ends_with("sh") && argv[1] == "-c";
  if (shell)
    for (const auto& head : command_heads(argv[2])) check_one(head, policy, path_env, workspace);
}

}  // namespace cordon
