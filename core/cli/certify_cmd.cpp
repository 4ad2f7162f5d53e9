// `cordon certify`: runs the conformance corpus against one backend and says whether every
// capability it claims held, and whether every one it does not claim is refused.
#include <cordon/config.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>
#include <cordon/sdk/error.hpp>

#include <boost/json/serialize.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>

#include <fcntl.h>
#include <unistd.h>

#include "../src/sha256.hpp"
#include "certify_run.hpp"
#include "run_output.hpp"
#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

namespace fs = std::filesystem;

struct CertifyArgs {
  std::string backend;
  std::optional<std::string> policy, corpus, probe;
  bool json = false;
  RuntimeOptions runtime;
};

// The corpus and the probe are installed beside the shipped configuration:
// share/cordon/conformance and libexec/cordon/cordon-probe.
fs::path shipped_corpus() {
  fs::path config = shipped_config_file();
  return config.empty() ? fs::path() : config.parent_path() / "conformance";
}

fs::path shipped_probe() {
  fs::path config = shipped_config_file();
  return config.empty()
             ? fs::path()
             : (config.parent_path() / "../../libexec/cordon/cordon-probe").lexically_normal();
}

// The plugin file's SHA-256, as a [plugins] pin writes it; empty for a built-in backend.
std::string digest_of(const BackendEntry* entry) {
  if (!entry || entry->builtin || entry->path.empty()) return {};
  int fd = ::open(entry->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string error;
  auto digest = detail::sha256_fd(fd, error);
  ::close(fd);
  return digest.value_or("");
}

bool certified(const std::vector<CapabilityOutcome>& outcomes) {
  for (const auto& o : outcomes)
    if (o.status != CapabilityOutcome::Status::held &&
        o.status != CapabilityOutcome::Status::refused)
      return false;
  return true;
}

void print_table(const std::string& backend, const std::vector<CapabilityOutcome>& outcomes) {
  std::cout << "certifying backend '" << backend << "'\n";
  for (const auto& o : outcomes) {
    int held = 0;
    for (const auto& c : o.cases) held += c.status == CaseOutcome::Status::held;
    std::cout << std::left << std::setw(22) << o.capability << std::setw(10)
              << (o.claimed ? "claimed" : "unclaimed") << std::setw(12) << status_name(o.status);
    if (o.claimed)
      std::cout << held << "/" << o.cases.size() << " cases held";
    else
      std::cout << o.evidence;
    std::cout << "\n";
    for (const auto& c : o.cases)
      if (c.status != CaseOutcome::Status::held)
        std::cout << "    " << status_name(c.status) << ": " << c.name << ": " << c.evidence
                  << "\n";
    if (o.claimed && o.cases.empty()) std::cout << "    " << o.evidence << "\n";
  }
}

boost::json::object certificate(const CertifyArgs& a, const BackendEntry* entry,
                                const ProbeResult* probe,
                                const std::vector<CapabilityOutcome>& outcomes, double seconds) {
  boost::json::array caps, facts;
  for (const auto& o : outcomes) {
    boost::json::array cases;
    for (const auto& c : o.cases)
      cases.push_back(
          {{"name", c.name}, {"result", status_name(c.status)}, {"evidence", c.evidence}});
    caps.push_back({{"capability", o.capability},
                    {"claimed", o.claimed},
                    {"result", status_name(o.status)},
                    {"evidence", o.evidence},
                    {"seconds", o.seconds},
                    {"cases", std::move(cases)}});
  }
  if (probe)
    for (const auto& f : probe->facts) facts.push_back(boost::json::string(f));
  return {{"backend", a.backend},
          {"version", entry ? entry->version : ""},
          {"path", entry && !entry->builtin ? entry->path.string() : ""},
          {"builtin", entry && entry->builtin},
          {"digest", digest_of(entry)},
          {"host_facts", std::move(facts)},
          {"certified", certified(outcomes)},
          {"seconds", seconds},
          {"capabilities", std::move(caps)}};
}

std::vector<CapabilityOutcome> all_skipped(const std::vector<CapabilityCases>& corpus,
                                           const std::string& why) {
  std::vector<CapabilityOutcome> out;
  for (const auto& file : corpus) {
    CapabilityOutcome o;
    o.status = CapabilityOutcome::Status::untested;
    o.capability = file.capability;
    o.evidence = why;
    for (const auto& c : file.cases) o.cases.push_back({CaseOutcome::Status::skipped, c.name, why});
    out.push_back(std::move(o));
  }
  return out;
}

const BackendEntry* entry_of(Registry& registry, const std::string& name) {
  for (const auto* e : registry.entries())
    if (e->name == name) return e;
  return nullptr;
}

int certify_main(const CertifyArgs& a) {
  auto start = std::chrono::steady_clock::now();
  Config config;
  auto registry = make_registry(a.runtime, config);
  registry->discover();
  const BackendEntry* entry = entry_of(*registry, a.backend);
  // A backend whose configuration names its target (ssh: the host) is certified on that
  // target; with no settings, probe_for is the backend's own probe.
  std::optional<ProbeResult> configured;
  if (entry && !entry->error)
    configured =
        registry->probe_for(a.backend, backend_settings(Policy{}, config.backends, a.backend));
  const ProbeResult* probe = configured ? &*configured : nullptr;
  // A backend that is there but unusable here (seatbelt off macOS) has every case listed as
  // skipped, with the reason: none passes, and certify still ends with CRD1004.
  if (probe && !probe->available && !a.json)
    print_table(a.backend,
                all_skipped(load_corpus(a.corpus ? fs::path(*a.corpus) : shipped_corpus()),
                            "unusable here: " + probe->reason));
  if (!probe || !probe->available)
    throw Error(code::kBackendUnavailable,
                "backend '" + a.backend + "' is not usable here" +
                    (probe ? ": " + probe->reason : std::string()),
                "`cordon backends` says why");
  fs::path corpus_dir = a.corpus ? fs::path(*a.corpus) : shipped_corpus();
  fs::path probe_path = a.probe ? fs::path(*a.probe) : shipped_probe();
  if (probe_path.empty() || !fs::is_regular_file(probe_path))
    throw Error(code::kCorpusMissing, "no cordon-probe at '" + probe_path.string() + "'",
                "it is installed with cordon under libexec/cordon; --probe names another");
  auto corpus = load_corpus(corpus_dir);
  HostFixtures host(probe_path);
  CertifyTarget target{registry.get(), a.backend, a.policy.value_or(""), config.backends, probe};
  if (a.policy && names_policy_file(*a.policy))
    target.base_policy = fs::absolute(*a.policy).string();
  auto outcomes = certify_all(target, corpus, host);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.json)
    std::cout << boost::json::serialize(certificate(a, entry, probe, outcomes, seconds)) << "\n";
  else
    print_table(a.backend, outcomes);
  bool ok = certified(outcomes);
  if (!a.json)
    std::cout << (ok ? "certified" : "NOT certified") << " (" << std::fixed << std::setprecision(1)
              << seconds << " s)\n";
  if (!ok)
    std::cerr << Error(code::kNotCertified,
                       "backend '" + a.backend + "' is not certified: a claim did not hold",
                       "the table names each failed case and what it saw")
                     .render()
              << "\n";
  return ok ? 0 : 1;
}

}  // namespace

void register_certify(CLI::App& app) {
  auto args = std::make_shared<CertifyArgs>();
  auto* verb = app.add_subcommand(
      "certify", "run the conformance corpus against a backend: do its claims hold here?");
  verb->add_option("--backend", args->backend, "the backend to certify")->required();
  verb->add_option("--policy", args->policy,
                   "a policy file or preset every case extends (default: a neutral one)");
  verb->add_flag("--json", args->json, "print the certificate as one JSON object");
  verb->add_option("--corpus", args->corpus, "the corpus directory (default: the shipped one)");
  verb->add_option("--probe", args->probe, "the cordon-probe program (default: the shipped one)");
  add_runtime_options(verb, args->runtime);
  verb->callback([args] { run_verb(2, [&] { return certify_main(*args); }); });
}

}  // namespace cordon::cli
