// The plugin loader with real shared libraries built by tests/fixtures/plugins.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/plugin.hpp>

#include <filesystem>

#include "discovery.hpp"
#include "runtime_test_support.hpp"

using namespace cordon;
using cordon::test::fixture_dir;
using cordon::test::has;
using cordon::test::isolated;

namespace {

std::string plugin(const std::string& fixture_case, const std::string& name) {
  return (fixture_dir(fixture_case) / ("cordon-backend-" + name + ".so")).string();
}

// Whether the library is mapped in this process, without loading it.
bool is_loaded(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h) ::dlclose(h);
  return h != nullptr;
}

// The fixture's own count of factory calls (the library must be loaded).
int factory_calls(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h);
  int calls = *static_cast<int*>(::dlsym(h, "cordon_fixture_factory_calls"));
  ::dlclose(h);
  return calls;
}

const Error& refusal(Registry& r, const std::string& name) {
  const BackendEntry* e = r.find(name);
  REQUIRE(e);
  CHECK(r.backend(name) == nullptr);
  REQUIRE(e->error);
  return *e->error;
}

}  // namespace

TEST_CASE("registry: a good plugin is found, created, probed and run", "[registry][plugin]") {
  Registry r(isolated({fixture_dir("good")}));
  const BackendEntry* e = r.find("good");
  REQUIRE(e);
  CHECK(e->loaded);
  CHECK_FALSE(e->created);
  CHECK(e->version == "1.0");
  CHECK(e->path == plugin("good", "good"));
  CHECK(e->toolchain == core_identity().toolchain);
  const ProbeResult* p = r.probe("good");
  REQUIRE(p);
  CHECK(p->available);
  CHECK(p->proves("net.deny"));
  CHECK(e->created);
  CHECK(r.diagnostics().empty());
}

TEST_CASE("registry: a plugin built for another ABI is refused and its factory never runs",
          "[registry][plugin]") {
  Registry r(isolated({fixture_dir("badabi")}));
  const Error& e = refusal(r, "badabi");
  CHECK(e.code() == "CRD3003");
  CHECK(std::string(e.what()) == "plugin '" + plugin("badabi", "badabi") +
                                     "' was built for plugin ABI 999 but this cordon needs "
                                     "plugin ABI " +
                                     std::to_string(core_identity().abi_version));
  CHECK(factory_calls(plugin("badabi", "badabi")) == 0);
  REQUIRE(r.diagnostics().size() == 1);
  CHECK(r.diagnostics()[0].error.code() == "CRD3003");
}

TEST_CASE("registry: each backend's locality comes from its info record", "[registry][plugin]") {
  Registry r(isolated({fixture_dir("good"), fixture_dir("remote")}));
  const BackendEntry* good = r.find("good");
  const BackendEntry* far = r.find("faraway");
  const BackendEntry* none = r.find("none");
  REQUIRE(good);
  REQUIRE(far);
  REQUIRE(none);
  CHECK(good->locality == Locality::local);
  CHECK(far->locality == Locality::remote);
  CHECK(none->locality == Locality::local);  // the built-in declares its own
  CHECK_FALSE(far->error);
}

TEST_CASE("registry: a locality this cordon does not know is refused", "[registry][plugin]") {
  Registry r(isolated({fixture_dir("badlocality")}));
  const Error& e = refusal(r, "badlocality");
  CHECK(e.code() == "CRD3003");
  CHECK(std::string(e.what()) == "plugin '" + plugin("badlocality", "badlocality") +
                                     "' declares locality 7, which this cordon does not know "
                                     "(0 local, 1 remote)");
  CHECK(factory_calls(plugin("badlocality", "badlocality")) == 0);
}

TEST_CASE("registry: a plugin built with another toolchain is refused naming both sides",
          "[registry][plugin]") {
  Registry r(isolated({fixture_dir("badtool")}));
  const Error& e = refusal(r, "badtool");
  CHECK(e.code() == "CRD3004");
  CHECK(std::string(e.what()) ==
        "plugin '" + plugin("badtool", "badtool") +
            "' was built with 'gcc-1 libstdc++-1 boost-1_0 sdk-0.0.1' but this cordon was built "
            "with '" +
            core_identity().toolchain + "'");
  CHECK(factory_calls(plugin("badtool", "badtool")) == 0);
}

TEST_CASE("registry: an info record of another size is refused before it is read",
          "[registry][plugin]") {
  Registry r(isolated({fixture_dir("short")}));
  const Error& e = refusal(r, "short");
  CHECK(e.code() == "CRD3003");
  CHECK(std::string(e.what()) == "plugin '" + plugin("short", "short") +
                                     "' has a 4-byte info record but this cordon expects " +
                                     std::to_string(sizeof(PluginInfo)) + " bytes");
  CHECK(factory_calls(plugin("short", "short")) == 0);
}

TEST_CASE("registry: a plugin without the factory symbol is refused", "[registry][plugin]") {
  Registry r(isolated({fixture_dir("nosym")}));
  const Error& e = refusal(r, "nosym");
  CHECK(e.code() == "CRD3002");
  CHECK(std::string(e.what()) ==
        "plugin '" + plugin("nosym", "nosym") + "' does not export 'cordon_plugin_create'");
}

TEST_CASE("registry: a file that does not load is a diagnostic with the loader's reason",
          "[registry][plugin]") {
  SECTION("not an ELF file") {
    Registry r(isolated({fixture_dir("garbage")}));
    const Error& e = refusal(r, "garbage");
    INFO(e.what());
    CHECK(e.code() == "CRD3001");
    CHECK(std::string(e.what()) ==
          "cannot load plugin '" + plugin("garbage", "garbage") + "': invalid ELF header");
  }
  SECTION("an undefined symbol") {
    Registry r(isolated({fixture_dir("undefined")}));
    const Error& e = refusal(r, "undefined");
    CHECK(e.code() == "CRD3001");
    CHECK(std::string(e.what()) == "cannot load plugin '" + plugin("undefined", "undefined") +
                                       "': undefined symbol: cordon_fixture_symbol_nobody_defines");
  }
}

TEST_CASE("registry: a factory that throws or returns nothing is a diagnostic",
          "[registry][plugin]") {
  SECTION("throws") {
    Registry r(isolated({fixture_dir("throwfactory")}));
    const Error& e = refusal(r, "throwfactory");
    CHECK(e.code() == "CRD3005");
    CHECK(std::string(e.what()) ==
          "plugin of backend 'throwfactory' could not create its backend: constructor exploded");
  }
  SECTION("returns nothing") {
    Registry r(isolated({fixture_dir("nullfactory")}));
    const Error& e = refusal(r, "nullfactory");
    CHECK(e.code() == "CRD3005");
    CHECK(std::string(e.what()) ==
          "plugin of backend 'nullfactory' could not create its backend: the factory returned "
          "nothing");
    CHECK(factory_calls(plugin("nullfactory", "nullfactory")) == 1);
  }
}

TEST_CASE("registry: a probe that throws is a diagnostic, not a crash", "[registry][plugin]") {
  Registry r(isolated({fixture_dir("throwprobe")}));
  CHECK(r.backend("throwprobe") != nullptr);
  CHECK(r.probe("throwprobe") == nullptr);
  const BackendEntry* e = r.find("throwprobe");
  REQUIRE(e->error);
  CHECK(e->error->code() == "CRD3006");
  CHECK(std::string(e->error->what()) == "probe of backend 'throwprobe' threw: probe exploded");
}

TEST_CASE("registry: the first of two plugins with one name wins, the other is a warning",
          "[registry][plugin]") {
  auto first = GENERATE(std::string("good"), std::string("dup"));
  auto second = first == "good" ? std::string("dup") : std::string("good");
  Registry r(isolated({fixture_dir(first), fixture_dir(second)}));
  SECTION("by name") { REQUIRE(r.find("good")); }
  SECTION("listing all") { r.discover(); }
  const BackendEntry* e = r.find("good");
  REQUIRE(e);
  CHECK(e->path == plugin(first, "good"));
  CHECK(e->version == (first == "good" ? "1.0" : "2.0"));
  REQUIRE(r.diagnostics().size() == 1);
  const Diagnostic& d = r.diagnostics()[0];
  CHECK(d.level == Diagnostic::Level::warning);
  CHECK(d.error.code() == "CRD3007");
  CHECK(std::string(d.error.what()) == "plugin '" + plugin(second, "good") + "' is shadowed by '" +
                                           plugin(first, "good") + "' earlier on the search path");
}

TEST_CASE("registry: a plugin file whose record names another backend is refused",
          "[registry][plugin]") {
  Registry r(isolated({fixture_dir("misnamed")}));
  const Error& e = refusal(r, "alias");
  CHECK(e.code() == "CRD3012");
  CHECK(std::string(e.what()) == "plugin '" + plugin("misnamed", "alias") +
                                     "' calls itself 'good' but its file name says 'alias'");
}

TEST_CASE("registry: a plugin not on the allow list is refused before it is loaded",
          "[registry][pinning]") {
  PluginPins pins;
  pins.allow = std::vector<std::string>{"good"};
  Registry r(isolated({fixture_dir("pinned"), fixture_dir("good")}, pins));
  const Error& e = refusal(r, "pinned");
  CHECK(e.code() == "CRD3008");
  CHECK(std::string(e.what()) ==
        "plugin '" + plugin("pinned", "pinned") + "' (backend 'pinned') is not on the allow list");
  CHECK_FALSE(is_loaded(plugin("pinned", "pinned")));
  CHECK(r.probe("good") != nullptr);  // the allowed one works
  SECTION("the built-in none backend obeys the allow list too") {
    const Error& none = refusal(r, "none");
    CHECK(none.code() == "CRD3008");
  }
}

TEST_CASE("registry: a plugin whose digest differs from its pin is refused before it is loaded",
          "[registry][pinning]") {
  auto good = cordon::test::capture("sha256sum '" + plugin("good", "good") + "'");
  REQUIRE(good.status == 0);
  std::string good_digest = good.out.substr(0, 64);
  SECTION("wrong digest") {
    PluginPins pins;
    pins.sha256["pinned"] = std::string(64, '0');
    Registry r(isolated({fixture_dir("pinned")}, pins));
    const Error& e = refusal(r, "pinned");
    CHECK(e.code() == "CRD3009");
    auto actual = cordon::test::capture("sha256sum '" + plugin("pinned", "pinned") + "'");
    CHECK(std::string(e.what()) == "plugin '" + plugin("pinned", "pinned") + "' has SHA-256 '" +
                                       actual.out.substr(0, 64) + "' but 'pinned' is pinned to '" +
                                       std::string(64, '0') + "'");
    CHECK_FALSE(is_loaded(plugin("pinned", "pinned")));
  }
  SECTION("matching digest") {
    PluginPins pins;
    pins.sha256["good"] = good_digest;
    Registry r(isolated({fixture_dir("good")}, pins));
    CHECK(r.probe("good") != nullptr);
    CHECK(r.diagnostics().empty());
  }
}

TEST_CASE("registry: naming one backend loads no other plugin", "[registry]") {
  Registry r(isolated({fixture_dir("lazy"), fixture_dir("good")}));
  REQUIRE(r.find("good"));
  CHECK_FALSE(is_loaded(plugin("lazy", "lazy")));
  auto names = r.names();  // lists files, still loads nothing
  CHECK(names == std::vector<std::string>{"good", "lazy", "none"});
  CHECK_FALSE(is_loaded(plugin("lazy", "lazy")));
  r.discover();
  CHECK(is_loaded(plugin("lazy", "lazy")));
  CHECK(factory_calls(plugin("lazy", "lazy")) == 0);  // discovery never calls a factory
}

TEST_CASE("registry: unknown names and missing directories", "[registry]") {
  Registry r(isolated({"/nonexistent/cordon-plugins"}));
  CHECK(r.find("nope") == nullptr);
  CHECK(r.find("../etc") == nullptr);
  REQUIRE(r.diagnostics().size() == 1);
  CHECK(r.diagnostics()[0].error.code() == "CRD3013");
  CHECK(has(r.diagnostics()[0].error.what(),
            "cannot read plugin directory '/nonexistent/cordon-plugins' (--plugin-dir)"));
  CHECK(r.find("none") != nullptr);
}

TEST_CASE("registry: loaded libraries stay loaded after the registry is gone", "[registry]") {
  {
    Registry r(isolated({fixture_dir("good")}));
    REQUIRE(r.probe("good"));
  }
  CHECK(is_loaded(plugin("good", "good")));
}

TEST_CASE("discovery: the search path keeps order, drops duplicates, names origins",
          "[registry][discovery]") {
  detail::SearchInputs in;
  in.plugin_dirs = {"/a", "/b/"};
  in.env_path = "/c::/a:/d";
  in.install_dir = "/usr/local/lib/cordon/plugins";
  in.build_dir = "/src/build/plugins-out";
  auto path = detail::build_search_path(in);
  std::vector<std::string> got, origins;
  for (const auto& d : path) got.push_back(d.path.string()), origins.push_back(d.origin);
  CHECK(got == std::vector<std::string>{"/a", "/b", "/c", "/d", "/usr/local/lib/cordon/plugins",
                                        "/src/build/plugins-out"});
  CHECK(origins == std::vector<std::string>{"--plugin-dir", "--plugin-dir", "CORDON_PLUGIN_PATH",
                                            "CORDON_PLUGIN_PATH", "install prefix", "build tree"});
}

TEST_CASE("discovery: a build-tree core searches the build tree's plugin directory",
          "[registry][discovery]") {
  RegistryOptions o;
  o.use_environment = false;
  auto in = detail::gather_search_inputs(o);
  REQUIRE(in.build_dir);
  CHECK(in.build_dir->string() == std::string(CORDON_BINARY_DIR) + "/plugins-out");
  CHECK_FALSE(in.library_dir);
  REQUIRE(in.install_dir);
  CHECK(has(in.install_dir->string(), "cordon/plugins"));
}

TEST_CASE("discovery: plugin file names", "[registry][discovery]") {
  CHECK(detail::backend_name_of("cordon-backend-docker.so") == "docker");
  CHECK_FALSE(detail::backend_name_of("cordon-backend-.so"));
  CHECK_FALSE(detail::backend_name_of("libcordon-backend-docker.so"));
  CHECK_FALSE(detail::backend_name_of("cordon-backend-docker.so.1"));
  CHECK(valid_backend_name("e2b"));
  CHECK(valid_backend_name("my_backend-2"));
  CHECK_FALSE(valid_backend_name("Docker"));
  CHECK_FALSE(valid_backend_name("-x"));
  CHECK_FALSE(valid_backend_name(std::string(32, 'a')));
}

TEST_CASE("registry: a plugin another user could have written is refused, never loaded",
          "[registry][plugin][trust]") {
  char made[] = "/tmp/cordon-plugtrust-XXXXXX";
  REQUIRE(::mkdtemp(made));
  const std::filesystem::path dir = made, file = dir / "cordon-backend-good.so";
  std::filesystem::copy_file(plugin("good", "good"), file);
  ::chmod(file.c_str(), 0644);
  auto refused_for = [&dir](const std::string& why) {
    Registry r(isolated({dir}));
    const Error& e = refusal(r, "good");
    CHECK(e.code() == std::string("CRD1006"));
    CHECK_THAT(e.message(), Catch::Contains(why));
  };
  ::chmod(dir.c_str(), 0777);
  refused_for("'" + dir.string() + "' is writable by every user");
  ::chmod(dir.c_str(), 0700);
  ::chmod(file.c_str(), 0664);
  refused_for("'" + file.string() + "' is writable by its group");
  if (::geteuid() == 0) {  // only root can give a file away
    ::chmod(file.c_str(), 0644);
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    refused_for("is owned by uid 65534");
    REQUIRE(::chown(file.c_str(), 0, 0) == 0);
  }
  ::chmod(file.c_str(), 0644);
  CHECK_FALSE(is_loaded(file.string()));  // none of the refusals ran its code
  Registry r(isolated({dir}));
  CHECK(r.backend("good") != nullptr);  // the same file, root's or cordon's user's alone
  std::filesystem::remove_all(dir);
}

TEST_CASE("registry: a plugin is loaded by the path that was checked, its symlinks resolved",
          "[registry][plugin][trust]") {
  char made[] = "/tmp/cordon-plugreal-XXXXXX";
  REQUIRE(::mkdtemp(made));
  const std::filesystem::path dir = std::filesystem::canonical(made);
  std::filesystem::create_directory(dir / "real");
  std::filesystem::copy_file(plugin("good", "good"), dir / "real" / "cordon-backend-good.so");
  std::filesystem::create_directory_symlink(dir / "real", dir / "link");
  // Another user who owned `link` could point it elsewhere between the check and the load:
  // the loader opens the resolved path, so the library's own name is that path.
  Registry r(isolated({dir / "link"}));
  REQUIRE(r.backend("good") != nullptr);
  const std::string real = (dir / "real" / "cordon-backend-good.so").string();
  void* h = ::dlopen(real.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h);
  link_map* map = nullptr;
  REQUIRE(::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0);
  CHECK(std::string(map->l_name) == real);
  ::dlclose(h);
  std::filesystem::remove_all(dir);
}
