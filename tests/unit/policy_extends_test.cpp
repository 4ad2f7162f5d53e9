// Tests of `extends`: presets and files, merging rules, provenance, cycles and depth.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include <algorithm>
#include <filesystem>

#include "policy_test_support.hpp"

using namespace cordon;
using test::errors_of;
using test::TempDir;

TEST_CASE("policy_extends: scalars and tables override, lists replace", "[policy][extends]") {
  TempDir dir;
  auto child = dir.write("child.toml",
                         "version = 1\n"                                  // 1
                         "[policy]\n"                                     // 2
                         "name = \"child\"\n"                             // 3
                         "extends = \"standard\"\n"                       // 4
                         "[limits]\n"                                     // 5
                         "memory_mb = 1024\n"                             // 6
                         "[process]\n"                                    // 7
                         "blocked_commands = [\"ssh\"]\n"                 // 8
                         "[env]\n"                                        // 9
                         "set = { PYTHONDONTWRITEBYTECODE = \"1\" }\n");  // 10
  Policy p = load_policy_file(child);
  Policy standard = load_preset("standard");
  CHECK(p.name == "child");
  CHECK(p.extends == "standard");
  CHECK(p.limits.memory_mb == 1024u);                              // scalar overrides
  CHECK(p.limits.max_processes == standard.limits.max_processes);  // unset: inherited
  CHECK(p.limits.timeout == standard.limits.timeout);
  CHECK(p.process.blocked_commands == std::vector<std::string>{"ssh"});  // list replaces
  CHECK(p.filesystem.blocked == standard.filesystem.blocked);
  CHECK(p.env.set ==
        std::map<std::string, std::string>{{"LANG", "C.UTF-8"}, {"PYTHONDONTWRITEBYTECODE", "1"}});
  CHECK(p.sources == std::vector<std::string>{"preset:standard", child.string()});
}

TEST_CASE("policy_extends: origins record where each final value was written",
          "[policy][extends]") {
  TempDir dir;
  auto child = dir.write("child.yaml",
                         "version: 1\n"
                         "policy:\n"
                         "  extends: standard\n"
                         "limits:\n"
                         "  memory_mb: 1024\n"
                         "env:\n"
                         "  set: {EXTRA: x}\n");
  Policy p = load_policy_file(child);
  CHECK(p.origins.at("limits.memory_mb") == Location{child.string(), 5, 14});
  CHECK(p.origins.at("policy.extends") == Location{child.string(), 3, 12});
  CHECK(p.origins.at("env.set.EXTRA") == Location{child.string(), 7, 16});
  // policies/standard.toml writes max_processes on line 10.
  CHECK(p.origins.at("limits.max_processes") == Location{"preset:standard", 10, 17});
  CHECK(p.origins.at("env.set.LANG").file == "preset:standard");
  CHECK(p.origins.at("version").file == child.string());
  CHECK(p.origins.count("limits.cpu_percent") == 0);  // never written: the default
  CHECK(p.origins.count("limits") == 0);              // a section is not a value
}

TEST_CASE("policy_extends: a relative path resolves against the extending file",
          "[policy][extends]") {
  TempDir dir;
  dir.write("base.yaml", "version: 1\npolicy: {name: base}\nlimits: {memory_mb: 77}\n");
  dir.write("mid/mid.toml",
            "version = 1\n[policy]\nextends = \"../base.yaml\"\n[limits]\ncpu_seconds = 5\n");
  auto top = dir.write("mid/deeper/top.toml", "version = 1\n[policy]\nextends = \"../mid.toml\"\n");
  Policy p = load_policy_file(top);
  CHECK(p.name == "base");  // not overridden, so inherited
  CHECK(p.limits.memory_mb == 77u);
  CHECK(p.limits.cpu_seconds == 5u);
  REQUIRE(p.sources.size() == 3);
  CHECK(p.sources[2] == top.string());
  // The files among them, where each leads: what every run under the policy is kept from.
  auto canonical = [](const std::filesystem::path& f) {
    return std::filesystem::canonical(f).string();
  };
  auto has = [](const Policy& policy, const std::string& file) {
    return std::find(policy.files.begin(), policy.files.end(), file) != policy.files.end();
  };
  CHECK(has(p, canonical(dir.path() / "base.yaml")));
  CHECK(has(p, canonical(dir.path() / "mid/mid.toml")));
  CHECK(has(p, canonical(top)));
  // Text loads resolve relative extends against base_dir; the text itself is no file.
  Policy t =
      load_policy_text("version = 1\n[policy]\nextends = \"base.yaml\"\n", "t.toml", dir.path());
  CHECK(t.limits.memory_mb == 77u);
  CHECK(has(t, canonical(dir.path() / "base.yaml")));
  CHECK_FALSE(has(t, canonical(dir.path()) + "/t.toml"));
  // A file named through a link is kept by both names: the link could be swapped.
  // (Beside the file: a relative `extends` resolves against the directory of the name given.)
  auto link = dir.path() / "mid/deeper/link.toml";
  std::filesystem::create_symlink("top.toml", link);
  Policy linked = load_policy_file(link);
  CHECK(has(linked, canonical(top)));
  CHECK(has(linked, link.string()));
}

TEST_CASE("policy_extends: a file without extends starts from the defaults", "[policy][extends]") {
  Policy p = load_policy_text("version = 1\n[limits]\nmemory_mb = 5\n", "p.toml");
  Policy defaults;
  defaults.limits.memory_mb = 5;
  CHECK(p.same_rules(defaults));
  CHECK(p.sources == std::vector<std::string>{"p.toml"});
}

TEST_CASE("policy_extends: cycles are refused naming the chain", "[policy][extends]") {
  TempDir dir;
  auto a = dir.write("a.toml", "version = 1\n[policy]\nextends = \"b.toml\"\n");
  auto b = dir.write("b.toml", "version = 1\n[policy]\nextends = \"./a.toml\"\n");
  auto errors = errors_of([&] { load_policy_file(a); });
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2008", 3, 11);
  CHECK(errors[0].where()->file == b.string());
  CHECK(errors[0].message() == "'extends' cycle: " + a.string() + " -> " + b.string() + " -> " +
                                   (dir.path() / "./a.toml").string());

  auto self = dir.write("self.yaml", "version: 1\npolicy: {extends: self.yaml}\n");
  auto self_errors = errors_of([&] { load_policy_file(self); });
  REQUIRE(self_errors.size() == 1);
  CHECK_ERROR_AT(self_errors, "CRD2008", 2, 19);
}

TEST_CASE("policy_extends: chains up to 8 links load, deeper ones are refused",
          "[policy][extends]") {
  TempDir dir;
  // p0 extends p1 ... extends pN; pN extends nothing.
  auto chain = [&](int links) {
    for (int i = 0; i <= links; ++i) {
      std::string text = "version = 1\n[limits]\nmemory_mb = " + std::to_string(100 + i) + "\n";
      if (i < links) text += "[policy]\nextends = \"p" + std::to_string(i + 1) + ".toml\"\n";
      dir.write("p" + std::to_string(i) + ".toml", text);
    }
    return dir.path() / "p0.toml";
  };
  Policy ok = load_policy_file(chain(kMaxExtendsDepth));
  CHECK(ok.limits.memory_mb == 100u);
  CHECK(ok.sources.size() == static_cast<std::size_t>(kMaxExtendsDepth + 1));
  auto errors = errors_of([&] { load_policy_file(chain(kMaxExtendsDepth + 1)); });
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2009", 5, 11);
  CHECK(errors[0].where()->file == (dir.path() / "p8.toml").string());
}

TEST_CASE("policy_extends: an unknown preset lists the presets", "[policy][extends]") {
  auto errors = test::text_errors("version = 1\n[policy]\nextends = \"standrd\"\n", "p.toml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2007", 3, 11);
  CHECK(errors[0].message() == "unknown preset 'standrd' (did you mean 'standard'?)");
  CHECK(errors[0].hint().find("minimal, standard, generous, strict, permissive") !=
        std::string::npos);
  CHECK(errors_of([] { load_preset("nope"); }).at(0).code() == "CRD2007");
}

TEST_CASE("policy_extends: a missing or unreadable file is CRD2001 with the reason",
          "[policy][extends]") {
  TempDir dir;
  auto child = dir.write("c.toml", "version = 1\n[policy]\nextends = \"missing.toml\"\n");
  auto errors = errors_of([&] { load_policy_file(child); });
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2001", 3, 11);
  CHECK(errors[0].message().find("No such file or directory") != std::string::npos);

  auto direct = errors_of([&] { load_policy_file(dir.path() / "absent.toml"); });
  REQUIRE(direct.size() == 1);
  CHECK(direct[0].code() == "CRD2001");
  CHECK(direct[0].message() == "cannot read policy '" + (dir.path() / "absent.toml").string() +
                                   "': No such file or directory");
  std::filesystem::create_directory(dir.path() / "d.toml");
  auto directory = errors_of([&] { load_policy_file(dir.path() / "d.toml"); });
  CHECK(directory.at(0).code() == "CRD2001");
  CHECK(directory.at(0).message().find("is a directory") != std::string::npos);
}

TEST_CASE("policy_extends: errors in every file of the chain are reported where they are",
          "[policy][extends]") {
  TempDir dir;
  auto base = dir.write("base.toml", "version = 1\n[limits]\nmemory_mb = 0\n");
  auto child = dir.write("child.toml",
                         "version = 1\n[policy]\nextends = \"base.toml\"\n[limits]\nbogus = 1\n");
  auto errors = errors_of([&] { load_policy_file(child); });
  REQUIRE(errors.size() == 2);
  CHECK_ERROR_AT(errors, "CRD2003", 5, 1);
  CHECK(errors[0].where()->file == child.string());
  CHECK_ERROR_AT(errors, "CRD2005", 3, 13);
  CHECK(errors[1].where()->file == base.string());
}

TEST_CASE("policy_extends: a contradiction across files is caught after merging",
          "[policy][extends]") {
  TempDir dir;
  dir.write("base.toml", "version = 1\n[network]\nconnect_ports = [443]\n");
  auto child = dir.write(
      "child.toml", "version = 1\n[policy]\nextends = \"base.toml\"\n[network]\nallow = true\n");
  auto errors = errors_of([&] { load_policy_file(child); });
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code() == "CRD2006");
  CHECK(errors[0].where()->file == (dir.path() / "base.toml").string());
  // Replacing the list in the child resolves it: lists replace.
  auto fixed = dir.write("fixed.toml",
                         "version = 1\n[policy]\nextends = \"base.toml\"\n[network]\nallow = true\n"
                         "connect_ports = []\n");
  CHECK(load_policy_file(fixed).network.allow);
}
