// What `cordon` loads and builds at start-up: only the verb a command line names, and the YAML
// parser (yaml-cpp) only when a policy is YAML, from the module next to libcordon-core; and how
// the front end is linked (static, its hot functions side by side, in 2 MB pages of its file).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "smaps.hpp"

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

escape::Exit run_program(const fs::path& program, std::vector<std::string> args) {
  escape::SpawnOptions o;
  o.argv = {program.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  return escape::run_process(o);
}

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

namespace {

// Addresses of the front end's functions by name; a name defined more than once (static
// functions of several files) is left out, its place being ambiguous.
std::map<std::string, unsigned long long> function_addresses(const std::string& program) {
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
bool laid_out_front_end() {
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
std::vector<Segment> load_segments(const std::string& program) {
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

constexpr unsigned long long kHugePage = 2ull << 20;

// Writes `text` to `file` with one write call: where the file system keeps a file's page
// cache in large folios, that gives it 2 MB folios (front/write-whole.cmake).
void write_in_one_piece(const fs::path& file, const std::string& text, fs::perms mode) {
  std::error_code ec;
  fs::remove(file, ec);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  CHECK(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  fs::permissions(file, mode);
}

// Whether this kernel and the file system under `dir` map a file written in one piece with a
// 2 MB page: a 4 MB file mapped at a 2 MB boundary.
bool maps_files_in_huge_pages(const fs::path& dir) {
  fs::path probe = dir / "huge-probe";
  write_in_one_piece(probe, std::string(2 * kHugePage, 'x'), fs::perms::owner_read);
  int fd = ::open(probe.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  void* room = ::mmap(nullptr, 3 * kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(room != MAP_FAILED);
  auto at = (reinterpret_cast<std::uintptr_t>(room) + kHugePage - 1) & ~(kHugePage - 1);
  void* map =
      ::mmap(reinterpret_cast<void*>(at), 2 * kHugePage, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  ::close(fd);
  REQUIRE(map != MAP_FAILED);
  volatile char first = *static_cast<const char*>(map);
  (void)first;
  auto kb = escape::huge_mapped_kb(::getpid(), probe.string());
  ::munmap(room, 3 * kHugePage);
  return kb && (*kb)["r--p"] > 0;
}

}  // namespace

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

namespace {

// The kilobytes of the front end copy `cordon` mapped with 2 MB pages while it runs a command,
// by permissions ("r--p": the read-only data, "r-xp": the code); nothing when a user cannot
// read the mappings of cordon, which is not dumpable while it runs.
std::optional<std::map<std::string, long>> huge_pages_of_a_run(const itest::Scratch& scratch,
                                                               const fs::path& cordon,
                                                               const std::string& policy) {
  fs::path ws = scratch / "ws";  // apart from the copy, whose state the command may not make
  fs::create_directories(ws);
  fs::permissions(ws, fs::status(scratch.dir).permissions());
  escape::SpawnOptions o;
  o.argv = {cordon.string(), "run",       "--backend", "landlock",   "--policy", policy,
            "--workspace",   ws.string(), "--",        "/bin/sleep", "3"};
  escape::Process run(o);
  // Mapped at the entry (front/entry.cpp); watched while the command runs.
  std::map<std::string, long> kb;
  bool unreadable = false;  // cordon becomes undumpable soon after its exec, not at once
  for (int i = 0; i < 200 && (kb["r--p"] == 0 || kb["r-xp"] == 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto now = escape::huge_mapped_kb(run.pid(), cordon.string());
    unreadable = unreadable || !now;
    for (const auto& [perms, size] : now.value_or(std::map<std::string, long>{}))
      kb[perms] = std::max(kb[perms], size);
  }
  auto ended = run.wait();
  INFO(ended.err);
  REQUIRE(ended.status == 0);
  if (unreadable && ::geteuid() != 0) {
    WARN(
        "skipped: a user cannot read the mappings of cordon, which is not dumpable while it "
        "runs (the root run of the suite checks them)");
    return std::nullopt;
  }
  return kb;
}

// A scratch directory where a file written in one piece is mapped in 2 MB pages, with a policy
// landlock runs here; false (said why) when there is none.
bool huge_page_scratch(const itest::Scratch& scratch, std::string& policy) {
  if (!maps_files_in_huge_pages(scratch.dir)) {
    // A property of the kernel and the file system (large folios in the page cache), not a
    // prerequisite: cordon then starts as it did before, only slower.
    WARN("skipped: a file written in one piece under " << scratch.dir
                                                       << " is not mapped with 2 MB pages here");
    return false;
  }
  policy = (scratch / "p.toml").string();
  std::ofstream(policy) << "version = 1\n[filesystem]\nread = \"host\"\n";
  return itest::landlock_usable(policy);
}

// The read-ahead window, in KB, of the block device holding `file`; 0 when unknown.
long read_ahead_kb(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return 0;
  std::string dev =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  for (const char* queue : {"/queue/read_ahead_kb", "/../queue/read_ahead_kb"}) {
    std::ifstream in(dev + queue);
    long kb = 0;
    if (in >> kb) return kb;
  }
  return 0;
}

// Drops `file`'s pages from the page cache; false when some stay.
bool drop_from_page_cache(const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ::fsync(fd);  // written pages are dropped only once clean
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  auto size = static_cast<std::size_t>(fs::file_size(file));
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  REQUIRE(map != MAP_FAILED);
  std::vector<unsigned char> cached((size + 4095) / 4096);
  bool none = ::mincore(map, size, cached.data()) == 0 &&
              std::none_of(cached.begin(), cached.end(), [](unsigned char c) { return c & 1; });
  ::munmap(map, size);
  return none;
}

}  // namespace

TEST_CASE("startup: written in one piece, the front end runs with its data and code in 2 MB pages",
          "[startup][cli]") {
  if (!laid_out_front_end()) return;
  itest::Scratch scratch;
  std::string policy;
  if (!huge_page_scratch(scratch, policy)) return;
  fs::path cordon = copy_cordon(scratch / "installed", false);
  write_in_one_piece(cordon, itest::slurp(CORDON_CLI), fs::status(CORDON_CLI).permissions());
  auto kb = huge_pages_of_a_run(scratch, cordon, policy);
  if (!kb) return;
  CHECK((*kb)["r--p"] >= 2048);
  CHECK((*kb)["r-xp"] >= 2048);
}

TEST_CASE(
    "startup: read back from the disk, the front end runs with its data and code in 2 MB "
    "pages",
    "[startup][cli]") {
  if (!laid_out_front_end()) return;
  itest::Scratch scratch;
  std::string policy;
  if (!huge_page_scratch(scratch, policy)) return;
  fs::path cordon = copy_cordon(scratch / "installed", false);  // cached in pieces
  // The exec reads ahead around the writable data's last page: a window over 8 MB reaches the
  // code's 2 MB (front/README.md).
  long window = read_ahead_kb(cordon);
  if (window <= 0 || window > 8192 || !drop_from_page_cache(cordon)) {
    WARN("skipped: the read-ahead window here is " << window
                                                   << " KB, or the copy's page cache stays");
    return;
  }
  auto kb = huge_pages_of_a_run(scratch, cordon, policy);
  if (!kb) return;
  CHECK((*kb)["r--p"] >= 2048);
  CHECK((*kb)["r-xp"] >= 2048);
}
