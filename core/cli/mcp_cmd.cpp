// `cordon mcp`: cordon as a Model Context Protocol server on stdio, for agent hosts. One
// long-lived process: the policy, backend and workspace fixed by the operator at start, the
// backends probed once, each tools/call a run (or a file operation) under that ceiling.
#include <cordon/sdk/log.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp_rpc.hpp"
#include "mcp_tools.hpp"
#include "mcp_transport.hpp"
#include "verbs.hpp"

namespace cordon::cli::mcp {

namespace {

namespace json = boost::json;

}  // namespace

struct McpArgs {
  std::string policy;
  std::optional<std::string> backend;
  std::optional<std::string> workspace;
  bool keep_jobs = false;
  std::vector<std::string> approve;
  RuntimeOptions runtime;
};

namespace {

json::object initialize_result(const json::object& params) {
  std::string asked;
  if (const auto* v = params.if_contains("protocolVersion"); v && v->is_string())
    asked = std::string(v->as_string());
  return {{"protocolVersion", negotiate(asked)},
          {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}},
                                        {"logging", json::object{}}}},
          {"serverInfo", json::object{{"name", "cordon"}, {"version", CORDON_VERSION}}},
          {"instructions",
           "Commands run in cordon's sandbox under the operator's policy, in the workspace. "
           "Pass argv (or a command without shell operators); write files with write_file."}};
}

// One request; its answer (nullopt: none, the client cancelled it).
// What the client said of itself in initialize.
struct Client {
  bool elicitation = false;
  std::atomic<int> asked{0};
  /// cordon's log lines at or above this go to the client (notifications/message).
  std::shared_ptr<std::atomic<log::Level>> log_level =
      std::make_shared<std::atomic<log::Level>>(log::Level::warn);
};

// MCP's levels (those of syslog) onto cordon's: notice is info; alert and emergency are error.
std::optional<log::Level> log_level(std::string_view name) {
  if (name == "debug") return log::Level::debug;
  if (name == "info" || name == "notice") return log::Level::info;
  if (name == "warning") return log::Level::warn;
  if (name == "error" || name == "critical" || name == "alert" || name == "emergency")
    return log::Level::error;
  return std::nullopt;
}

const char* mcp_level(log::Level level) {
  switch (level) {
    case log::Level::trace:
    case log::Level::debug:
      return "debug";
    case log::Level::info:
      return "info";
    case log::Level::warn:
      return "warning";
    case log::Level::error:
      break;
  }
  return "error";
}

// cordon's log, also to the client: a line on stderr is seen by no one when an agent host
// started the server.
void forward_log(Out& out, const Client& client) {
  auto logger = log::default_logger();
  if (!logger) return;
  log::add_forwarder(
      *logger,
      [&out](log::Level level, std::string_view line) {
        out.line(notification_line(
            "notifications/message",
            {{"level", mcp_level(level)}, {"logger", "cordon"}, {"data", std::string(line)}}));
      },
      client.log_level);
}

// Asks the client through elicitation/create; fails closed (false) on anything but "accept".
Ask asker(Client& client, Inbox& inbox) {
  if (!client.elicitation) return {};
  return [&client, &inbox](const std::string& message) -> std::optional<bool> {
    json::value id(json::string("cordon-approval-" + std::to_string(++client.asked)));
    json::object schema{{"type", "object"},
                        {"properties", json::object{{"approve", json::object{
                                                                    {"type", "boolean"},
                                                                    {"title", "Approve"},
                                                                }}}}};
    auto got = inbox.ask(
        id,
        request_line(id, "elicitation/create", {{"message", message}, {"requestedSchema", schema}}),
        std::chrono::seconds(300));
    if (!got) return false;
    const auto* action = got->if_contains("action");
    return action && action->is_string() && action->as_string() == "accept";
  };
}

std::optional<std::string> answer(const Message& m, Tools& tools, Inbox& inbox, Out& out,
                                  Client& client) {
  if (m.method == "initialize") {
    if (const auto* caps = m.params.if_contains("capabilities"); caps && caps->is_object())
      client.elicitation = caps->as_object().contains("elicitation");
    return result_line(m.id, initialize_result(m.params));
  }
  if (m.method == "ping") return result_line(m.id, json::object{});
  if (m.method == "logging/setLevel") {
    const auto* level = m.params.if_contains("level");
    auto wanted = level && level->is_string() ? log_level(level->as_string()) : std::nullopt;
    if (!wanted)
      return error_line(m.id, kInvalidParams,
                        "logging/setLevel needs a level: debug, info, notice, warning, error, "
                        "critical, alert or emergency");
    client.log_level->store(*wanted);
    return result_line(m.id, json::object{});
  }
  if (m.method == "tools/list") return result_line(m.id, json::object{{"tools", tools.list()}});
  if (m.method != "tools/call")
    return error_line(m.id, kMethodNotFound, "no method '" + m.method + "'");
  const auto* name = m.params.if_contains("name");
  const auto* args = m.params.if_contains("arguments");
  if (!name || !name->is_string() || (args && !args->is_object()))
    return error_line(m.id, kInvalidParams, "tools/call needs a tool name and an arguments object");
  auto stop = std::make_shared<StopToken>();
  inbox.bind(m.id, stop);
  Progress progress;
  if (const auto* meta = m.params.if_contains("_meta"); meta && meta->is_object())
    if (const auto* token = meta->as_object().if_contains("progressToken"))
      progress = [&out, token = *token](std::uint64_t bytes, const std::string& output) {
        out.line(notification_line(
            "notifications/progress",
            {{"progressToken", token}, {"progress", bytes}, {"message", output}}));
      };
  std::optional<std::string> reply;
  try {
    json::object result =
        tools.call(std::string(name->as_string()), args ? args->as_object() : json::object{}, stop,
                   progress, asker(client, inbox));
    reply = result_line(m.id, result);
  } catch (const InvalidParams& e) {
    reply = error_line(m.id, kInvalidParams, e.what());
  } catch (const std::exception& e) {
    reply = error_line(m.id, kInternalError, e.what());
  }
  if (inbox.unbind(m.id)) return std::nullopt;
  return reply;
}

}  // namespace

int mcp_main(const McpArgs& a) {
  for (const auto& c : a.approve)
    if (std::find(std::begin(kApprovalClasses), std::end(kApprovalClasses), c) ==
        std::end(kApprovalClasses))
      throw Error(code::kBadArgument, "--approve: unknown class '" + c + "'",
                  "the classes: shell-unsafe, network, background, write, all");
  ServerSetup setup{a.policy, a.backend, workspace_of(a.workspace), a.runtime, a.approve};
  Tools tools(std::move(setup));
  // Both outlive this function (the inbox's reader and the log's forwarder may still use them),
  // held by static pointers, as the inbox is, so that they are never destroyed nor leaked.
  static Out* const out_ptr = new Out;
  static Client* const client_ptr = new Client;
  Out& out = *out_ptr;
  Client& client = *client_ptr;
  forward_log(out, client);
  static Inbox* const inbox = new Inbox(out);  // its reader may outlive this function
  // tools/call on the workers; everything else is answered here, in order.
  Workers workers([&](const Message& m) {
    if (auto reply = answer(m, tools, *inbox, out, client)) out.line(*reply);
  });
  inbox->route_calls([&workers](Message m) { workers.submit(std::move(m)); });
  struct Unroute {  // before the workers go, however this function is left
    Inbox& inbox;
    ~Unroute() { inbox.route_calls(nullptr); }
  } unroute{*inbox};
  while (auto m = inbox->next()) {
    if (m->kind == Message::Kind::invalid) {
      out.line(error_line(m->id, kInvalidRequest, m->problem));
    } else if (m->kind == Message::Kind::request && m->method == "tools/call") {
      workers.submit(std::move(*m));
    } else if (m->kind == Message::Kind::request) {
      if (auto reply = answer(*m, tools, *inbox, out, client)) out.line(*reply);
    }  // notifications and responses to nothing of ours: nothing to say
  }
  // stdin has ended and every call in progress was killed: wait for them all to answer.
  workers.finish();
  tools.shutdown(a.keep_jobs);
  return 0;
}

}  // namespace cordon::cli::mcp

namespace cordon::cli {

void register_mcp(CLI::App& app) {
  using mcp::McpArgs;
  auto args = std::make_shared<McpArgs>();
  auto* mcp = app.add_subcommand(
      "mcp", "serve the Model Context Protocol on stdio: sandboxed commands and files for agents");
  mcp->add_option("--policy", args->policy,
                  "the operator's policy (file or preset): the ceiling of every call")
      ->required();
  mcp->add_option("--backend", args->backend, "the backend every call uses (default: dispatch)");
  mcp->add_option("--workspace", args->workspace, "the workspace (default: current directory)");
  mcp->add_option("--approve", args->approve,
                  "classes of calls the client must approve first, through MCP elicitation "
                  "(refused when it cannot be asked): shell-unsafe, network, background, write, "
                  "all")
      ->delimiter(',');
  mcp->add_flag("--keep-jobs", args->keep_jobs,
                "leave background commands running when the client goes away");
  add_runtime_options(mcp, args->runtime);
  mcp->callback([args] { run_verb(2, [&] { return mcp::mcp_main(*args); }); });
}

}  // namespace cordon::cli
