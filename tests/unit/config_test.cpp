// The configuration file: [plugins] pins, [dispatch] order and [backends] settings, errors with
// line and column; the shipped configuration's default order.
#include <catch2/catch.hpp>
#include <cordon/config.hpp>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace cordon;

namespace {

std::vector<Error> errors_of(const std::string& text) {
  try {
    parse_config(text, "cfg.toml");
  } catch (const ErrorList& e) {
    return e.errors();
  }
  return {};
}

}  // namespace

TEST_CASE("config: pins and backend settings are read", "[config][pinning]") {
  auto cfg = parse_config(R"(
[plugins]
allow = ["landlock", "docker"]
sha256.landlock = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"

[backends.docker]
image = "python:3.11-slim"
memory = 3
)",
                          "cfg.toml");
  REQUIRE(cfg.pins.allow);
  CHECK(*cfg.pins.allow == std::vector<std::string>{"landlock", "docker"});
  CHECK(cfg.pins.sha256.at("landlock") ==
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
  CHECK(cfg.pins.allows("docker"));
  CHECK_FALSE(cfg.pins.allows("none"));
  CHECK(cfg.backends.at("docker").as_object().at("image").as_string() == "python:3.11-slim");
  CHECK(cfg.backends.at("docker").as_object().at("memory").as_int64() == 3);
}

TEST_CASE("config: nothing is pinned by default", "[config][pinning]") {
  auto cfg = parse_config("", "cfg.toml");
  CHECK_FALSE(cfg.pins.allow);
  CHECK(cfg.pins.sha256.empty());
  CHECK(cfg.pins.allows("anything"));
}

TEST_CASE("config: every problem is reported with its line and column", "[config][pinning]") {
  auto errors = errors_of(R"([plugins]
alow = ["landlock"]
sha256.docker = "abc"
sha256.none = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
[plugin]
)");
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].code() == "CRD2003");
  CHECK(std::string(errors[0].what()) ==
        "cfg.toml:2:1: unknown key 'alow' in [plugins] (did you mean 'allow'?)");
  CHECK(errors[1].code() == "CRD3011");
  CHECK(std::string(errors[1].what()) ==
        "cfg.toml:3:17: plugins.sha256.docker must be 64 hex digits, saw 'abc'");
  CHECK(errors[2].code() == "CRD3011");
  CHECK(std::string(errors[2].what()) ==
        "cfg.toml:4:15: plugins.sha256.none pins nothing: 'none' is built into cordon");
  CHECK(errors[3].code() == "CRD2003");
  CHECK(std::string(errors[3].what()) ==
        "cfg.toml:5:2: unknown key 'plugin' at the top level (did you mean 'plugins'?)");
}

TEST_CASE("config: wrong types and syntax errors", "[config][pinning]") {
  auto types = errors_of("[plugins]\nallow = \"landlock\"\n");
  REQUIRE(types.size() == 1);
  CHECK(types[0].code() == "CRD2004");
  CHECK(std::string(types[0].what()) ==
        "cfg.toml:2:9: 'plugins.allow' must be an array of backend names, saw a string");
  auto bad_name = errors_of("[plugins]\nallow = [\"Land Lock\"]\n");
  REQUIRE(bad_name.size() == 1);
  CHECK(bad_name[0].code() == "CRD3011");
  CHECK(bad_name[0].where()->line == 2);
  CHECK(bad_name[0].where()->column == 10);
  auto syntax = errors_of("[plugins\nallow = 1\n");
  REQUIRE(syntax.size() == 1);
  CHECK(syntax[0].code() == "CRD2002");
  CHECK(syntax[0].where()->line == 1);
}

TEST_CASE("config: --config must exist, the default file is optional", "[config][pinning]") {
  try {
    load_config(std::filesystem::path("/nonexistent/cordon.toml"));
    FAIL("no error");
  } catch (const ErrorList& e) {
    REQUIRE(e.errors().size() == 1);
    CHECK(e.errors()[0].code() == "CRD2001");
    CHECK(std::string(e.errors()[0].what()) ==
          "cannot read configuration '/nonexistent/cordon.toml': No such file or directory");
  }
  char dir[] = "/tmp/cordon-xdg-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  ::setenv("XDG_CONFIG_HOME", dir, 1);
  CHECK(default_config_path() == std::filesystem::path(dir) / "cordon" / "config.toml");
  CHECK_FALSE(load_config(std::nullopt).pins.allow);  // no file: nothing pinned
  std::filesystem::create_directories(std::filesystem::path(dir) / "cordon");
  std::ofstream(std::filesystem::path(dir) / "cordon" / "config.toml") << "[plugins]\nallow = []\n";
  auto cfg = load_config(std::nullopt);
  REQUIRE(cfg.pins.allow);
  CHECK(cfg.pins.allow->empty());
  CHECK(cfg.source == (std::filesystem::path(dir) / "cordon" / "config.toml").string());
  ::unsetenv("XDG_CONFIG_HOME");
  std::filesystem::remove_all(dir);
}

TEST_CASE("config: a file another user could have written is refused, never read",
          "[config][pinning][trust]") {
  char dir[] = "/tmp/cordon-cfgtrust-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  std::filesystem::path file = std::filesystem::path(dir) / "config.toml";
  std::ofstream(file) << "[backends.landlock]\ngid = 4\n";
  ::chmod(file.c_str(), 0644);
  CHECK(load_config(file).source == file.string());  // cordon's user's own: read
  auto refused = [&file](const std::string& why) {
    try {
      load_config(file);
      FAIL("read");
    } catch (const ErrorList& e) {
      REQUIRE(e.errors().size() == 1);
      CHECK(e.errors()[0].code() == "CRD1006");
      CHECK(std::string(e.errors()[0].what()).find(why) != std::string::npos);
    }
  };
  ::chmod(file.c_str(), 0664);
  refused("is writable by its group");
  ::chmod(file.c_str(), 0646);
  refused("is writable by every user");
  if (::geteuid() == 0) {  // only root can give a file away
    ::chmod(file.c_str(), 0644);
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    refused("is owned by uid 65534, neither root nor cordon's uid");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("config: without HOME the configuration is the user database's home's, as the jobs'",
          "[config][pinning][trust]") {
  const char* saved = std::getenv("HOME");
  std::string home = saved ? saved : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CONFIG_HOME");
  passwd* pw = ::getpwuid(::getuid());
  REQUIRE(pw != nullptr);
  CHECK(default_config_path() ==
        std::filesystem::path(pw->pw_dir) / ".config" / "cordon" / "config.toml");
  if (saved) ::setenv("HOME", home.c_str(), 1);
}

TEST_CASE("config: [dispatch] order is read in order", "[config][dispatch]") {
  auto cfg = parse_config("[dispatch]\norder = [\"docker\", \"landlock\", \"mine\"]\n", "cfg.toml");
  CHECK(cfg.dispatch_order == std::vector<std::string>{"docker", "landlock", "mine"});
  CHECK(cfg.dispatch_source == "cfg.toml");
  auto unset = parse_config("[plugins]\nallow = []\n", "cfg.toml");
  CHECK(unset.dispatch_order.empty());
  CHECK(unset.dispatch_source.empty());
  auto empty = parse_config("[dispatch]\norder = []\n", "cfg.toml");
  CHECK(empty.dispatch_order.empty());
  CHECK(empty.dispatch_source == "cfg.toml");  // set, to nothing
}

TEST_CASE("config: a bad [dispatch] value is an error with file:line:col", "[config][dispatch]") {
  auto errors = errors_of(R"([dispatch]
order = ["landlock", 3, "Dock er", "none", "landlock"]
ordre = []
)");
  REQUIRE(errors.size() == 5);
  CHECK(errors[0].code() == "CRD2004");
  CHECK(std::string(errors[0].what()) ==
        "cfg.toml:2:22: 'dispatch.order' must be an array of backend names, saw an integer");
  CHECK(errors[1].code() == "CRD2005");
  CHECK(std::string(errors[1].what()) ==
        "cfg.toml:2:25: 'Dock er' in dispatch.order is not a backend name");
  CHECK(errors[2].code() == "CRD2005");
  CHECK(std::string(errors[2].what()) ==
        "cfg.toml:2:36: 'none' in dispatch.order: it isolates nothing and runs only when named");
  CHECK(errors[3].code() == "CRD2005");
  CHECK(std::string(errors[3].what()) ==
        "cfg.toml:2:44: 'landlock' is listed twice in dispatch.order");
  CHECK(errors[4].code() == "CRD2003");
  CHECK(std::string(errors[4].what()) ==
        "cfg.toml:3:1: unknown key 'ordre' in [dispatch] (did you mean 'order'?)");
  auto types = errors_of("dispatch = 1\n[x]\n");
  REQUIRE(types.size() == 2);
  CHECK(std::string(types[0].what()) ==
        "cfg.toml:1:12: 'dispatch' must be a table, saw an integer");
  auto order = errors_of("[dispatch]\norder = \"landlock\"\n");
  REQUIRE(order.size() == 1);
  CHECK(std::string(order[0].what()) ==
        "cfg.toml:2:9: 'dispatch.order' must be an array of backend names, saw a string");
}

TEST_CASE("config: the shipped file gives the default order, the operator's replaces it",
          "[config][dispatch]") {
  // The build tree's copy of config/defaults.toml, found from the core library's location.
  auto shipped = shipped_config_file();
  REQUIRE_FALSE(shipped.empty());
  CHECK(shipped.filename() == "defaults.toml");
  auto defaults = load_config_file(shipped);
  CHECK(defaults.dispatch_order == std::vector<std::string>{"landlock", "docker"});
  char dir[] = "/tmp/cordon-dispatch-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  auto file = std::filesystem::path(dir) / "config.toml";
  std::ofstream(file) << "[plugins]\nallow = [\"none\"]\n";
  auto cfg = load_config(file);  // no [dispatch]: the shipped order
  CHECK(cfg.dispatch_order == defaults.dispatch_order);
  CHECK(cfg.dispatch_source == shipped.string());
  std::ofstream(file) << "[dispatch]\norder = [\"docker\"]\n";
  cfg = load_config(file);
  CHECK(cfg.dispatch_order == std::vector<std::string>{"docker"});
  CHECK(cfg.dispatch_source == file.string());
  std::ofstream(file) << "[dispatch]\norder = [\"none\"]\n";
  try {
    load_config(file);
    FAIL("no error");
  } catch (const ErrorList& e) {
    REQUIRE(e.errors().size() == 1);
    CHECK(e.errors()[0].code() == "CRD2005");
    CHECK(std::string(e.errors()[0].what()) ==
          file.string() +
              ":2:10: 'none' in dispatch.order: it isolates nothing and runs only "
              "when named");
  }
  std::filesystem::remove_all(dir);
}
