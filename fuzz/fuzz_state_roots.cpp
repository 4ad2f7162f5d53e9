// libFuzzer target: arbitrary bytes as the environment state_roots() reads (a uid, then HOME, the
// four XDG bases and the password database's home, separated by NUL bytes). Every directory it
// names is an absolute, lexically normal `cordon` directory inside its base, each once, the base
// never "/"; and the locations that hold whatever the environment says are always there.
#include <cordon/sdk/state_roots.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool inside(const fs::path& dir, const fs::path& base) {
  fs::path rel = dir.lexically_relative(base);
  return !rel.empty() && *rel.begin() != "..";
}

bool lists(const std::vector<cordon::StateRoot>& roots, const fs::path& dir) {
  return std::any_of(roots.begin(), roots.end(), [&](const auto& r) { return r.dir == dir; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < sizeof(uid_t)) return 0;
  cordon::StateEnv env;
  std::memcpy(&env.euid, data, sizeof env.euid);
  std::string_view rest(reinterpret_cast<const char*>(data) + sizeof env.euid,
                        size - sizeof env.euid);
  fs::path* fields[] = {&env.home,       &env.xdg_state,   &env.xdg_cache,
                        &env.xdg_config, &env.xdg_runtime, &env.user_home};
  for (fs::path* field : fields) {
    std::size_t end = std::min(rest.find('\0'), rest.size());
    *field = std::string(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }

  auto roots = cordon::state_roots(env);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const auto& r = roots[i];
    check(r.dir.is_absolute() && r.dir == r.dir.lexically_normal());
    check(r.dir.filename() == "cordon");
    check(r.base.is_absolute() && r.base != r.base.root_path());
    check(r.base == r.base.lexically_normal() && inside(r.dir, r.base));
    for (std::size_t j = i + 1; j < roots.size(); ++j) check(roots[j].dir != r.dir);
  }
  if (env.euid == 0) {
    check(lists(roots, "/var/lib/cordon") && lists(roots, "/run/cordon"));
  } else {
    check(lists(roots, fs::path("/run/user") / std::to_string(env.euid) / "cordon"));
  }
  return 0;
}
