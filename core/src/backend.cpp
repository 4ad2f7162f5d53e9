// The non-virtual half of cordon::Backend: validation, timing, logging and capping.
#include <cordon/backend.hpp>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "capped_sink.hpp"

namespace cordon {

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
    context_.logger = std::make_shared<spdlog::logger>(
        context_.name, std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

Backend::~Backend() = default;

const ProbeResult& Backend::probe() {
  std::call_once(probed_, [this] {
    auto start = std::chrono::steady_clock::now();
    probe_result_ = do_probe();
    auto ms = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    log().debug("probe of '{}' took {} us: {}", name(), ms,
                probe_result_.available ? "available" : probe_result_.reason);
  });
  return probe_result_;
}

std::vector<Error> Backend::validate_settings(const boost::json::object& settings) {
  return do_validate_settings(settings);
}

std::vector<Error> Backend::do_validate_settings(const boost::json::object& settings) noexcept {
  std::vector<Error> errors;
  for (const auto& kv : settings) {
    errors.emplace_back(code::kBadSettings,
                        "unknown setting 'backends." + name() + "." + std::string(kv.key()) + "'",
                        "backend '" + name() + "' takes no settings");
  }
  return errors;
}

namespace {

// Requirements the probe did not prove; run() refuses rather than degrade.
std::vector<std::string> unproven(const Requirements& reqs, const ProbeResult& probe) {
  std::vector<std::string> missing;
  for (const auto& r : reqs)
    if (!probe.proves(r.id)) missing.push_back(r.id);
  return missing;
}

}  // namespace

RunResult Backend::run(const Plan& plan, OutputSink& sink) {
  RunResult refused;
  if (plan.argv.empty() || plan.argv.front().empty()) {
    refused.error = Error(code::kBadArgument, "no program to run", "pass a program after '--'");
    return refused;
  }
  const auto& pr = probe();
  if (!pr.available) {
    refused.error = Error(code::kBackendUnavailable,
                          "backend '" + name() + "' is not available: " + pr.reason);
    return refused;
  }
  if (auto missing = unproven(plan.requirements, pr); !missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    refused.error = Error(code::kUnproven, "backend '" + name() + "' cannot prove " + list);
    return refused;
  }
  detail::CappedSink capped(sink, plan.policy.limits.max_output_bytes);
  auto start = std::chrono::steady_clock::now();
  log().debug("running '{}' on '{}'", plan.argv.front(), name());
  RunResult result = do_run(plan, capped);
  capped.finish();
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  result.stdout_bytes = capped.total(Stream::out);
  result.stderr_bytes = capped.total(Stream::err);
  result.stdout_truncated = capped.truncated(Stream::out);
  result.stderr_truncated = capped.truncated(Stream::err);
  if (plan.shell_unsafe) result.notes.push_back("shell = unsafe: the command ran under /bin/sh");
  return result;
}

}  // namespace cordon
