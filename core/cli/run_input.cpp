// From `cordon run`'s arguments or a JSON request to an Invocation.
#include "run_input.hpp"

#include <cordon/command_source.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/request.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>

#include "runtime_options.hpp"

namespace cordon::cli {

namespace {

constexpr std::size_t kMaxInputBytes = 64 * 1024 * 1024;

std::string read_source(const std::string& source, const char* option) {
  std::ifstream file;
  if (source != "-") file.open(source, std::ios::binary);
  std::istream& in = source == "-" ? std::cin : file;
  if (!in)
    throw Error(code::kBadArgument, std::string("cannot read ") + option + " '" + source + "'",
                "pass a readable file, or '-' for cordon's own stdin");
  std::string data;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxInputBytes)
      throw Error(code::kBadArgument,
                  std::string(option) + " '" + source + "' is larger than 64 MiB");
  }
  return data;
}

Duration timeout_of(const std::string& text) {
  auto d = parse_duration(text);
  if (!d)
    throw Error(code::kBadArgument, "bad --timeout '" + text + "'",
                "write a duration such as '250ms', '90s', '5m', '1h' or whole seconds");
  return *d;
}

Duration tightening(const RunInput& in, const Policy& policy, Duration asked, const char* source,
                    const char* code) {
  auto longer = in.job ? job_timeout_loosening(policy, asked, source, code)
                       : timeout_loosening(policy, asked, source, code);
  if (longer) throw *longer;
  return asked;
}

// The request's inline policy is JSON, which is YAML: the YAML loader reads it with locations.
Policy inline_policy(const boost::json::object& o, const std::filesystem::path& workspace) {
  Policy p = load_policy_text(boost::json::serialize(o), "request-policy.yaml", workspace);
  return resolve_paths(std::move(p), PathContext{workspace, host_home()});
}

// Values for env.pass names, from the request; any other name is refused.
void apply_request_env(const RunRequest& req, Invocation& inv) {
  for (const auto& [name, value] : req.env) {
    const auto& pass = inv.policy.env.pass;
    if (std::find(pass.begin(), pass.end(), name) == pass.end())
      throw Error(code::kBadRequest, "request /env/" + name + ": not granted by the policy",
                  "the policy's env.pass must name '" + name + "' for a request to set it");
    inv.caller_env[name] = value;
  }
}

}  // namespace

Invocation build_invocation(const RunInput& in) {
  std::optional<RunRequest> req;
  if (in.request_text)
    req = parse_run_request(*in.request_text);
  else if (in.request)
    req = parse_run_request(read_source(*in.request, "--request"));
  Invocation inv;
  // A request file steers every run started from it: no command may rewrite it.
  if (in.request && *in.request != "-")
    inv.protected_paths.push_back(std::filesystem::absolute(*in.request));
  int sources = !in.argv.empty() + in.command.has_value() + req.has_value();
  if (sources != 1)
    throw Error(code::kBadArgument,
                sources == 0 ? "no program to run"
                             : "give one of: PROGRAM ARGS after '--', "
                               "--command, --request",
                "cordon run [OPTIONS] -- PROGRAM ARGS");
  inv.workspace = workspace_of(req && req->workspace ? req->workspace : in.workspace);
  if (req && req->policy_inline)
    inv.policy = inline_policy(*req->policy_inline, inv.workspace);
  else if (in.loaded_policy && !(req && req->policy_path))
    inv.policy = resolve_paths(*in.loaded_policy, PathContext{inv.workspace, host_home()});
  else
    inv.policy = policy_of(req && req->policy_path ? req->policy_path : in.policy, inv.workspace);
  inv.backend = req && req->backend ? req->backend : in.backend;
  // Each timeout only shortens the policy's: a request never loosens what the operator set.
  if (in.timeout)
    inv.timeout =
        tightening(in, inv.policy, timeout_of(*in.timeout), "--timeout", code::kBadArgument);
  if (req && req->timeout)
    inv.timeout = tightening(in, inv.policy, *req->timeout, "request /timeout", code::kBadRequest);
  if (in.stdin_file) inv.stdin_data = read_source(*in.stdin_file, "--stdin");
  if (req && req->stdin_data) inv.stdin_data = req->stdin_data;
  inv.caller_env = caller_environment();
  inv.host_home = host_home();
  if (req) apply_request_env(*req, inv);

  CommandInput cmd;
  if (req) {
    cmd.argv = req->argv;
    cmd.command = req->command;
  } else if (in.command) {
    cmd.command = in.command;
  } else {
    for (const auto& a : in.argv) cmd.argv.push_back(trusted(a));
  }
  auto prepared = prepare_command(cmd, effective_shell_mode(inv.policy, std::getenv(kShellEnv)));
  auto env = granted_environment(inv.policy, inv.caller_env);
  check_blocked_commands(prepared.argv, inv.policy, env["PATH"], inv.workspace.string());
  inv.argv = std::move(prepared.argv);
  inv.shell_unsafe = prepared.shell_unsafe;
  inv.extra_requirements = std::move(prepared.extra_requirements);
  if (prepared.shell_sandboxed) inv.notes = std::move(prepared.notes);
  return inv;
}

JobSpec job_spec(Invocation inv) {
  JobSpec spec;
  spec.policy = std::move(inv.policy);
  spec.argv = std::move(inv.argv);
  spec.workspace = std::move(inv.workspace);
  spec.backend = std::move(inv.backend);
  spec.stdin_data = std::move(inv.stdin_data);
  spec.shell_unsafe = inv.shell_unsafe;
  spec.timeout = inv.timeout;
  spec.protected_paths = std::move(inv.protected_paths);
  return spec;
}

}  // namespace cordon::cli
