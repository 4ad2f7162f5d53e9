// `cordon backends`: every backend found, what each proves here, and every diagnostic.
#include <cordon/runner.hpp>

#include <boost/json/serialize.hpp>
#include <iomanip>
#include <iostream>
#include <memory>

#include "run_output.hpp"
#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct BackendsArgs {
  bool json = false;
  RuntimeOptions runtime;
};

struct Row {
  const BackendEntry* entry;
  const ProbeResult* probe;
};

boost::json::object row_json(const Row& row) {
  const BackendEntry& e = *row.entry;
  boost::json::object o{
      {"name", e.name},
      {"version", e.version},
      {"path", e.builtin ? boost::json::value(nullptr) : boost::json::value(e.path.string())},
      {"builtin", e.builtin},
      {"available", row.probe && row.probe->available},
      {"reason", row.probe ? row.probe->reason : std::string()},
      {"error", error_json(e.error)}};
  boost::json::array proofs, facts;
  if (row.probe) {
    for (const auto& p : row.probe->proofs)
      proofs.push_back(boost::json::object{
          {"capability", p.capability}, {"proven", p.proven}, {"evidence", p.evidence}});
    for (const auto& f : row.probe->facts) facts.push_back(boost::json::string(f));
  }
  o["proofs"] = std::move(proofs);
  o["facts"] = std::move(facts);
  return o;
}

boost::json::object listing_json(const Registry& registry, const std::vector<Row>& rows) {
  boost::json::array dirs, backends, diagnostics;
  for (const auto& d : registry.search_path())
    dirs.push_back(boost::json::object{{"path", d.path.string()}, {"origin", d.origin}});
  for (const auto& r : rows) backends.push_back(row_json(r));
  for (const auto& d : registry.diagnostics())
    diagnostics.push_back(
        boost::json::object{{"level", d.level == Diagnostic::Level::warning ? "warning" : "error"},
                            {"code", d.error.code()},
                            {"message", d.error.what()},
                            {"hint", d.error.hint()},
                            {"path", d.path.string()}});
  return {{"search_path", std::move(dirs)},
          {"backends", std::move(backends)},
          {"diagnostics", std::move(diagnostics)}};
}

void print_row(const Row& row) {
  const BackendEntry& e = *row.entry;
  std::cout << e.name << " " << (e.version.empty() ? "?" : e.version) << "  "
            << (e.builtin ? "(built in)" : e.path.string()) << "\n";
  if (e.error) {
    std::cout << "  unusable: " << e.error->what() << " [" << e.error->code() << "]\n";
    return;
  }
  if (!row.probe) return;
  std::cout << "  " << (row.probe->available ? "available" : "not available: " + row.probe->reason)
            << "\n";
  for (const auto& p : row.probe->proofs)
    std::cout << "  " << (p.proven ? "[x] " : "[ ] ") << std::left << std::setw(23) << p.capability
              << p.evidence << "\n";
  for (const auto& f : row.probe->facts) std::cout << "  note: " << f << "\n";
}

void print_listing(const Registry& registry, const std::vector<Row>& rows) {
  std::cout << "plugin search path:\n";
  for (const auto& d : registry.search_path())
    std::cout << "  " << d.path.string() << " (" << d.origin << ")\n";
  for (const auto& r : rows) {
    std::cout << "\n";
    print_row(r);
  }
  if (!registry.diagnostics().empty()) {
    std::cout << "\ndiagnostics:\n";
    print_diagnostics(registry, std::cout);
  }
}

int backends_main(const BackendsArgs& a) {
  Config config;
  std::unique_ptr<Registry> registry;
  try {
    registry = make_registry(a.runtime, config);
  } catch (const ErrorList& e) {
    print_errors(e.errors());
    return 125;
  }
  registry->discover();
  // A backend whose configuration names its target (ssh: the host) is shown proving that
  // target; with no settings, probe_for is the backend's own probe.
  std::vector<ProbeResult> probes;
  probes.reserve(registry->entries().size());
  std::vector<Row> rows;
  for (const auto* entry : registry->entries()) {
    const ProbeResult* probe = nullptr;
    if (!entry->error)
      if (auto p = registry->probe_for(entry->name,
                                       backend_settings(Policy{}, config.backends, entry->name)))
        probe = &probes.emplace_back(std::move(*p));
    rows.push_back({entry, probe});
  }
  if (a.json)
    std::cout << boost::json::serialize(listing_json(*registry, rows)) << "\n";
  else
    print_listing(*registry, rows);
  return 0;
}

}  // namespace

void register_backends(CLI::App& app) {
  auto args = std::make_shared<BackendsArgs>();
  auto* verb = app.add_subcommand("backends", "list the backends found and what each proves here");
  verb->add_flag("--json", args->json, "print one JSON object");
  add_runtime_options(verb, args->runtime);
  verb->callback([args] { set_exit_status(backends_main(*args)); });
}

}  // namespace cordon::cli
