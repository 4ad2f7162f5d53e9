// The tools `cordon mcp` offers an agent: execute_command, read_file, write_file, list_files.
// The operator's policy, backend and workspace are fixed when the server starts and are a
// ceiling: a call may ask for less (a shorter timeout, a subdirectory of the workspace), never
// more. A refusal is a tool result with isError, its CRD code and a remedy a model can act on.
#pragma once

#include <cordon/config.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp_jobs.hpp"
#include "mcp_spill.hpp"
#include "runtime_options.hpp"

namespace cordon::cli::mcp {

/// What the operator fixed on the command line.
struct ServerSetup {
  std::string policy;                  ///< a policy file or preset
  std::optional<std::string> backend;  ///< the backend every call uses, or dispatch's choice
  std::filesystem::path workspace;     ///< canonical
  RuntimeOptions runtime;
  /// The classes of calls the client must approve first (--approve): "shell-unsafe" (a command
  /// the policy runs under /bin/sh), "network" (the policy allows the network), "background",
  /// "write" (write_file), "all".
  std::vector<std::string> approve;
};

/// The approval classes --approve takes.
inline constexpr std::string_view kApprovalClasses[] = {"shell-unsafe", "network", "background",
                                                        "write", "all"};

/// Asks the client to approve `message` (MCP elicitation): true accepted, false declined (or
/// no answer), nullopt when the client cannot be asked at all.
using Ask = std::function<std::optional<bool>(const std::string& message)>;

/// Sends a progress notification carrying output of the command in progress (the request's
/// progressToken is bound in); empty when the client asked for none.
using Progress = std::function<void(std::uint64_t bytes_so_far, const std::string& output)>;

/// Thrown for arguments that do not fit a tool's input schema (JSON-RPC invalid params).
struct InvalidParams : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Every member may be called from any thread: calls run side by side.
class Tools {
 public:
  /// Loads the configuration and the registry once (each backend is probed once, on first
  /// use, for every call after). Throws Error / ErrorList for a bad policy or configuration.
  explicit Tools(ServerSetup setup);

  /// tools/list's `tools`.
  boost::json::array list() const;

  /// tools/call: the CallToolResult of tool `name`. `stop` stops a command (cancellation).
  /// Throws InvalidParams for an unknown tool or arguments of the wrong shape.
  boost::json::object call(const std::string& name, const boost::json::object& args,
                           std::shared_ptr<StopToken> stop, const Progress& progress = {},
                           const Ask& ask = {});

  /// The client went away: background commands are stopped unless `keep`.
  void shutdown(bool keep);

 private:
  boost::json::object execute(const boost::json::object& args, std::shared_ptr<StopToken> stop,
                              const Progress& progress, const Ask& ask);
  /// Throws Error CRD4010 unless the call needs no approval of the classes `classes`, or the
  /// client gave it.
  void approved(const std::vector<std::string>& classes, const std::string& what,
                const Ask& ask) const;
  boost::json::object files(const std::string& name, const boost::json::object& args);

  /// A registry for one call: an idle one (its backends loaded and probed by an earlier call),
  /// or a new one. A registry serves one call at a time; calls side by side get one each.
  std::unique_ptr<Registry> take_registry();
  void give_registry(std::unique_ptr<Registry> registry);

  ServerSetup setup_;
  Config config_;
  std::mutex registries_mutex_;
  std::vector<std::unique_ptr<Registry>> idle_registries_;
  Policy loaded_policy_;  ///< the operator's, as loaded at the start (paths not resolved)
  Policy policy_;         ///< resolved for the workspace: the file tools' caps and blocked paths
  WorkspaceRules file_rules_;  ///< the file tools': the policy's and cordon's own state
  std::unique_ptr<Background> background_;
  std::unique_ptr<Spill> spill_;
};

/// A refusal as a tool result: isError, the code and message, and what a model should do.
boost::json::object refusal(const Error& error);

}  // namespace cordon::cli::mcp
