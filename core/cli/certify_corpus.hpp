// The conformance corpus `cordon certify` runs: one file per capability id, each case an attack,
// its allowed twin and what each must observably do. The files are TOML, shipped with cordon
// (share/cordon/conformance/); the format is described in docs/certify.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cordon::cli {

/// A file or directory certify makes in the run's directory before a case runs.
struct SetupStep {
  enum class Kind { file, dir, symlink, hard_link, probe } kind = Kind::file;  ///< probe: a copy
  std::string path;  ///< may use the placeholders of docs/certify.md
  std::string text;  ///< a file's content, or a link's target
};

/// One probe run and what it must show.
struct Probe {
  std::vector<std::string> args;  ///< cordon-probe's verb and arguments
  /// "ok", "denied", "refused" (by cordon before anything ran, CRD1xxx), "timeout",
  /// "truncated", "exit:N", "signal" (any), "signal:N", or "status:N" (cordon's exit status for
  /// the run: 124 timeout, 126/127 exec failures, 128+n a signal); several joined by '|' mean
  /// any of them.
  std::string expect;
  std::optional<std::string> program;     ///< runs this instead of the probe (args follow it)
  std::optional<double> stop_after;       ///< seconds: then a terminate request, a kill 1 s later
  std::vector<std::string> stdout_has;    ///< every one must appear in stdout
  std::vector<std::string> stdout_lacks;  ///< none may appear in stdout
  std::optional<std::string> stdout_ends_with;
  std::optional<std::int64_t> stdout_max_bytes;  ///< what reached cordon's caller, at most
  std::optional<std::int64_t> stdout_total;      ///< what the command wrote, exactly
  std::optional<std::string> policy;             ///< replaces the file's policy for this run
  std::optional<std::string> stdin_data;
  std::optional<std::string> stops_growing;  ///< a file that must not grow once the run is over
};

/// An attack and its allowed twin.
struct Case {
  std::string name;
  Probe attack;
  std::optional<Probe> allowed;
  /// The twin only shows that the attack's target is reachable here (the same attack under a
  /// policy that allows it): when it fails, the case cannot show anything and is skipped.
  bool allowed_is_control = false;
  std::vector<std::string> needs;  ///< host facts the case needs (see docs/certify.md)
  std::vector<SetupStep> setup;    ///< besides the file's
};

/// Every case of one capability id.
struct CapabilityCases {
  std::string capability;
  std::string policy;  ///< a policy fragment (TOML) that requires `capability`
  /// Capabilities every run of the file asks for beyond its policy (`requires`): for an id no
  /// policy clause asks for alone (proc.isolate comes with read confinement).
  std::vector<std::string> requires_ids;
  std::vector<SetupStep> setup;
  std::vector<Case> cases;
  std::filesystem::path file;
};

/// Reads one corpus file. Throws cordon::Error (CRD7002) naming the file and the key.
CapabilityCases load_capability_cases(const std::filesystem::path& file);

/// Reads every *.toml of `dir`, sorted by capability id. Throws cordon::Error (CRD7001) when the
/// directory cannot be read, CRD7002 for a bad file.
std::vector<CapabilityCases> load_corpus(const std::filesystem::path& dir);

}  // namespace cordon::cli
