// Tests of reading a job's log: a tail never drops a line without a marker, and offsets into
// the job's output stay valid across the log's rotations.
#include <fcntl.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <filesystem>
#include <string>

#include "error_code.hpp"
#include "job_log.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
namespace fs = std::filesystem;

namespace {

// A job directory with a log, and a reader's descriptor of the log as it is now.
struct Log {
  fs::path base;
  std::optional<PrivateDir> dir;
  std::optional<detail::LogSink> sink;
  explicit Log(std::uint64_t cap = 1 << 20) {
    char tmpl[] = "/tmp/cordon-logr-XXXXXX";
    base = ::mkdtemp(tmpl);
    dir = PrivateDir::create(base / "job");
    sink.emplace(*dir, cap);
  }
  ~Log() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  void write(std::string_view s) { sink->write(Stream::out, s); }
  OwnedFd open() const { return dir->open_file("output.log", O_RDONLY); }
  JobOutput tail(std::size_t lines, std::size_t window = kTailWindow) const {
    return detail::tail_lines(open().get(), lines, window);
  }
  JobOutput since(std::uint64_t offset, std::size_t max = 1 << 20) const {
    return detail::read_since(open().get(), offset, max);
  }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("jobs log read: a tail whose lines fit the window is exact", "[jobs][log]") {
  Log log;
  log.write("one\ntwo\nthree\nfour\n");
  CHECK(log.tail(2).text == "three\nfour\n");
  CHECK(log.tail(10).text == "one\ntwo\nthree\nfour\n");
  CHECK(log.tail(0).text.empty());
  CHECK(log.tail(2).next_offset == 19);
  log.write("no newline yet");
  CHECK(log.tail(1).text == "no newline yet");
}

TEST_CASE("jobs log read: a line longer than the window is cut behind a marker", "[jobs][log]") {
  Log log;
  log.write("A\n" + std::string(70000, 'B') + "\nC\n");
  auto out = log.tail(3);
  INFO(out.text.substr(0, 300));
  // Nothing is dropped silently: the long line is there, cut, and a marker says so.
  CHECK(has(out.text, "[cordon: the next line is cut"));
  CHECK(has(out.text, std::string(1000, 'B') + "\nC\n"));
  CHECK(out.text.size() < kTailWindow + 300);
  // Lines before the window are not shown: the marker is the only sign of them, and it is there.
  CHECK_FALSE(has(out.text, "A\n"));
  // The last line alone fits: no marker.
  CHECK(log.tail(1).text == "C\n");
}

TEST_CASE("jobs log read: fewer whole lines in the window than asked for are marked",
          "[jobs][log]") {
  Log log;
  log.write("0123456789\nabcdefghi\nlast\n");
  // A window of 15 bytes starts right after a newline: "abcdefghi\nlast\n".
  auto out = log.tail(3, 15);
  CHECK(out.text ==
        "[cordon: earlier lines are not shown: they lie before the 15-byte window of --tail "
        "('job output --since 0' reads them)]\nabcdefghi\nlast\n");
  CHECK(log.tail(2, 15).text == "abcdefghi\nlast\n");
}

TEST_CASE("jobs log read: since an offset, continuing where the last call ended", "[jobs][log]") {
  Log log;
  CHECK(log.since(0).text.empty());
  CHECK(log.since(0).next_offset == 0);
  log.write("hello\n");
  auto first = log.since(0);
  CHECK(first.text == "hello\n");
  CHECK(first.next_offset == 6);
  log.write("world\npartial");
  auto second = log.since(first.next_offset);
  CHECK(second.text == "world\npartial");
  CHECK(second.next_offset == 19);
  CHECK(log.since(second.next_offset).text.empty());
  CHECK(error_code_of([&] { log.since(20); }) == "CRD4007");
}

TEST_CASE("jobs log read: a read capped at max_bytes ends at a newline and says there is more",
          "[jobs][log]") {
  Log log;
  log.write("aaaa\nbbbb\ncccc\n");
  auto out = log.since(0, 12);
  CHECK(out.text == "aaaa\nbbbb\n");
  CHECK(out.more);
  CHECK(out.next_offset == 10);
  auto rest = log.since(out.next_offset, 12);
  CHECK(rest.text == "cccc\n");
  CHECK_FALSE(rest.more);
}

TEST_CASE("jobs log read: output that looks like cordon's note is the command's output",
          "[jobs][log]") {
  Log log;
  std::string forged = detail::log_note(5000) + "after\n";
  log.write(forged);
  auto out = log.since(0);
  CHECK(out.text == forged);
  CHECK(out.dropped_bytes == 0);
  CHECK(out.next_offset == forged.size());
  CHECK(log.since(forged.size() - 6).text == "after\n");
}

TEST_CASE("jobs log read: offsets stay valid across rotations, and what was dropped is marked",
          "[jobs][log]") {
  Log log(1024);
  std::string stream;
  for (int i = 0; i < 30; ++i) {
    std::string line = "line " + std::to_string(i) + std::string(40, '.') + "\n";
    stream += line;
    log.write(line);
  }
  // The log rotated: its first bytes are no longer in it.
  auto from_start = log.since(0);
  REQUIRE(from_start.dropped_bytes > 0);
  CHECK(has(from_start.text, "[cordon: " + std::to_string(from_start.dropped_bytes) +
                                 " bytes of output before this were dropped"));
  CHECK(from_start.next_offset == stream.size());
  CHECK(stream.compare(from_start.dropped_bytes, std::string::npos,
                       from_start.text.substr(from_start.text.find('\n') + 1)) == 0);
  // An offset inside what is kept reads exactly the job's bytes from there.
  std::uint64_t at = stream.size() - 100;
  auto tail = log.since(at);
  CHECK(tail.dropped_bytes == 0);
  CHECK(tail.text == stream.substr(at));
  // The next call after more output (and another rotation) continues without a gap.
  std::string more(300, 'x');
  more += "\n";
  stream += more;
  log.write(more);
  auto next = log.since(tail.next_offset);
  CHECK(next.dropped_bytes == 0);
  CHECK(next.text == more);
  CHECK(next.next_offset == stream.size());
}
