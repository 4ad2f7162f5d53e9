// Reading the conformance corpus (certify_corpus.hpp).
#include "certify_corpus.hpp"

#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <system_error>

#include "../src/toml.hpp"

namespace cordon::cli {

namespace {

[[noreturn]] void corpus_error(const std::filesystem::path& file, const std::string& what) {
  throw Error(code::kCorpusBad, file.string() + ": " + what,
              "the corpus ships with cordon: reinstall it, or fix the file if you wrote it");
}

std::vector<std::string> strings_of(const toml::node* node, const std::filesystem::path& file,
                                    const std::string& key) {
  std::vector<std::string> out;
  if (!node) return out;
  if (auto s = node->value<std::string>()) return {*s};
  const auto* array = node->as_array();
  if (!array) corpus_error(file, "'" + key + "' must be a string or an array of strings");
  for (const auto& item : *array) {
    auto s = item.value<std::string>();
    if (!s) corpus_error(file, "'" + key + "' must hold strings only");
    out.push_back(*s);
  }
  return out;
}

std::optional<std::string> string_of(const toml::table& t, const char* key,
                                     const std::filesystem::path& file) {
  const toml::node* node = t.get(key);
  if (!node) return std::nullopt;
  auto s = node->value<std::string>();
  if (!s) corpus_error(file, std::string("'") + key + "' must be a string");
  return *s;
}

// A symlink or hard link at `path`, to the step's `to`.
SetupStep link_step(const toml::table& step, SetupStep::Kind kind, const std::string& path,
                    const char* key, const std::filesystem::path& file) {
  auto to = string_of(step, "to", file);
  if (!to) corpus_error(file, std::string("a ") + key + " step needs 'to'");
  return {kind, path, *to};
}

std::vector<SetupStep> setup_of(const toml::table& t, const std::filesystem::path& file) {
  std::vector<SetupStep> out;
  const auto* steps = t.get_as<toml::array>("setup");
  if (!steps) return out;
  for (const auto& node : *steps) {
    const auto* step = node.as_table();
    if (!step) corpus_error(file, "each [[setup]] must be a table");
    SetupStep s;
    if (auto p = string_of(*step, "file", file)) {
      s.path = *p;
      s.text = string_of(*step, "text", file).value_or("");
    } else if (auto d = string_of(*step, "dir", file)) {
      s.kind = SetupStep::Kind::dir;
      s.path = *d;
    } else if (auto copy = string_of(*step, "probe", file)) {
      s.kind = SetupStep::Kind::probe;
      s.path = *copy;
    } else if (auto h = string_of(*step, "hard_link", file)) {
      s = link_step(*step, SetupStep::Kind::hard_link, *h, "hard_link", file);
    } else if (auto l = string_of(*step, "symlink", file)) {
      s = link_step(*step, SetupStep::Kind::symlink, *l, "symlink", file);
    } else {
      corpus_error(file, "a setup step needs 'file', 'dir', 'symlink', 'hard_link' or 'probe'");
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<std::int64_t> count_of(const toml::table& t, const std::string& key,
                                     const std::filesystem::path& file) {
  const toml::node* node = t.get(key);
  if (!node) return std::nullopt;
  auto n = node->value<std::int64_t>();
  if (!n || *n < 0) corpus_error(file, "'" + key + "' must be a count of bytes");
  return *n;
}

bool numbered(const std::string& e, const std::string& kind) {
  if (e.rfind(kind, 0) != 0 || e.size() == kind.size()) return false;
  return std::all_of(e.begin() + static_cast<long>(kind.size()), e.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// One expectation or several separated by '|' (any of them will do), each a known kind.
void check_expectation(const std::string& expect, const std::filesystem::path& file) {
  std::size_t start = 0;
  while (start <= expect.size()) {
    std::size_t bar = expect.find('|', start);
    std::string e =
        expect.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    static const char* const kinds[] = {"ok",      "denied",    "refused",
                                        "timeout", "truncated", "signal"};
    bool known = std::find(std::begin(kinds), std::end(kinds), e) != std::end(kinds) ||
                 numbered(e, "exit:") || numbered(e, "signal:") || numbered(e, "status:");
    if (!known)
      corpus_error(file, "unknown expectation '" + e +
                             "' (ok, denied, refused, timeout, truncated, signal, signal:N, "
                             "exit:N, status:N, or several joined by '|')");
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
}

// `prefix` is "" for the attack and "allowed_" for its twin.
Probe probe_of(const toml::table& t, const std::string& prefix, const std::string& expect,
               const std::filesystem::path& file) {
  Probe p;
  p.args = strings_of(t.get(prefix.empty() ? "attack" : "allowed"), file, "attack");
  p.expect = string_of(t, (prefix + "expect").c_str(), file).value_or(expect);
  check_expectation(p.expect, file);
  p.stdout_has = strings_of(t.get(prefix + "stdout_has"), file, prefix + "stdout_has");
  p.stdout_lacks = strings_of(t.get(prefix + "stdout_lacks"), file, prefix + "stdout_lacks");
  p.policy = string_of(t, (prefix + "policy").c_str(), file);
  p.stdin_data = string_of(t, (prefix + "stdin").c_str(), file);
  p.stops_growing = string_of(t, (prefix + "stops_growing").c_str(), file);
  p.program = string_of(t, (prefix + "program").c_str(), file);
  p.stdout_ends_with = string_of(t, (prefix + "stdout_ends_with").c_str(), file);
  p.stdout_max_bytes = count_of(t, prefix + "stdout_max_bytes", file);
  p.stdout_total = count_of(t, prefix + "stdout_total", file);
  if (const toml::node* n = t.get(prefix + "stop_after")) {
    auto seconds = n->value<double>();
    if (!seconds || *seconds <= 0) corpus_error(file, "'" + prefix + "stop_after' must be seconds");
    p.stop_after = *seconds;
  }
  return p;
}

Case case_of(const toml::table& t, const std::filesystem::path& file) {
  Case c;
  c.name = string_of(t, "name", file).value_or("");
  if (c.name.empty()) corpus_error(file, "every [[case]] needs a name");
  if (!t.get("attack")) corpus_error(file, "case '" + c.name + "' has no attack");
  c.attack = probe_of(t, "", "denied", file);
  if (t.get("allowed")) c.allowed = probe_of(t, "allowed_", "ok", file);
  if (const toml::node* n = t.get("allowed_is_control")) {
    auto flag = n->value<bool>();
    if (!flag) corpus_error(file, "'allowed_is_control' must be true or false");
    c.allowed_is_control = *flag;
  }
  c.needs = strings_of(t.get("needs"), file, "needs");
  c.setup = setup_of(t, file);
  return c;
}

}  // namespace

CapabilityCases load_capability_cases(const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    corpus_error(file, std::string(e.description()));
  }
  CapabilityCases out;
  out.file = file;
  out.capability = string_of(root, "capability", file).value_or("");
  if (out.capability.empty()) corpus_error(file, "'capability' is missing");
  out.policy = string_of(root, "policy", file).value_or("");
  out.setup = setup_of(root, file);
  out.requires_ids = strings_of(root.get("requires"), file, "requires");
  const auto* cases = root.get_as<toml::array>("case");
  if (!cases || cases->empty()) corpus_error(file, "no [[case]]");
  for (const auto& node : *cases) {
    const auto* t = node.as_table();
    if (!t) corpus_error(file, "each [[case]] must be a table");
    out.cases.push_back(case_of(*t, file));
  }
  return out;
}

std::vector<CapabilityCases> load_corpus(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  if (ec || files.empty())
    throw Error(code::kCorpusMissing, "no conformance corpus in '" + dir.string() + "'",
                "it is installed with cordon under share/cordon/conformance");
  std::vector<CapabilityCases> out;
  for (const auto& f : files) out.push_back(load_capability_cases(f));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.capability < b.capability; });
  return out;
}

}  // namespace cordon::cli
