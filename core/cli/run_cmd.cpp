// `cordon run`: run one command under a policy on a backend that proves it.
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>

#include <boost/json/serialize.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "run_output.hpp"
#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

constexpr std::size_t kMaxStdinBytes = 64 * 1024 * 1024;

struct RunArgs {
  std::optional<std::string> policy, backend, workspace, timeout, stdin_file;
  bool json = false;
  bool verbose = false;
  RuntimeOptions runtime;
  std::vector<std::string> argv;
};

Error one_error(const ErrorList& list) {
  const auto& first = list.errors().front();
  std::string text;
  for (const auto& e : list.errors()) text += (text.empty() ? "" : "\n") + std::string(e.what());
  return Error(first.code(), text, first.hint());
}

std::string read_stdin_source(const std::string& source) {
  std::ifstream file;
  if (source != "-") file.open(source, std::ios::binary);
  std::istream& in = source == "-" ? std::cin : file;
  if (!in)
    throw Error(code::kBadArgument, "cannot read --stdin '" + source + "'",
                "pass a readable file, or '-' for cordon's own stdin");
  std::string data;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxStdinBytes)
      throw Error(code::kBadArgument, "--stdin '" + source + "' is larger than 64 MiB");
  }
  return data;
}

Invocation invocation_of(const RunArgs& a) {
  Invocation inv;
  inv.workspace = workspace_of(a.workspace);
  if (a.timeout) {
    inv.timeout = parse_duration(*a.timeout);
    if (!inv.timeout)
      throw Error(code::kBadArgument, "bad --timeout '" + *a.timeout + "'",
                  "write a duration such as '250ms', '90s', '5m', '1h' or whole seconds");
  }
  if (a.argv.empty() || a.argv.front().empty())
    throw Error(code::kBadArgument, "no program to run", "cordon run [OPTIONS] -- PROGRAM ARGS");
  inv.policy = policy_of(a.policy, inv.workspace);
  inv.argv = a.argv;
  inv.backend = a.backend;
  if (a.stdin_file) inv.stdin_data = read_stdin_source(*a.stdin_file);
  inv.caller_env = caller_environment();
  inv.host_home = host_home();
  return inv;
}

void finish_plain(const RunOutcome& out, const Registry* registry, bool verbose) {
  std::cout.flush();
  if (registry) print_diagnostics(*registry, std::cerr, out.result.error);
  if (out.result.error) std::cerr << out.result.error->render() << "\n";
  if (out.result.timed_out)
    std::cerr << Error(code::kTimeout, "the command timed out; its whole process tree was killed",
                       "raise limits.timeout in the policy or pass --timeout")
                     .render()
              << "\n";
  if (verbose) print_report(out, std::cerr);
}

int run_main(const RunArgs& a) {
  RunOutcome out;
  std::unique_ptr<Registry> registry;
  CollectSink collected;
  PassThroughSink passthrough;
  try {
    Invocation inv = invocation_of(a);
    Config config;
    registry = make_registry(a.runtime, config);
    inv.config_backends = config.backends;
    out =
        run_invocation(*registry, inv, a.json ? static_cast<OutputSink&>(collected) : passthrough);
  } catch (const ErrorList& e) {
    out.result.error = one_error(e);
  } catch (const Error& e) {
    out.result.error = e;
  }
  if (a.json) {
    if (registry) print_diagnostics(*registry, std::cerr, out.result.error);
    std::cout << boost::json::serialize(run_json(out, collected)) << "\n";
  } else {
    finish_plain(out, registry.get(), a.verbose);
  }
  return out.result.cli_status();
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run =
      app.add_subcommand("run", "run a command under a policy, on a backend that proves it");
  run->add_option("--policy", args->policy,
                  "policy file, TOML or YAML (default: preset 'standard')");
  run->add_option("--backend", args->backend, "run on this backend or refuse (default: dispatch)");
  run->add_option("--workspace", args->workspace, "directory the command runs in (default: .)");
  run->add_option("--timeout", args->timeout, "replace limits.timeout, e.g. 90s, 5m");
  run->add_option("--stdin", args->stdin_file,
                  "feed FILE ('-': cordon's stdin) to the command; "
                  "default /dev/null");
  run->add_flag("--json", args->json, "print one JSON object with the result, nothing else");
  run->add_flag("-v,--verbose", args->verbose, "print the enforcement report after the run");
  add_runtime_options(run, args->runtime);
  run->add_option("command", args->argv, "PROGRAM ARGS... (after --)")->required();
  run->callback([args] { set_exit_status(run_main(*args)); });
}

}  // namespace cordon::cli
