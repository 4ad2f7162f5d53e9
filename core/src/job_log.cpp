// A job's output log and reading its tail cheaply.
#include "job_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cordon::detail {

namespace {

std::string read_range(int fd, std::uint64_t offset, std::size_t len) {
  std::string out(len, '\0');
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd, out.data() + got, len - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses output, never the job
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

LogSink::LogSink(const std::filesystem::path& file, std::uint64_t cap)
    : file_(file), cap_(std::max<std::uint64_t>(cap, 1024)) {
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  struct stat st {};
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
}

LogSink::~LogSink() {
  if (fd_ >= 0) ::close(fd_);
}

void LogSink::write(Stream, std::string_view chunk) {
  std::lock_guard lock(mu_);
  append(chunk);
}

void LogSink::append(std::string_view bytes) {
  if (fd_ < 0) return;
  write_all(fd_, bytes);
  size_ += bytes.size();
  if (size_ > cap_) rotate();
}

// Keeps the newest half of the cap behind a note; the rename makes it atomic for readers.
void LogSink::rotate() {
  int in = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return;
  std::uint64_t keep = cap_ / 2;
  std::string tail = read_range(in, size_ - keep, keep);
  ::close(in);
  if (auto nl = tail.find('\n'); nl != std::string::npos && nl + 1 < tail.size())
    tail.erase(0, nl + 1);  // start at a line boundary
  dropped_ += size_ - tail.size();
  std::string note = "[cordon: " + std::to_string(dropped_) +
                     " bytes of older output dropped (limits.max_log_bytes)]\n";
  auto tmp = file_;
  tmp += ".rotate";
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) return;
  write_all(out, note);
  write_all(out, tail);
  ::close(out);
  if (::rename(tmp.c_str(), file_.c_str()) != 0) return;
  ::close(fd_);
  fd_ = ::open(file_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  size_ = note.size() + tail.size();
}

std::string tail_lines(const std::filesystem::path& file, std::size_t lines, std::size_t window) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  ::fstat(fd, &st);
  auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t from = size > window ? size - window : 0;
  std::string text = read_range(fd, from, static_cast<std::size_t>(size - from));
  ::close(fd);
  if (from > 0) {  // the first line is cut: drop it, unless it is all there is
    auto nl = text.find('\n');
    if (nl != std::string::npos && nl + 1 < text.size()) text.erase(0, nl + 1);
  }
  if (lines == 0) return {};
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // the final newline ends the last line
  std::size_t start = end;
  for (std::size_t seen = 0; start > 0; --start)
    if (text[start - 1] == '\n' && ++seen == lines) break;
  return text.substr(start);
}

}  // namespace cordon::detail
