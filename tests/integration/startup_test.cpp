// What `cordon` loads and builds at start-up: only the verb a command line names, and the YAML
// parser (yaml-cpp) only when a policy is YAML, from the module next to libcordon-core; and how
// the front end is linked (static, its hot functions side by side, its read-only data and code
// laid out for 2 MB pages; startup_pages_test.cpp runs it in them).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "front_image.hpp"

namespace fs = std::filesystem;
using front_image::copy_cordon;
using front_image::function_addresses;
using front_image::kHugePage;
using front_image::laid_out_front_end;
using front_image::load_segments;
using front_image::run_program;
using front_image::Segment;

namespace {

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

}  // namespace

TEST_CASE("startup: every verb is reachable, whether or not the command line starts with it",
          "[startup][cli]") {
  auto help = itest::run_cli({"--help"});
  CHECK(help.status == 0);
  for (const char* verb :
       {"version", "policy", "run", "backends", "explain", "fs", "job", "scan", "docker"})
    CHECK(help.out.find(verb) != std::string::npos);
  auto first = itest::run_cli({"version"});
  auto later = itest::run_cli({"--log-level", "warn", "version"});
  CHECK(first.status == 0);
  CHECK(later.status == 0);
  CHECK(first.out == later.out);
  CHECK(first.out.rfind("cordon ", 0) == 0);
  auto run_help = itest::run_cli({"run", "--help"});
  CHECK(run_help.status == 0);
  CHECK(run_help.out.find("--backend") != std::string::npos);
  auto unknown = itest::run_cli({"no-such-verb"});
  CHECK(unknown.status != 0);
}

TEST_CASE("startup: a YAML policy is read by the yaml module, and refused by name without it",
          "[startup][cli]") {
  itest::Scratch scratch;
  write(scratch / "policy.yaml", "version: 1\nfilesystem:\n  read: [/usr]\n");
  write(scratch / "broken.yaml", "version: 1\nfilesystem:\n  read: [/usr\n");

  auto with = copy_cordon(scratch / "with", true);
  auto ok = run_program(with, {"policy", "check", (scratch / "policy.yaml").string()});
  INFO(ok.err);
  CHECK(ok.status == 0);
  auto broken = run_program(with, {"policy", "check", (scratch / "broken.yaml").string()});
  CHECK(broken.status != 0);
  CHECK(broken.err.find("CRD2002") != std::string::npos);
  CHECK(broken.err.find("broken.yaml:4:1") != std::string::npos);

  auto without = copy_cordon(scratch / "without", false);
  auto refused = run_program(without, {"policy", "check", (scratch / "policy.yaml").string()});
  INFO(refused.err);
  CHECK(refused.status != 0);
  CHECK(refused.err.find("CRD2011") != std::string::npos);
  CHECK(refused.err.find("cordon-policy-yaml.so") != std::string::npos);
  // A TOML policy needs no module.
  write(scratch / "policy.toml", "version = 1\n[filesystem]\nread = [\"/usr\"]\n");
  CHECK(run_program(without, {"policy", "check", (scratch / "policy.toml").string()}).status == 0);
}

TEST_CASE("startup: cordon links no yaml-cpp, spdlog or fmt library, and its front end none",
          "[startup][cli]") {
  auto full = run_program("/usr/bin/ldd", {CORDON_FULL_CLI});
  REQUIRE(full.status == 0);
  CHECK(full.out.find("libcordon-core") != std::string::npos);
  for (const char* lib : {"libyaml-cpp", "libspdlog", "libfmt"}) {
    INFO(lib);
    CHECK(full.out.find(lib) == std::string::npos);
  }
  if (fs::path(CORDON_CLI) == fs::path(CORDON_FULL_CLI)) return;  // no front end built
  auto front = run_program("/usr/bin/ldd", {CORDON_CLI});
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

TEST_CASE("startup: the front end lays out the functions of a run side by side, relocations packed",
          "[startup][cli]") {
  if (!laid_out_front_end()) return;
  auto at = function_addresses(CORDON_CLI);
  std::vector<unsigned long long> hot;
  std::ifstream list(CORDON_HOT_FUNCTIONS);
  for (std::string name; std::getline(list, name);) {
    auto it = name.empty() || name[0] == '#' ? at.end() : at.find(name);
    if (it != at.end()) hot.push_back(it->second);
  }
  INFO(hot.size() << " of the listed functions found");
  REQUIRE(hot.size() > 500);
  // In the order listed (but where one section holds several functions, as glibc's objects do;
  // in the default layout about half the neighbours would be), and together: the ~1 MB they
  // take, not the executable's 4 MB.
  std::size_t ascending = 0;
  for (std::size_t i = 1; i < hot.size(); ++i) ascending += hot[i] > hot[i - 1];
  CHECK(ascending >= (hot.size() - 1) * 85 / 100);
  auto [low, high] = std::minmax_element(hot.begin(), hot.end());
  CHECK(*high - *low < (2ull << 20));
  // The entry populates the code up to the marker the build lists last (front/entry.cpp): it
  // must come after every listed function, or a run faults in the ones beyond it.
  auto marker = at.find("cordon_front_hot_end");
  REQUIRE(marker != at.end());
  CHECK(marker->second > *high);
  CHECK(marker->second - *low < (2ull << 20));
  // Relative relocations packed: 2 KB read at the start instead of 180 KB.
  auto sections = run_program("/usr/bin/readelf", {"-SW", CORDON_CLI});
  REQUIRE(sections.status == 0);
  CHECK(sections.out.find(".relr.dyn") != std::string::npos);
}

TEST_CASE("startup: the front end's read-only data and laid-out code each fill a 2 MB page",
          "[startup][cli]") {
  if (!laid_out_front_end()) return;
  auto segments = load_segments(CORDON_CLI);
  REQUIRE(segments.size() >= 3);
  const Segment *data = nullptr, *code = nullptr;
  for (const auto& seg : segments) {
    if (seg.flags == "R" && !data) data = &seg;
    if (seg.flags == "RE" && !code) code = &seg;
  }
  REQUIRE(data != nullptr);
  REQUIRE(code != nullptr);
  // The kernel maps a file's range with one 2 MB page only where the mapping covers all of it,
  // at a 2 MB boundary of both the file and memory (front/README.md).
  CHECK(data->offset == 0);
  CHECK(data->vaddr == 0);
  CHECK(data->memsz % kHugePage == 0);
  CHECK(code->offset % kHugePage == 0);
  CHECK(code->vaddr % kHugePage == 0);
  CHECK(code->align == kHugePage);
  // Read back from the disk, a 2 MB range comes in one folio only where the exec has read none
  // of it: the data has a 2 MB page apart from the ELF headers, and the entry lies after the
  // writable data, which the exec reads ahead around.
  CHECK(data->memsz >= 2 * kHugePage);
  auto header = run_program("/usr/bin/readelf", {"-hW", CORDON_CLI});
  REQUIRE(header.status == 0);
  auto entry_at = header.out.find("Entry point address:");
  REQUIRE(entry_at != std::string::npos);
  unsigned long long entry = std::stoull(header.out.substr(entry_at + 20), nullptr, 16);
  for (const auto& seg : segments) {
    INFO("segment at " << seg.vaddr << " (" << seg.flags << "), entry at " << entry);
    if (seg.flags == "RW" && seg.filesz > 0) CHECK(entry >= seg.vaddr + seg.filesz);
  }
  CHECK(entry >= code->vaddr + code->memsz);
  // The functions a run executes lie in the code's first 2 MB page.
  auto at = function_addresses(CORDON_CLI);
  auto marker = at.find("cordon_front_hot_end");
  REQUIRE(marker != at.end());
  CHECK(marker->second >= code->vaddr);
  CHECK(marker->second - code->vaddr < kHugePage);
}
