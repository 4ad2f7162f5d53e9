// Tree -> Policy: walks a tree against the key table, reporting every unknown key, wrong type
// and impossible value with its location, and records where each value was written.
#include <cordon/policy_loader.hpp>

#include "policy_keys.hpp"

#include <algorithm>

namespace cordon::detail {

namespace {

// Levenshtein distance, case-insensitive: how far a typo is from a valid key.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> nearest(std::string_view key, const std::vector<std::string>& names) {
  if (key.size() > 64) return std::nullopt;
  const std::size_t limit = std::clamp<std::size_t>((key.size() + 2) / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& name : names) {
    std::size_t d = edit_distance(key, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

namespace {

std::vector<std::string> keys_of(std::string_view section) {
  std::vector<std::string> out;
  if (section.empty()) {
    out.push_back("version");
    for (const auto& s : policy_sections()) out.emplace_back(s.name);
    out.push_back("backends");
    return out;
  }
  for (const auto& spec : policy_keys())
    if (spec.section == section) out.emplace_back(spec.key);
  return out;
}

bool is_section(std::string_view name) {
  for (const auto& s : policy_sections())
    if (s.name == name) return true;
  return false;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void unknown_key(const NodeEntry& entry, std::string_view section, Diagnostics& diag) {
  if (diag.total() >= kMaxReportedErrors) {  // past the cap only the count matters
    diag.add(code::kUnknownKey, "unknown key", entry.key_mark);
    return;
  }
  const auto names = keys_of(section);
  std::optional<std::string> suggestion = nearest(entry.key, names);
  if (!suggestion && !section.empty()) {  // a key written in the wrong table
    for (const auto& spec : policy_keys())
      if (!spec.section.empty() && spec.key == entry.key) suggestion = spec.dotted();
  }
  std::string where = section.empty() ? "" : " in [" + std::string(section) + "]";
  std::string message = "unknown key '" + entry.key + "'" + where;
  if (suggestion) message += " (did you mean '" + *suggestion + "'?)";
  std::string hint =
      (section.empty() ? "valid top-level keys: " : "valid keys" + where + ": ") + join(names);
  diag.add(code::kUnknownKey, std::move(message), entry.key_mark, std::move(hint));
}

void decode_section(const NodeEntry& section, Policy& policy, Decoder& decoder, Diagnostics& diag) {
  if (!section.value.is_table()) {
    decoder.wrong_type(section.value, section.key, "a table");
    return;
  }
  for (const auto& entry : section.value.entries) {
    if (const KeySpec* spec = find_key(section.key, entry.key))
      spec->decode(entry.value, policy, decoder, *spec);
    else
      unknown_key(entry, section.key, diag);
  }
}

void record_table(const Node& table, const std::string& prefix, Policy& policy) {
  for (const auto& entry : table.entries) {
    std::string key = prefix.empty() ? entry.key : prefix + "." + entry.key;
    // Whole sections are not values; everything inside them is, tables included.
    if (!prefix.empty() || !entry.value.is_table())
      policy.origins[key] = entry.value.mark.location();
    if (entry.value.is_table()) record_table(entry.value, key, policy);
  }
}

}  // namespace

void decode_tree(const Node& root, Policy& policy, Diagnostics& diag) {
  Decoder decoder(diag);
  if (!root.is_table()) {
    decoder.wrong_type(root, "the top level", "a table");
    return;
  }
  const Node* version = root.find("version");
  if (!version)
    diag.add(code::kVersion, "missing 'version' (this cordon reads version 1)", root.mark,
             "add a top-level key 'version' with the value 1");
  for (const auto& entry : root.entries) {
    if (const KeySpec* spec = find_key("", entry.key))
      spec->decode(entry.value, policy, decoder, *spec);
    else if (is_section(entry.key))
      decode_section(entry, policy, decoder, diag);
    else
      unknown_key(entry, "", diag);
  }
}

void record_origins(const Node& root, Policy& policy) { record_table(root, "", policy); }

}  // namespace cordon::detail
