// The tools of `cordon mcp`: their schemas, and each call turned into what `cordon run` and
// `cordon fs` do.
#include "mcp_tools.hpp"

#include "capped_sink.hpp"

#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/request.hpp>
#include <cordon/runner.hpp>
#include <cordon/workspace.hpp>

#include <algorithm>

#include "run_input.hpp"
#include "run_output.hpp"
#include "runtime_options.hpp"

namespace cordon::cli::mcp {

namespace json = boost::json;

namespace {

// What a model should do about a refusal, by its code.
std::string remedy(const std::string& code, const std::string& message) {
  if (code == "CRD4001")
    return message.find('>') != std::string::npos
               ? "write the file with write_file instead of a `>` redirection, or split the "
                 "command into separate calls"
               : "split this into separate calls, one program each, or pass argv instead of a "
                 "command string";
  if (code == "CRD4002") return "put '--' before untrusted operands, or pass './NAME' for a file";
  if (code == "CRD4005") return "this program is blocked by the operator's policy: use another";
  if (code == "CRD4006" || code == "CRD4007")
    return "ask for less: a timeout no longer than the policy's, a path inside the workspace";
  if (code == "CRD4004" || code == "CRD4008")
    return "use a relative path inside the workspace that the policy does not block";
  if (code == "CRD4010") return "the operator's approval rule refused this call: do not retry it";
  if (code.rfind("CRD1", 0) == 0)
    return "the sandbox cannot enforce what this needs here: ask the operator, do not retry";
  return "read the message, change the call, and try again";
}

std::string string_arg(const json::object& args, const char* key, bool required) {
  const auto* v = args.if_contains(key);
  if (!v) {
    if (required) throw InvalidParams(std::string("missing argument '") + key + "'");
    return "";
  }
  if (!v->is_string()) throw InvalidParams(std::string("'") + key + "' must be a string");
  return std::string(v->as_string());
}

// A call's directory: the workspace, or a subdirectory of it named relatively (never wider).
std::string directory_of(const std::filesystem::path& workspace, const std::string& cwd) {
  if (cwd.empty() || cwd == ".") return workspace.string();
  std::filesystem::path rel(cwd);
  if (rel.is_absolute())
    throw Error(code::kPathEscape, "cwd '" + cwd + "' is absolute",
                "give a directory relative to the workspace");
  for (const auto& part : rel)
    if (part == "..")
      throw Error(code::kPathEscape, "cwd '" + cwd + "' climbs out of the workspace with '..'",
                  "give a directory inside the workspace");
  return (workspace / rel).lexically_normal().string();
}

// Keeps the output for the result and, when the client asked for progress, sends what arrived
// at most every 200 ms (and what is left at the end) as it runs.
class ProgressSink final : public OutputSink {
 public:
  ProgressSink(OutputSink& keep, const Progress& progress) : keep_(keep), progress_(progress) {}
  void write(Stream stream, std::string_view chunk) override {
    keep_.write(stream, chunk);
    if (!progress_) return;
    total_ += chunk.size();
    pending_.append(chunk);
    if (std::chrono::steady_clock::now() - last_ >= std::chrono::milliseconds(200)) flush();
  }
  void flush() {
    if (!progress_ || pending_.empty()) return;
    progress_(total_, is_utf8(pending_) ? pending_ : std::string("[output that is not UTF-8]"));
    pending_.clear();
    last_ = std::chrono::steady_clock::now();
  }

 private:
  OutputSink& keep_;
  const Progress& progress_;
  std::uint64_t total_ = 0;
  std::string pending_;
  std::chrono::steady_clock::time_point last_{};
};

// `network`: false narrows the operator's network clause to none for this call; true only
// restates what the policy allows, and asking for more than it allows is refused.
void narrow_network(const json::object& args, Policy& policy) {
  const auto* v = args.if_contains("network");
  if (!v) return;
  if (!v->is_bool()) throw InvalidParams("'network' must be true or false");
  if (!v->as_bool()) {
    policy.network.allow = false;
    policy.network.connect_ports.clear();
    policy.network.bind_ports.clear();
  } else if (!policy.network.allow) {
    throw Error(code::kBadRequest,
                "this call asks for the network, and the operator's policy '" + policy.name +
                    "' denies it (network.allow = false)",
                "a call may only narrow the policy: run it without network");
  }
}

json::object text_result(const std::string& text, bool error) {
  return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
          {"isError", error}};
}

}  // namespace

json::object refusal(const Error& error) {
  std::string code = error.code();
  std::string text = code + ": " + error.message();
  if (!error.hint().empty()) text += "\nhint: " + error.hint();
  text += "\nwhat to do: " + remedy(code, error.message());
  // No structuredContent: a client checks it against the tool's output schema, which describes
  // a run; the code leads the text.
  return text_result(text, true);
}

Tools::Tools(ServerSetup setup) : setup_(std::move(setup)) {
  idle_registries_.push_back(make_registry(setup_.runtime, config_));
  // Loaded once: a call runs under the policy as it was when the server started, whatever the
  // file says later.
  loaded_policy_ = load_policy(setup_.policy);
  policy_ = resolve_paths(loaded_policy_, PathContext{setup_.workspace, host_home()});
  JobManagerOptions jobs;
  for (const auto& d : setup_.runtime.plugin_dirs) jobs.plugin_dirs.emplace_back(d);
  if (setup_.runtime.config) jobs.config = *setup_.runtime.config;
  background_ = std::make_unique<Background>(std::move(jobs));
  auto jobs_dir = default_job_state_dir();
  spill_ = std::make_unique<Spill>(jobs_dir.empty() ? jobs_dir : jobs_dir.parent_path() / "mcp");
  std::vector<std::filesystem::path> spill;
  if (!spill_->dir().empty()) spill.push_back(spill_->dir());
  file_rules_ = local_workspace_rules(policy_, *idle_registries_.back(), setup_.runtime,
                                      setup_.workspace, spill);
}

std::unique_ptr<Registry> Tools::take_registry() {
  {
    std::lock_guard lock(registries_mutex_);
    if (!idle_registries_.empty()) {
      auto r = std::move(idle_registries_.back());
      idle_registries_.pop_back();
      return r;
    }
  }
  Config config;  // the same file, read again: the first registry's is config_
  return make_registry(setup_.runtime, config);
}

void Tools::give_registry(std::unique_ptr<Registry> registry) {
  std::lock_guard lock(registries_mutex_);
  idle_registries_.push_back(std::move(registry));
}

void Tools::shutdown(bool keep) {
  if (!keep) background_->stop_all();
}

json::object Tools::call(const std::string& name, const json::object& args,
                         std::shared_ptr<StopToken> stop, const Progress& progress,
                         const Ask& ask) {
  try {
    if (name == "execute_command") return execute(args, std::move(stop), progress, ask);
    if (name == "write_file")
      approved({"write"}, "write the file " + string_arg(args, "path", true), ask);
    if (name == "read_file" || name == "write_file" || name == "list_files")
      return files(name, args);
    if (name == "get_command_output") {
      const auto* id = args.if_contains("process_id");
      if (id && id->is_string() && spill_->owns(std::string(id->as_string()))) {
        const auto* since = args.if_contains("since");
        if (since && (!since->is_number() || since->to_number<double>() < 0))
          throw InvalidParams("'since' must be a byte offset, 0 or more");
        auto from = since ? static_cast<std::uint64_t>(since->to_number<double>()) : 0;
        json::object r = spill_->read(std::string(id->as_string()), from);
        std::string text = r.contains("output") ? std::string(r["output"].as_string())
                                                : "[not UTF-8: see output_base64]";
        return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                {"structuredContent", std::move(r)},
                {"isError", false}};
      }
      return background_->output(args);
    }
    if (name == "stop_command") return background_->stop(args);
    if (name == "list_commands") return background_->list();
  } catch (const ErrorList& e) {
    return refusal(as_one_error(e));
  } catch (const Error& e) {
    return refusal(e);
  }
  throw InvalidParams("no tool named '" + name + "'");
}

void Tools::approved(const std::vector<std::string>& classes, const std::string& what,
                     const Ask& ask) const {
  std::string needs;
  for (const auto& c : classes)
    for (const auto& wanted : setup_.approve)
      if (wanted == c || wanted == "all") needs = c;
  if (needs.empty() &&
      std::find(setup_.approve.begin(), setup_.approve.end(), "all") != setup_.approve.end())
    needs = "all";
  if (needs.empty()) return;
  std::optional<bool> answer =
      ask ? ask("cordon asks your approval (" + needs + "): " + what) : std::nullopt;
  if (!answer)
    throw Error(code::kNotApproved,
                "the operator requires approval for " + needs +
                    " calls, and this client cannot "
                    "be asked (it declared no elicitation capability)",
                "do not retry: this call is refused here");
  if (!*answer)
    throw Error(code::kNotApproved, "the user declined to approve this call (" + needs + ")",
                "do not retry the same call");
}

json::object Tools::execute(const json::object& args, std::shared_ptr<StopToken> stop,
                            const Progress& progress, const Ask& ask) {
  json::object request{
      {"workspace", directory_of(setup_.workspace, string_arg(args, "cwd", false))}};
  const auto* argv = args.if_contains("argv");
  const auto* command = args.if_contains("command");
  if (!argv == !command) throw InvalidParams("give exactly one of 'command' and 'argv'");
  if (argv) request["argv"] = *argv;
  if (command) request["command"] = *command;
  if (const auto* t = args.if_contains("timeout")) {
    if (!t->is_number() || t->to_number<double>() <= 0)
      throw InvalidParams("'timeout' must be a positive number of seconds");
    auto ms = static_cast<long long>(t->to_number<double>() * 1000 + 0.5);
    request["timeout"] = std::to_string(ms < 1 ? 1 : ms) + "ms";
  }
  if (args.contains("stdin")) request["stdin"] = string_arg(args, "stdin", true);
  if (setup_.backend) request["backend"] = *setup_.backend;
  const auto* background = args.if_contains("run_in_background");
  if (background && !background->is_bool())
    throw InvalidParams("'run_in_background' must be true or false");
  RunInput in;
  in.request_text = json::serialize(request);
  in.loaded_policy = &loaded_policy_;
  in.job = background && background->as_bool();
  Invocation inv = build_invocation(in);
  narrow_network(args, inv.policy);
  std::vector<std::string> classes;
  if (inv.shell_unsafe) classes.push_back("shell-unsafe");
  if (inv.policy.network.allow) classes.push_back("network");
  if (in.job) classes.push_back("background");
  std::string shown;
  for (const auto& a : inv.argv) shown += (shown.empty() ? "" : " ") + a;
  approved(classes, "run `" + shown + "`", ask);
  if (in.job) return background_->start(inv);
  inv.stop = std::move(stop);
  apply_config(inv, config_, setup_.runtime);
  // The run passes everything on (up to the spill's bound); the result keeps head and tail
  // under the policy's cap, and the spill keeps the whole.
  CollectSink collected;
  detail::CappedSink kept(collected, inv.policy.limits.max_output_bytes);
  ProgressSink progressing(kept, progress);
  std::unique_ptr<SpillSink> spilling;
  if (!spill_->dir().empty()) {
    spilling = spill_->sink(progressing, inv.policy.limits.max_output_bytes);
    inv.policy.limits.max_output_bytes = kSpillMax;
    inv.protected_paths.push_back(spill_->dir());
  }
  auto registry = take_registry();
  OutputSink& sink = spilling ? static_cast<OutputSink&>(*spilling) : progressing;
  RunOutcome out = run_invocation(*registry, inv, sink);
  give_registry(std::move(registry));
  progressing.flush();
  // The spill's id when its file was made, closed now.
  const std::string spill_id = spilling && spilling->made() ? spilling->id() : std::string();
  const bool spill_failed = spilling && spilling->failed();
  spilling.reset();
  kept.finish();
  if (out.result.error && out.backend.empty()) {
    if (!spill_id.empty()) spill_->drop(spill_id);
    return refusal(*out.result.error);
  }
  out.result.stdout_truncated = out.result.stdout_truncated || kept.truncated(Stream::out);
  out.result.stderr_truncated = out.result.stderr_truncated || kept.truncated(Stream::err);
  json::object structured = run_json(out, collected);
  const bool cut = kept.truncated(Stream::out) || kept.truncated(Stream::err);
  const bool spilled = !spill_id.empty() && cut;
  if (spilled)
    structured["process_id"] = spill_id;
  else if (!spill_id.empty())
    spill_->drop(spill_id);
  std::string text = collected.out;
  if (!collected.err.empty())
    text += (text.empty() ? "" : "\n") + std::string("[stderr]\n") + collected.err;
  text += "\n[" +
          (out.result.timed_out ? std::string("timed out")
           : out.result.signal  ? "killed by signal " + std::to_string(out.result.signal)
                                : "exit code " + std::to_string(out.result.exit_code)) +
          "]";
  if (out.result.error) {
    const Error& e = *out.result.error;
    text = e.code() + std::string(": ") + e.message() +
           (e.hint().empty() ? "" : "\nhint: " + e.hint()) + "\n" + text;
  }
  if (spilled)
    text +=
        "\n[the output passed the cap: all of it is kept; read it with get_command_output, "
        "process_id \"" +
        spill_id + "\", since 0, then each next_offset]";
  else if (spill_failed && cut)
    text +=
        "\n[the output passed the cap, and the server could not keep the rest: its spill "
        "file could not be made]";
  auto r = text_result(text, out.result.error.has_value());
  r["structuredContent"] = std::move(structured);
  return r;
}

json::object Tools::files(const std::string& name, const json::object& args) {
  std::string path = string_arg(args, "path", name != "list_files");
  Workspace ws(setup_.workspace, file_rules_);
  if (name == "read_file") {
    std::string data = ws.read(path);
    if (!is_utf8(data))
      return refusal(Error(code::kWorkspaceIo, "'" + path + "' is not UTF-8 text",
                           "read it with execute_command (e.g. base64 " + path + ")"));
    return text_result(data, false);
  }
  if (name == "write_file") {
    std::string content = string_arg(args, "content", true);
    WriteOptions options;
    options.parents = true;
    ws.write(path, content, options);
    return text_result("wrote " + std::to_string(content.size()) + " bytes to " + path, false);
  }
  std::string listing;
  for (const auto& e : ws.list(path.empty() ? "." : path))
    listing += std::string(e.kind == WorkspaceEntry::Kind::directory ? "dir " : "file ") +
               std::to_string(e.size) + " " + e.name + "\n";
  return text_result(listing, false);
}

}  // namespace cordon::cli::mcp
