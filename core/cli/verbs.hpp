// Registration of the `cordon` verbs; each verb lives in its own file.
#pragma once

#include <CLI/CLI.hpp>

#include <string_view>

namespace cordon::cli {

/// `cordon version`.
void register_version(CLI::App& app);
/// `cordon policy check|show|requirements|schema`.
void register_policy(CLI::App& app);
/// `cordon policy compile` (policy_compile.cpp), added by register_policy.
void add_policy_compile(CLI::App* policy);
/// `cordon run`.
void register_run(CLI::App& app);
/// `cordon backends`.
void register_backends(CLI::App& app);
/// `cordon explain`.
void register_explain(CLI::App& app);

/// `cordon scan`.
void register_scan(CLI::App& app);
/// `cordon fs read|write|list|remove`.
void register_fs(CLI::App& app);
/// `cordon serve --framed`: many runs over one stream, for a cordon on another machine.
void register_serve(CLI::App& app);

/// `cordon mcp`: the Model Context Protocol on stdio, for agent hosts.
void register_mcp(CLI::App& app);

/// `cordon job ...`.
void register_job(CLI::App& app);

/// `cordon gc [--backend NAME]`.
void register_gc(CLI::App& app);
/// `cordon certify --backend NAME`.
void register_certify(CLI::App& app);
/// `cordon docker gc`, the alias of `cordon gc --backend docker`.
void register_docker(CLI::App& app);

/// The whole command line: parses `argv`, runs the verb, returns cordon's exit status. Both
/// executables (the front end in front/ and the full one) call it from their main().
int main_cli(int argc, char** argv);

/// The status cordon exits with when it fails before running anything for `verb`: `run` and
/// `job` keep the 125 "cordon failed before exec" convention, other verbs exit 2.
int failure_status(std::string_view verb);

/// Set by a verb's callback: the status `cordon` exits with.
void set_exit_status(int status);
int exit_status();

/// Called by `cordon run` with its exit status once the run is over and everything it prints
/// is written, instead of returning through the command line's and the run's destructors
/// (null: none, the default). The front end sets one that exits at once.
using RunExitHook = void (*)(int status);
void set_run_exit_hook(RunExitHook hook);
/// Calls the hook, if one is set.
void leave_after_run(int status);

}  // namespace cordon::cli
