// Tests of a job's log: never over limits.max_log_bytes on disk, the dropped count exact.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "job_log.hpp"

using namespace cordon;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path base;
  Scratch() {
    char tmpl[] = "/tmp/cordon-log-XXXXXX";
    base = ::mkdtemp(tmpl);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::uint64_t size_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_size);
}

// Lines "000000000\n", "000000001\n", ...: 10 bytes each.
std::string lines(int from, int count) {
  std::string out;
  char buf[16];
  for (int i = from; i < from + count; ++i) {
    std::snprintf(buf, sizeof buf, "%09d\n", i);
    out += buf;
  }
  return out;
}

}  // namespace

TEST_CASE("jobs log: a chunk that does not fit rotates first, with the exact count",
          "[jobs][log]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "job");
  detail::LogSink log(dir, 1024);
  fs::path file = s.base / "job" / "output.log";
  log.write(Stream::out, lines(0, 100));  // 1000 bytes: fits
  CHECK(size_of(file) == 1000);
  CHECK(log.dropped() == 0);
  // 50 more do not: the newest 512 bytes of the 1050 are kept from the next line start (byte
  // 540, line 54), so exactly 540 bytes of output are dropped.
  log.write(Stream::err, lines(100, 5));
  CHECK(log.dropped() == 540);
  std::string note = "[cordon: 540 bytes of older output dropped (limits.max_log_bytes)]\n";
  CHECK(slurp(file) == note + lines(54, 51));
  CHECK(log.file_bytes() == note.size() + 510);
  CHECK_FALSE(fs::exists(s.base / "job" / "output.log.rotate"));
}

TEST_CASE("jobs log: the file never passes the cap, and what it drops is counted exactly",
          "[jobs][log]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "job");
  constexpr std::uint64_t kCap = 20000;
  detail::LogSink log(dir, kCap);
  fs::path file = s.base / "job" / "output.log";
  // Chunks of every size around the cap, the 2 354 bytes that used to overshoot it among them.
  const std::size_t sizes[] = {1, 100, 2354, 4096, 19999, 20000, 20001, 65536, 7, 9999};
  std::string stream;
  int next = 0;
  std::uint64_t largest = 0;
  for (int round = 0; round < 40; ++round) {
    for (std::size_t size : sizes) {
      std::string chunk = lines(next, static_cast<int>(size / 10) + 1).substr(0, size);
      next += static_cast<int>(size / 10) + 1;
      stream += chunk;
      log.write(round % 2 ? Stream::out : Stream::err, chunk);
      largest = std::max(largest, size_of(file));
      REQUIRE(size_of(file) == log.file_bytes());
    }
  }
  CHECK(largest <= kCap);
  std::string text = slurp(file);
  auto nl = text.find('\n');
  REQUIRE(nl != std::string::npos);
  std::string note = text.substr(0, nl + 1), kept = text.substr(nl + 1);
  CHECK(note == "[cordon: " + std::to_string(log.dropped()) +
                    " bytes of older output dropped (limits.max_log_bytes)]\n");
  // What is kept is the very end of the output, and the rest is exactly what was counted.
  CHECK(log.dropped() + kept.size() == stream.size());
  CHECK(stream.compare(stream.size() - kept.size(), kept.size(), kept) == 0);
}

TEST_CASE("jobs log: rotation never writes through a planted link", "[jobs][log]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "job");
  detail::LogSink log(dir, 1024);
  std::ofstream(s.base / "crontab") << "precious";
  fs::create_symlink(s.base / "crontab", s.base / "job" / "output.log.rotate");
  log.write(Stream::out, lines(0, 200));
  CHECK(slurp(s.base / "crontab") == "precious");
  CHECK(size_of(s.base / "job" / "output.log") <= 1024);
  CHECK(log.dropped() > 0);
}

TEST_CASE("jobs log: an existing log is never appended to", "[jobs][log]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "job");
  std::ofstream(s.base / "target") << "precious";
  fs::create_symlink(s.base / "target", s.base / "job" / "output.log");
  CHECK_THROWS_AS(detail::LogSink(dir, 1024), Error);
  CHECK(slurp(s.base / "target") == "precious");
}
