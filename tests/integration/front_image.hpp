// The front end's image, for the start-up tests: a copy of the build's `cordon` laid out as
// installed, and what readelf and nm say of the front end's segments and functions.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace front_image {

namespace fs = std::filesystem;

constexpr unsigned long long kHugePage = 2ull << 20;

// A copy of the build's `cordon` (bin/), its full executable (libexec/cordon/) and
// libcordon-core (lib/) in `root`, laid out as installed (the full executable finds its core
// through $ORIGIN/../../lib), with or without the YAML module.
inline fs::path copy_cordon(const fs::path& root, bool with_yaml_module) {
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

inline escape::Exit run_program(const fs::path& program, std::vector<std::string> args) {
  escape::SpawnOptions o;
  o.argv = {program.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  return escape::run_process(o);
}

// Addresses of the front end's functions by name; a name defined more than once (static
// functions of several files) is left out, its place being ambiguous.
inline std::map<std::string, unsigned long long> function_addresses(const std::string& program) {
  auto nm = run_program("/usr/bin/nm", {"--defined-only", program});
  REQUIRE(nm.status == 0);
  std::map<std::string, unsigned long long> at;
  std::set<std::string> repeated;
  std::istringstream lines(nm.out);
  std::string address, type, name;
  while (lines >> address >> type >> name) {
    if (type != "t" && type != "T" && type != "W" && type != "i") continue;
    if (!at.emplace(name, std::stoull(address, nullptr, 16)).second) repeated.insert(name);
  }
  for (const auto& name : repeated) at.erase(name);
  return at;
}

// Whether the front end is the static executable laid out by lld that the layout tests check.
// Linked without lld, it is not: that fails under CI=true, and is said otherwise.
inline bool laid_out_front_end() {
  if (fs::path(CORDON_CLI) == fs::path(CORDON_FULL_CLI) || !CORDON_FRONT_STATIC) return false;
  if (CORDON_FRONT_LAID_OUT) return true;
  if (itest::in_ci()) FAIL("the front end was linked without lld (CI=true): install lld");
  WARN("skipped: the front end was linked without lld, in the default code layout");
  return false;
}

struct Segment {
  unsigned long long offset = 0, vaddr = 0, filesz = 0, memsz = 0, align = 0;
  std::string flags;
};

// The loadable segments of `program`, from readelf's program headers.
inline std::vector<Segment> load_segments(const std::string& program) {
  auto headers = run_program("/usr/bin/readelf", {"-lW", program});
  REQUIRE(headers.status == 0);
  std::vector<Segment> out;
  std::istringstream lines(headers.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string type, offset, vaddr, paddr, filesz, memsz, flag;
    if (!(words >> type) || type != "LOAD") continue;
    words >> offset >> vaddr >> paddr >> filesz >> memsz;
    Segment seg{std::stoull(offset, nullptr, 16),
                std::stoull(vaddr, nullptr, 16),
                std::stoull(filesz, nullptr, 16),
                std::stoull(memsz, nullptr, 16),
                0,
                ""};
    // The flags are one to three words ("R", "R E", "RW"), then the alignment.
    std::vector<std::string> rest;
    while (words >> flag) rest.push_back(flag);
    REQUIRE_FALSE(rest.empty());
    seg.align = std::stoull(rest.back(), nullptr, 16);
    rest.pop_back();
    for (const auto& f : rest) seg.flags += f;
    out.push_back(seg);
  }
  return out;
}

}  // namespace front_image
