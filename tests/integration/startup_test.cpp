// What `cordon` loads and builds at start-up: only the verb a command line names, and the YAML
// parser (yaml-cpp) only when a policy is YAML, from the module next to libcordon-core.
#include <filesystem>
#include <fstream>

#include "cli.hpp"

namespace fs = std::filesystem;

namespace {

// A copy of the build's `cordon` (bin/), its full executable (libexec/cordon/) and
// libcordon-core (lib/) in `root`, laid out as installed (the full executable finds its core
// through $ORIGIN/../../lib), with or without the YAML module.
fs::path copy_cordon(const fs::path& root, bool with_yaml_module) {
  fs::create_directories(root / "bin");
  fs::create_directories(root / "lib" / "cordon");
  fs::create_directories(root / "libexec" / "cordon");
  fs::copy_file(CORDON_CLI, root / "bin" / "cordon");
  if (fs::path(CORDON_CLI) != fs::path(CORDON_FULL_CLI))
    fs::copy_file(CORDON_FULL_CLI, root / "libexec" / "cordon" / "cordon");
  fs::path core = CORDON_CORE_LIBRARY;
  for (const auto& entry : fs::directory_iterator(core.parent_path()))
    if (entry.path().filename().string().rfind("libcordon-core.so", 0) == 0)
      fs::copy(entry.path(), root / "lib" / entry.path().filename(),
               fs::copy_options::copy_symlinks);
  if (with_yaml_module)
    fs::copy_file(CORDON_YAML_MODULE, root / "lib" / "cordon" / "cordon-policy-yaml.so");
  return root / "bin" / "cordon";
}

escape::Exit run(const fs::path& program, std::vector<std::string> args) {
  escape::SpawnOptions o;
  o.argv = {program.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  return escape::run_process(o);
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

}  // namespace

TEST_CASE("startup: every verb is reachable, whether or not the command line starts with it",
          "[startup][cli]") {
  auto help = itest::cordon({"--help"});
  CHECK(help.status == 0);
  for (const char* verb :
       {"version", "policy", "run", "backends", "explain", "fs", "job", "scan", "docker"})
    CHECK(help.out.find(verb) != std::string::npos);
  auto first = itest::cordon({"version"});
  auto later = itest::cordon({"--log-level", "warn", "version"});
  CHECK(first.status == 0);
  CHECK(later.status == 0);
  CHECK(first.out == later.out);
  CHECK(first.out.rfind("cordon ", 0) == 0);
  auto run_help = itest::cordon({"run", "--help"});
  CHECK(run_help.status == 0);
  CHECK(run_help.out.find("--backend") != std::string::npos);
  auto unknown = itest::cordon({"no-such-verb"});
  CHECK(unknown.status != 0);
}

TEST_CASE("startup: a YAML policy is read by the yaml module, and refused by name without it",
          "[startup][cli]") {
  itest::Scratch scratch;
  write(scratch / "policy.yaml", "version: 1\nfilesystem:\n  read: [/usr]\n");
  write(scratch / "broken.yaml", "version: 1\nfilesystem:\n  read: [/usr\n");

  auto with = copy_cordon(scratch / "with", true);
  auto ok = run(with, {"policy", "check", (scratch / "policy.yaml").string()});
  INFO(ok.err);
  CHECK(ok.status == 0);
  auto broken = run(with, {"policy", "check", (scratch / "broken.yaml").string()});
  CHECK(broken.status != 0);
  CHECK(broken.err.find("CRD2002") != std::string::npos);
  CHECK(broken.err.find("broken.yaml:4:1") != std::string::npos);

  auto without = copy_cordon(scratch / "without", false);
  auto refused = run(without, {"policy", "check", (scratch / "policy.yaml").string()});
  INFO(refused.err);
  CHECK(refused.status != 0);
  CHECK(refused.err.find("CRD2011") != std::string::npos);
  CHECK(refused.err.find("cordon-policy-yaml.so") != std::string::npos);
  // A TOML policy needs no module.
  write(scratch / "policy.toml", "version = 1\n[filesystem]\nread = [\"/usr\"]\n");
  CHECK(run(without, {"policy", "check", (scratch / "policy.toml").string()}).status == 0);
}

TEST_CASE("startup: cordon links no yaml-cpp, spdlog or fmt library, and its front end none",
          "[startup][cli]") {
  auto full = run("/usr/bin/ldd", {CORDON_FULL_CLI});
  REQUIRE(full.status == 0);
  CHECK(full.out.find("libcordon-core") != std::string::npos);
  for (const char* lib : {"libyaml-cpp", "libspdlog", "libfmt"}) {
    INFO(lib);
    CHECK(full.out.find(lib) == std::string::npos);
  }
  if (fs::path(CORDON_CLI) == fs::path(CORDON_FULL_CLI)) return;  // no front end built
  auto front = run("/usr/bin/ldd", {CORDON_CLI});
  INFO(front.out << front.err);
  if (CORDON_FRONT_STATIC) {
    // The front end's point: no loader, no shared object to map, relocate, copy or tear down.
    // ldd says "statically linked" for a static PIE ("not a dynamic executable" for others).
    std::string said = front.out + front.err;
    CHECK((said.find("statically linked") != std::string::npos ||
           said.find("not a dynamic executable") != std::string::npos));
    CHECK(said.find("=>") == std::string::npos);
  } else {
    // Sanitizer builds: dynamic, but still without the core library.
    CHECK(front.status == 0);
    CHECK(front.out.find("libcordon-core") == std::string::npos);
  }
}
