// The attached run of one command, and its outcome.
#include "attached_run.hpp"

#include <boost/json/object.hpp>
#include <cordon/sdk/child.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "exec_block.hpp"
#include "host_side.hpp"
#include "session.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

std::string attach_path(const Daemon& daemon, const std::string& id) {
  return daemon.path("/containers/" + id + "/attach?stream=1&stdout=1&stderr=1&stdin=1");
}

Error exec_error(const std::string& line, const std::string& program, std::int64_t status,
                 const std::string& masked, const std::vector<std::string>& blocked) {
  if (status == 126 && !masked.empty())
    return sdk::masked_program_failure(program, masked, blocked, false);
  if (status == 127)
    return Error(code::kNotFound, "program '" + program + "' not found in the container",
                 "the image must contain it, in the granted PATH");
  return Error(code::kNotExecutable, "'" + program + "' cannot be executed: " + line,
               "the image's file must be an executable the container's user may run");
}

void fill_outcome(const SessionOutcome& out, const json::object& state, const Masked& masked,
                  const Plan& plan, RunResult& result) {
  bool oom = false;
  if (const auto* s = state.if_contains("State"); s && s->is_object())
    if (const auto* o = s->as_object().if_contains("OOMKilled"); o && o->is_bool())
      oom = o->get_bool();
  if (!out.daemon_error.empty() && !out.status) {
    result.error =
        Error(code::kServiceUnreachable, "the docker daemon went away mid-run: " + out.daemon_error,
              "the command's container may be left; 'cordon gc' removes it");
    return;
  }
  std::int64_t status = out.status.value_or(-1);
  if (!out.init_error.empty() && (status == 126 || status == 127)) {
    const std::string path = plan.env.count("PATH") ? plan.env.at("PATH") : std::string();
    result.error = exec_error(out.init_error, plan.argv.front(), status,
                              out.init_error.find("Permission denied") != std::string::npos
                                  ? masked.find(plan.argv.front(), path)
                                  : std::string(),
                              masked.blocked);
    result.exit_code = static_cast<int>(status);
    return;
  }
  if (out.timed_out) {
    result.timed_out = true;
    result.signal = SIGKILL;
    result.notes.push_back("the deadline passed: the container was killed");
  } else if (status > 128 && status < 128 + 65) {
    // The waiter reports a command killed by signal n as 128 + n.
    result.signal = static_cast<int>(status - 128);
    if (out.stopped) result.notes.push_back("stopped: the container was killed");
  } else {
    result.exit_code = static_cast<int>(status);
  }
  // State.OOMKilled: the kernel's OOM killer took a process of the container (its limit).
  if (oom && plan.policy.limits.memory_mb)
    result.notes.push_back(
        memory_limit_note(*plan.policy.limits.memory_mb, result.signal == SIGKILL));
}

// The refusal for a waiter that found itself root (uid, gid or a supplementary group 0),
// however the user setting spelled it, or with another uid than the one it was told to expect;
// nullopt for any other status.
std::optional<Error> identity_failure(std::int64_t status, const Plan& plan,
                                      std::optional<uid_t> expect_uid) {
  if (status < 0 || status > 0xffffffffLL) return std::nullopt;
  auto which = static_cast<std::uint32_t>(status);
  if ((which & kStatusKind) == kOtherUid && expect_uid) {
    const auto* user = plan.settings.if_contains("user");
    std::string named = user && user->is_string() ? std::string(user->get_string()) : "";
    return Error(code::kBadSettings,
                 "'backends.docker.user' ('" + named +
                     "') runs with another uid in the container " +
                     "than the image's /etc/passwd gives it (" + std::to_string(*expect_uid) +
                     ", whose state on the host cordon hid); the command was not run",
                 "give 'backends.docker.user' as 'uid:gid'");
  }
  if ((which & kStatusKind) != kRootIdentity) return std::nullopt;
  std::string ids = (which & 1) ? "uid 0" : (which & 2) ? "gid 0" : "a supplementary group 0";
  const auto* user = plan.settings.if_contains("user");
  std::string named = user && user->is_string()
                          ? "'backends.docker.user' ('" + std::string(user->get_string()) + "')"
                          : "the container's default user";
  return Error(code::kBadSettings,
               named + " runs with " + ids + " in the image; the command was not run",
               "give 'backends.docker.user' as an unprivileged 'uid:gid' (the image resolves a "
               "bare uid without a group to gid 0)");
}

// Milliseconds until the plan's deadline (at least 1), or 0 when it has none: the waiter kills
// the command at it itself.
std::uint64_t deadline_ms(const Plan& plan) {
  if (!plan.deadline) return 0;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  *plan.deadline - std::chrono::steady_clock::now())
                  .count();
  return static_cast<std::uint64_t>(std::max<long long>(left, 1));
}

// A pooled container whose waiter is gone cannot run anything: the caller runs one-shot.
bool running(const Container& container) {
  auto state = container.inspect();
  const auto* st = state.if_contains("State");
  return st && st->is_object() && st->as_object().contains("Running") &&
         st->as_object().at("Running").is_bool() && st->as_object().at("Running").as_bool();
}

}  // namespace

Cancel abandon_for(const Plan& plan) {
  return [&plan] {
    return (plan.stop && plan.stop->requested() != StopToken::Level::none) ||
           (plan.deadline && std::chrono::steady_clock::now() >= *plan.deadline);
  };
}

std::string Masked::find(const std::string& program, const std::string& path_env) const {
  for (const auto& candidate : exec_candidates({program}, path_env))
    if (std::find(programs.begin(), programs.end(), candidate) != programs.end()) return candidate;
  return {};
}

bool attach_and_run(const Daemon& daemon, const Container& container, bool pooled,
                    const std::vector<MountCheck>& checks, std::optional<uid_t> expect_uid,
                    const Masked& masked, const Plan& plan, OutputSink& sink, RunResult& result) {
  Cancel abandon = abandon_for(plan);
  RawStream stream(daemon.endpoint(), attach_path(daemon, container.id()), abandon);
  SessionIo io;
  std::optional<ExitWaiter> waiter;
  if (pooled) {
    if (!running(container)) return false;
  } else {
    waiter.emplace(daemon, container.id(), abandon);
    io.waiter = &*waiter;
    container.start(abandon);
  }
  // Without stdin the command's is /dev/null (the waiter's flag): the stream is not half-closed,
  // which a TLS connection cannot do.
  bool has_stdin = plan.stdin_data.has_value();
  io.nonce = new_run_id();
  io.input = waiter_header({io.nonce, has_stdin, deadline_ms(plan), expect_uid,
                            waiter_checks(checks), plan.argv}) +
             plan.stdin_data.value_or("");
  io.close_stdin = has_stdin;
  SessionOutcome out = stream_session(plan, io, container, stream, sink);
  if (out.status) {
    if (auto refusal = check_failure(*out.status, checks)) {
      // A pooled container made before a source changed legitimately is stale, not an attack
      // on this run: nothing ran, and a fresh container is made and checked instead.
      if (pooled) return false;
      result.error = std::move(refusal);
      return true;
    }
    if (auto refusal = identity_failure(*out.status, plan, expect_uid)) {
      result.error = std::move(refusal);
      return true;
    }
    // The waiter killed the command at the deadline (cordon's own kill came later, or not).
    if (*out.status == kDeadline) {
      out.timed_out = true;
      out.status = 128 + SIGKILL;
    }
  }
  // Only a kill can be the memory limit's: inspect then, not on every run.
  json::object state = out.status == 128 + SIGKILL ? container.inspect() : json::object{};
  fill_outcome(out, state, masked, plan, result);
  return true;
}

}  // namespace cordon::docker
