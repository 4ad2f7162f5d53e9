// The body shared by the policy fuzz targets: whatever the bytes, loading either succeeds or
// throws an ErrorList of CRD2xxx errors; a policy that loads writes out and loads back the same.
#pragma once

#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cordon::fuzz {

// Relative `extends` resolve here; the directory does not exist, so a fuzz input cannot make
// the loader read a file near the corpus.
inline const char* kBaseDir = "/nonexistent/cordon-fuzz";

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

inline void check_errors(const ErrorList& list) {
  if (list.errors().empty()) fail("an ErrorList without errors", "");
  for (const auto& e : list.errors())
    if (e.code().rfind("CRD2", 0) != 0) fail("a loader error outside CRD2xxx", e.render());
}

// `text` is `policy` written out as `name`'s format; it must load back with the same rules.
inline void check_reload(const Policy& policy, const std::string& text, const std::string& name) {
  try {
    Policy again = load_policy_text(text, name, kBaseDir);
    if (!again.same_rules(policy)) fail("a round-trip changed the policy", text);
  } catch (const ErrorList& e) {
    fail("a written policy does not load", text + "\n" + e.what());
  }
}

inline int run_one(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Policy policy;
  try {
    policy = load_policy_text(text, name, kBaseDir);
  } catch (const ErrorList& e) {
    check_errors(e);
    return 0;
  }
  check_reload(policy, to_toml(policy), "again.toml");
  check_reload(policy, to_yaml(policy), "again.yaml");
  check_reload(policy, to_json(policy), "again.yaml");
  try {
    resolve_paths(policy, PathContext{"/work/space", "/home/user"});
  } catch (const ErrorList& e) {
    check_errors(e);
  }
  return 0;
}

}  // namespace cordon::fuzz
