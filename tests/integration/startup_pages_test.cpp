// The front end runs with its read-only data and laid-out code in 2 MB pages: written in one
// piece (as the build and the install write it), and read back from the disk once the page
// cache has dropped it (front/README.md, "The code in one 2 MB page"). Where the kernel or the
// file system gives no 2 MB pages, these say so and check nothing: that is the host's, not a
// prerequisite of cordon's.
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
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "front_image.hpp"
#include "smaps.hpp"

namespace fs = std::filesystem;
using front_image::copy_cordon;
using front_image::kHugePage;
using front_image::laid_out_front_end;

namespace {

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
