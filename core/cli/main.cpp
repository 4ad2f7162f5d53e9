// The `cordon` command line: global options, logging set-up and verb registration.
#include <cordon/sdk/log.hpp>
#include <cordon/sdk/version.hpp>

#include <cstdlib>
#include <iostream>
#include <string_view>
#include <utility>

#include "stop_signals.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {
int g_exit_status = 0;
}  // namespace

void set_exit_status(int status) { g_exit_status = status; }

namespace {
RunExitHook g_run_exit_hook = nullptr;
}  // namespace

void set_run_exit_hook(RunExitHook hook) { g_run_exit_hook = hook; }

void leave_after_run(int status) {
  if (g_run_exit_hook) g_run_exit_hook(status);
}

int failure_status(std::string_view verb) { return verb == "run" || verb == "job" ? 125 : 2; }
int exit_status() { return g_exit_status; }

void register_version(CLI::App& app) {
  auto* v = app.add_subcommand("version", "print cordon's version");
  v->callback([] { std::cout << "cordon " << CORDON_VERSION << "\n"; });
}

}  // namespace cordon::cli

namespace {

// Logs go to stderr only, so stdout stays the command's (or the JSON result's).
void setup_logging(const std::string& level) { cordon::log::stderr_logger(level); }

using Register = void (*)(CLI::App&);
constexpr std::pair<std::string_view, Register> kVerbs[] = {
    {"version", cordon::cli::register_version}, {"policy", cordon::cli::register_policy},
    {"run", cordon::cli::register_run},         {"backends", cordon::cli::register_backends},
    {"explain", cordon::cli::register_explain}, {"fs", cordon::cli::register_fs},
    {"job", cordon::cli::register_job},         {"scan", cordon::cli::register_scan},
    {"gc", cordon::cli::register_gc},           {"docker", cordon::cli::register_docker},
    {"certify", cordon::cli::register_certify}, {"serve", cordon::cli::register_serve},
    {"mcp", cordon::cli::register_mcp}};

// A command line that starts with a verb needs only that verb's options: building every verb's
// (about 0.3 ms) is left to the rest (help, global options first, mistakes), whose messages
// list them all.
void register_verbs(CLI::App& app, std::string_view first) {
  for (const auto& [name, add] : kVerbs)
    if (name == first) return add(app);
  for (const auto& [name, add] : kVerbs) add(app);
}

int usage_status(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands())
    if (int status = cordon::cli::failure_status(sub->get_name()); status != 2) return status;
  return 2;
}

}  // namespace

int cordon::cli::main_cli(int argc, char** argv) {
  cordon::cli::default_child_signal();
  CLI::App app{"cordon: run untrusted commands under a declared security policy"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cordon ") + CORDON_VERSION);
  const char* env_level = std::getenv("CORDON_LOG");
  std::string level = env_level && *env_level ? env_level : "warn";
  app.add_option("--log-level", level, "trace, debug, info, warn, error or off (env CORDON_LOG)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.parse_complete_callback([&level] { setup_logging(level); });

  register_verbs(app, argc > 1 ? argv[1] : "");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return usage_status(app);
  }
  return cordon::cli::exit_status();
}
