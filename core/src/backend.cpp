// The non-virtual half of cordon::Backend: validation, timing, logging and capping.
#include <cordon/sdk/backend.hpp>

#include <cordon/sdk/log.hpp>
#include <cordon/sdk/settings.hpp>

#include <algorithm>

#include "capped_sink.hpp"

namespace cordon {

namespace {

// What a hook threw: the cordon::Errors as thrown (one, or an ErrorList's), else what() of
// anything else (a plugin's bug), which the caller words under its generic code.
struct Thrown {
  std::vector<Error> errors;
  std::string what;

  // The first error as thrown, or `generic` for anything else.
  template <class Generic>
  Error error_or(Generic&& generic) const {
    return errors.empty() ? generic(what) : errors.front();
  }
};

// Calls a hook; one that throws yields on_throw(Thrown): a plugin may report a failure by
// throwing cordon::Error, whose code then reaches the result unchanged.
template <class Hook, class OnThrow>
auto guarded(Hook&& hook, OnThrow&& on_throw) -> decltype(hook()) {
  Thrown thrown;
  try {
    return hook();
  } catch (const Error& e) {
    thrown.errors.push_back(e);
    thrown.what = e.what();
  } catch (const ErrorList& list) {
    thrown.errors = list.errors();
    thrown.what = list.what();
  } catch (const std::exception& e) {
    thrown.what = e.what();
  } catch (...) {
    thrown.what = "unknown exception";
  }
  if (thrown.errors.empty() && thrown.what.empty()) thrown.what = "unknown exception";
  return on_throw(thrown);
}

}  // namespace

OutputSink::~OutputSink() = default;

bool ProbeResult::proves(std::string_view capability) const {
  for (const auto& p : proofs)
    if (p.capability == capability) return p.proven;
  return false;
}

std::string ProbeResult::evidence(std::string_view capability) const {
  for (const auto& p : proofs)
    if (p.capability == capability) return p.evidence;
  return "not known to this backend";
}

Backend::Backend(BackendContext context) : context_(std::move(context)) {
  if (!context_.logger) {
    context_.logger = cordon::log::null_logger(context_.name);
  }
}

Backend::~Backend() = default;

const ProbeResult& Backend::probe() {
  std::call_once(probed_, [this] {
    auto start = std::chrono::steady_clock::now();
    probe_result_ = guarded_probe();
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    if (cordon::log::enabled(log(), cordon::log::Level::debug))
      cordon::log::debug(log(), "probe of '" + name() + "' took " + std::to_string(us) + " us: " +
                                    (probe_result_.available ? "available" : probe_result_.reason));
  });
  return probe_result_;
}

// A probe that throws cordon::Error is a refusal in the backend's own words; anything else is a
// fault of the plugin (CRD3006), never an escaping exception.
ProbeResult Backend::guarded_probe() { return guarded_probe_for(nullptr); }

ProbeResult Backend::guarded_probe_for(const boost::json::object* settings) {
  return guarded([&] { return settings ? do_probe_for(*settings) : do_probe(); },
                 [this](const Thrown& thrown) {
                   if (thrown.errors.empty()) return fault_result(thrown.what);
                   ProbeResult refused;
                   refused.reason = thrown.errors.front().message();
                   refused.unusable = thrown.errors.front();
                   return refused;
                 });
}

ProbeResult Backend::fault_result(const std::string& what) {
  ProbeResult failed;
  failed.reason = "probe failed: " + what;
  failed.fault = Error(code::kPluginProbe, "probe of backend '" + name() + "' threw: " + what,
                       "report this to the plugin's author; the backend is unusable");
  return failed;
}

ProbeResult Backend::probe_for(const boost::json::object& settings) {
  if (settings.empty() || !validate_settings(settings).empty()) return probe();
  return guarded_probe_for(&settings);
}

ProbeResult Backend::do_probe_for(const boost::json::object&) { return probe(); }

std::vector<Error> Backend::validate_settings(const boost::json::object& settings) {
  std::lock_guard lock(validated_mutex_);
  if (validated_settings_ && *validated_settings_ == settings) return validated_errors_;
  validated_errors_ =
      guarded([&] { return do_validate_settings(settings); },
              [this](const Thrown& thrown) {
                if (!thrown.errors.empty()) return thrown.errors;
                return std::vector<Error>{Error(
                    code::kBadSettings,
                    "backend '" + name() + "' failed to validate its settings: " + thrown.what)};
              });
  validated_settings_ = settings;
  return validated_errors_;
}

std::optional<Error> Backend::settings_error(const boost::json::object& settings) {
  auto errors = validate_settings(settings);
  if (errors.empty()) return std::nullopt;
  std::string text = errors.front().what();
  for (std::size_t i = 1; i < errors.size(); ++i) text += "\n" + std::string(errors[i].what());
  return Error(code::kBadSettings, text, errors.front().hint());
}

std::vector<Error> Backend::do_validate_settings(const boost::json::object& settings) {
  return sdk::unknown_settings(name(), settings, {});
}

GarbageReport Backend::collect_garbage(const boost::json::object& settings) {
  return guarded([&] { return do_collect_garbage(settings); },
                 [this](const Thrown& thrown) {
                   GarbageReport failed;
                   failed.error = thrown.error_or([this](const std::string& what) {
                     return Error(code::kBackendFault,
                                  "backend '" + name() + "' failed to collect: " + what);
                   });
                   return failed;
                 });
}

GarbageReport Backend::do_collect_garbage(const boost::json::object&) { return {}; }

RunPreview Backend::preview(const Plan& plan) {
  return guarded(
      [&] { return do_preview(plan); },
      [this](const Thrown& thrown) {
        RunPreview failed;
        std::string what = thrown.errors.empty() ? thrown.what : thrown.errors.front().message();
        failed.warnings.push_back("backend '" + name() + "' could not preview the run: " + what);
        return failed;
      });
}

RunPreview Backend::do_preview(const Plan&) { return {}; }

std::optional<std::string> Backend::compile(const Plan& plan) { return do_compile(plan); }

std::optional<std::string> Backend::do_compile(const Plan&) { return std::nullopt; }

std::unique_ptr<WorkspaceFiles> Backend::open_workspace(const boost::json::object& settings,
                                                        const std::filesystem::path& root,
                                                        const WorkspaceRules& rules) {
  if (auto bad = settings_error(settings)) throw *bad;
  return do_open_workspace(settings, root, rules);
}

std::unique_ptr<WorkspaceFiles> Backend::do_open_workspace(const boost::json::object&,
                                                           const std::filesystem::path&,
                                                           const WorkspaceRules&) {
  return nullptr;
}

std::string unproven_lines(const Requirements& reqs, const ProbeResult& probe) {
  std::string lines;
  for (const auto& r : reqs)
    if (!probe.proves(r.id))
      lines += "\n  " + r.id + " (" + r.clause + "): " + probe.evidence(r.id);
  return lines;
}

namespace {

RunResult fault(const std::string& backend, const std::string& what) {
  RunResult failed;
  failed.error = Error(code::kBackendFault, "backend '" + backend + "' failed: " + what,
                       "report this to the plugin's author");
  return failed;
}

}  // namespace

RunResult Backend::run(const Plan& plan, OutputSink& sink) {
  RunResult refused;
  if (plan.argv.empty() || plan.argv.front().empty()) {
    refused.error = Error(code::kBadArgument, "no program to run", "pass a program after '--'");
    return refused;
  }
  // Checked here, once, so that do_run may trust the settings.
  if (auto bad = settings_error(plan.settings)) {
    refused.error = std::move(*bad);
    return refused;
  }
  const ProbeResult pr = probe_for(plan.settings);
  if (!pr.available) {
    refused.error = pr.unusable ? *pr.unusable
                                : Error(code::kBackendUnavailable,
                                        "backend '" + name() + "' is not available: " + pr.reason);
    return refused;
  }
  if (auto missing = unproven_lines(plan.requirements, pr); !missing.empty()) {
    refused.error =
        Error(code::kUnproven, "backend '" + name() + "' cannot prove:" + missing,
              "choose a backend that proves them (cordon backends) or relax the policy");
    return refused;
  }
  detail::CappedSink capped(sink, plan.policy.limits.max_output_bytes);
  auto start = std::chrono::steady_clock::now();
  if (cordon::log::enabled(log(), cordon::log::Level::debug))
    cordon::log::debug(log(), "running '" + plan.argv.front() + "' on '" + name() + "'");
  RunResult result = guarded_run(plan, capped);
  capped.finish();
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  // A backend whose output was capped before it came here (a remote cordon's) says what the
  // command wrote; the larger count and either truncation stand.
  result.stdout_bytes = std::max(result.stdout_bytes, capped.total(Stream::out));
  result.stderr_bytes = std::max(result.stderr_bytes, capped.total(Stream::err));
  result.stdout_truncated = result.stdout_truncated || capped.truncated(Stream::out);
  result.stderr_truncated = result.stderr_truncated || capped.truncated(Stream::err);
  if (plan.shell_unsafe) result.notes.push_back("shell = unsafe: the command ran under /bin/sh");
  return result;
}

RunResult Backend::guarded_run(const Plan& plan, OutputSink& sink) {
  return guarded([&] { return do_run(plan, sink); },
                 [this](const Thrown& thrown) {
                   if (thrown.errors.empty()) return fault(name(), thrown.what);
                   RunResult failed;
                   failed.error = thrown.errors.front();
                   return failed;
                 });
}

}  // namespace cordon
