// `cordon run`: run one command under a policy on a backend that proves it.
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>

#include <boost/json/serialize.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include "run_input.hpp"
#include "run_output.hpp"
#include "runtime_options.hpp"
#include "stop_signals.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct RunArgs {
  RunInput input;
  bool json = false;
  bool verbose = false;
  bool raw = false;
  bool framed = false;
  RuntimeOptions runtime;
};

void finish_plain(const RunOutcome& out, const Registry* registry, bool verbose) {
  std::cout.flush();
  if (registry) print_diagnostics(*registry, std::cerr, out.result.error);
  if (out.result.error) std::cerr << out.result.error->render() << "\n";
  if (out.result.timed_out)
    std::cerr << Error(code::kTimeout, "the command timed out; its whole process tree was killed",
                       "raise limits.timeout in the policy (--timeout can only shorten it)")
                     .render()
              << "\n";
  if (verbose) print_report(out, std::cerr);
}

int run_main(const RunArgs& a) {
  RunOutcome out;
  std::unique_ptr<Registry> registry;
  CollectSink collected;
  PassThroughSink passthrough(a.raw);
  FramedSink framed;
  auto stop = std::make_shared<StopToken>();
  std::optional<StopOnSignals> signals;
  try {
    // Reading --request or --stdin may wait on a pipe or a terminal: until there is a run to
    // stop, a signal ends cordon as it ends any reader (the handlers would restart the read).
    Invocation inv = build_invocation(a.input);
    signals.emplace(stop, a.framed);
    inv.stop = stop;
    Config config;
    registry = make_registry(a.runtime, config);
    apply_config(inv, config, a.runtime);
    OutputSink& sink = a.framed ? static_cast<OutputSink&>(framed)
                       : a.json ? static_cast<OutputSink&>(collected)
                                : static_cast<OutputSink&>(passthrough);
    out = run_invocation(*registry, inv, sink);
  } catch (const ErrorList& e) {
    out.result.error = as_one_error(e);
  } catch (const Error& e) {
    out.result.error = e;
  }
  passthrough.finish();
  if (a.framed) {
    if (registry) print_diagnostics(*registry, std::cerr, out.result.error);
    framed.finish(run_json(out, collected));
  } else if (a.json) {
    if (registry) print_diagnostics(*registry, std::cerr, out.result.error);
    std::cout << boost::json::serialize(run_json(out, collected)) << "\n";
  } else {
    finish_plain(out, registry.get(), a.verbose);
  }
  // Stopped by a signal to cordon: exit as a shell reports a command killed by it.
  int sig = signals ? signals->received() : 0;
  int status = sig != 0 ? 128 + sig : out.result.cli_status();
  leave_after_run(status);
  return status;
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run =
      app.add_subcommand("run", "run a command under a policy, on a backend that proves it");
  auto& in = args->input;
  run->add_option("--policy", in.policy,
                  "policy file (TOML or YAML) or preset name (default: standard)");
  run->add_option("--backend", in.backend, "run on this backend or refuse (default: dispatch)");
  run->add_option("--workspace", in.workspace, "directory the command runs in (default: .)");
  run->add_option("--timeout", in.timeout,
                  "shorten limits.timeout (never lengthen it), e.g. 90s, 5m");
  run->add_option("--stdin", in.stdin_file,
                  "feed FILE ('-': cordon's stdin) to the command; "
                  "default /dev/null");
  run->add_flag("--json", args->json, "print one JSON object with the result, nothing else");
  run->add_flag("--framed", args->framed,
                "write the command's stdout and stderr, then the --json result, as frames on "
                "stdout: the stream a remote cordon's caller reads (see the README)")
      ->excludes(run->get_option("--json"));
  run->add_flag("-v,--verbose", args->verbose, "print the enforcement report after the run");
  run->add_flag("--raw", args->raw,
                "on a terminal too, write the command's output unchanged (its escape sequences "
                "act on the terminal); by default they are shown as text there");
  add_runtime_options(run, args->runtime);
  run->add_option("--command", in.command,
                  "one command string, split by POSIX word rules (never a shell unless the "
                  "policy's process.shell asks for one)");
  run->add_option("--request", in.request, "a JSON request FILE ('-': stdin); see the README");
  run->add_option("PROGRAM", in.argv, "PROGRAM ARGS... (after --)");
  run->callback([args] { set_exit_status(run_main(*args)); });
}

}  // namespace cordon::cli
