// Built-in backends beyond `none` (cordon's front end builds landlock in), the load hook that
// lets an executable that cannot load plugins hand off, and where code was loaded from.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cordon/backend_none.hpp>
#include <cordon/load_hook.hpp>
#include <cordon/registry.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime_test_support.hpp"

using namespace cordon;
using cordon::test::fixture_dir;
using cordon::test::isolated;

namespace fs = std::filesystem;

namespace {

int g_created = 0;
std::vector<fs::path> g_loads;

// A built-in named `name` whose backend is the `none` backend under that name.
BuiltinBackend builtin(const std::string& name) {
  return {name, "9.9", [](const BackendContext& ctx) {
            ++g_created;
            return make_none_backend(ctx);
          }};
}

// A registry searching `dirs` and offering the built-in "good"; no backend created yet.
std::unique_ptr<Registry> with_builtin_good(std::vector<fs::path> dirs) {
  auto options = isolated(std::move(dirs));
  options.builtins = {builtin("good")};
  g_created = 0;
  return std::make_unique<Registry>(options);
}

void record_load(const fs::path& file) { g_loads.push_back(file); }

// Clears the hook however the test ends.
struct HookGuard {
  HookGuard() {
    g_loads.clear();
    set_load_hook(record_load);
  }
  ~HookGuard() { set_load_hook(nullptr); }
};

}  // namespace

TEST_CASE("registry: a built-in backend is offered without a plugin file", "[registry][builtin]") {
  auto registry = with_builtin_good({});
  Registry& r = *registry;
  const BackendEntry* e = r.find("good");
  REQUIRE(e);
  CHECK(e->builtin);
  CHECK(e->path.empty());
  CHECK(e->version == "9.9");
  CHECK(g_created == 0);
  REQUIRE(r.backend("good"));
  CHECK(g_created == 1);
  CHECK(r.probe("good"));
  CHECK(r.diagnostics().empty());
  auto names = r.names();
  CHECK(std::find(names.begin(), names.end(), "good") != names.end());
}

TEST_CASE("registry: a plugin file in a directory the caller named wins over a built-in",
          "[registry][builtin]") {
  auto registry = with_builtin_good({fixture_dir("good")});
  Registry& r = *registry;
  const BackendEntry* e = r.find("good");
  REQUIRE(e);
  CHECK_FALSE(e->builtin);
  CHECK(e->path == fixture_dir("good") / "cordon-backend-good.so");
  CHECK(e->version == "1.0");
  REQUIRE(r.backend("good"));
  CHECK(g_created == 0);
}

TEST_CASE("registry: a built-in respects the allow list", "[registry][builtin]") {
  PluginPins pins;
  pins.allow = std::vector<std::string>{"other"};
  auto options = isolated({}, pins);
  options.builtins = {builtin("good")};
  Registry r(options);
  CHECK(r.backend("good") == nullptr);
  REQUIRE(r.find("good"));
  REQUIRE(r.find("good")->error);
  CHECK(r.find("good")->error->code() == std::string(code::kPluginNotAllowed));
}

TEST_CASE("registry: a backend pinned to a plugin file's digest is never the built-in",
          "[registry][builtin]") {
  PluginPins pins;
  pins.sha256["good"] = std::string(64, '0');
  auto options = isolated({}, pins);
  options.builtins = {builtin("good")};
  Registry r(options);
  // Nothing on this search path holds the file, so there is no backend of the name at all;
  // the built-in would have run it without checking the pin.
  CHECK(r.find("good") == nullptr);
}

TEST_CASE("registry: the load hook runs before a plugin file is loaded, not for a built-in",
          "[registry][builtin]") {
  HookGuard guard;
  auto options = isolated({fixture_dir("good")});
  options.builtins = {builtin("mine")};
  Registry r(options);
  REQUIRE(r.backend("mine"));
  CHECK(g_loads.empty());
  REQUIRE(r.backend("good"));
  REQUIRE(g_loads.size() == 1);
  CHECK(g_loads[0] == fixture_dir("good") / "cordon-backend-good.so");
}

TEST_CASE("code_file: the executable for code linked into it, the library for a library's",
          "[registry][builtin]") {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  REQUIRE_FALSE(ec);
  static int here = 0;
  CHECK(code_file(&here) == self);
  fs::path core = code_file(reinterpret_cast<const void*>(&set_load_hook));
  CHECK(core.filename().string().rfind("libcordon-core.so", 0) == 0);
  CHECK(code_file(nullptr).empty());
}

TEST_CASE("registry: a built-in that makes no backend or throws is refused, not fatal",
          "[registry][builtin]") {
  auto options = isolated({});
  options.builtins = {
      {"empty", "1", [](const BackendContext&) { return std::unique_ptr<Backend>(); }},
      {"thrower", "1", [](const BackendContext&) -> std::unique_ptr<Backend> {
         throw std::runtime_error("no kernel support");
       }}};
  Registry r(options);
  for (const char* name : {"empty", "thrower"}) {
    INFO(name);
    CHECK(r.backend(name) == nullptr);
    REQUIRE(r.find(name));
    REQUIRE(r.find(name)->error);
    CHECK(r.find(name)->error->code() == std::string(code::kPluginFactory));
  }
  CHECK(r.find("thrower")->error->message().find("no kernel support") != std::string::npos);
}
