// The shipped presets compiled at build time (core/presetgen) are the trees their text parses
// to: every value, every key's order and every mark, so that a message about a preset reads the
// same either way.
#include <catch2/catch.hpp>
#include <cordon/sdk/policy.hpp>

#include "policy_compiled.hpp"
#include "policy_parse.hpp"

using namespace cordon;
using namespace cordon::detail;

namespace {

std::string where(const Mark& m) {
  return (m.file ? *m.file : std::string("?")) + ":" + std::to_string(m.line) + ":" +
         std::to_string(m.column);
}

// Compares two trees, naming the first difference (empty: none).
std::string difference(const Node& a, const Node& b, const std::string& path) {
  if (a.type != b.type) return path + ": type";
  if (where(a.mark) != where(b.mark))
    return path + ": mark " + where(a.mark) + " vs " + where(b.mark);
  if (a.boolean != b.boolean || a.integer != b.integer || a.floating != b.floating ||
      a.text != b.text)
    return path + ": value";
  if (a.items.size() != b.items.size() || a.entries.size() != b.entries.size())
    return path + ": size";
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (auto d = difference(a.items[i], b.items[i], path + "[" + std::to_string(i) + "]");
        !d.empty())
      return d;
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const auto& x = a.entries[i];
    const auto& y = b.entries[i];
    if (x.key != y.key) return path + ": key " + x.key + " vs " + y.key;
    if (where(x.key_mark) != where(y.key_mark)) return path + "." + x.key + ": key mark";
    if (auto d = difference(x.value, y.value, path + "." + x.key); !d.empty()) return d;
  }
  return {};
}

}  // namespace

TEST_CASE("compiled presets: each is the tree its text parses to", "[policy][presets]") {
  REQUIRE(preset_names().size() >= 5);
  for (const auto& name : preset_names()) {
    INFO(name);
    auto compiled = compiled_preset(name);
    REQUIRE(compiled);
    auto text = preset_text(name);
    REQUIRE(text);
    Node parsed = parse_policy_text(*text, Format::toml, "preset:" + name);
    CHECK(difference(*compiled, parsed, name) == "");
    CHECK(compiled->entries.size() > 3);
  }
  CHECK_FALSE(compiled_preset("no-such-preset"));
}

TEST_CASE("compiled presets: the comparison sees a changed mark or value", "[policy][presets]") {
  auto compiled = compiled_preset("standard");
  REQUIRE(compiled);
  Node moved = *compiled;
  moved.entries.back().key_mark.line += 1;
  CHECK(difference(*compiled, moved, "standard") != "");
  Node changed = *compiled;
  changed.entries.front().value.integer += 1;  // version = 1
  CHECK(difference(*compiled, changed, "standard") != "");
}
