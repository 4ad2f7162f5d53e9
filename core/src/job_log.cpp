// A job's output log, written as output arrives and capped keeping the newest.
#include "job_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "job_files.hpp"

namespace cordon::detail {

namespace {

// Bytes written before a failure: a full disk loses output, never the job.
std::size_t write_all(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace

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

std::string log_note(std::uint64_t dropped) {
  return "[cordon: " + std::to_string(dropped) +
         " bytes of older output dropped (limits.max_log_bytes)]\n";
}

LogSink::LogSink(const PrivateDir& dir, std::uint64_t cap)
    : dir_(dir), cap_(std::max<std::uint64_t>(cap, 1024)) {
  fd_ = dir_.create_file(kLogFile, O_RDWR | O_APPEND);
}

void LogSink::write(Stream, std::string_view chunk) {
  std::lock_guard lock(mu_);
  append(chunk);
}

std::uint64_t LogSink::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::uint64_t LogSink::file_bytes() const {
  std::lock_guard lock(mu_);
  return note_ + kept_;
}

void LogSink::append(std::string_view bytes) {
  if (bytes.empty()) return;
  if (!fd_) {
    dropped_ += bytes.size();
    return;
  }
  if (bytes.size() > cap_ - note_ - kept_) return rotate(bytes);
  std::size_t n = write_all(fd_.get(), bytes);
  kept_ += n;
  dropped_ += bytes.size() - n;
}

// The newest output (the file's and `chunk`) behind the note, in a new file renamed over the
// log: readers see the old file or the new one, and neither is ever over the cap.
void LogSink::rotate(std::string_view chunk) {
  std::uint64_t keep = cap_ / 2;
  std::string tail;
  if (chunk.size() >= keep) {
    tail.assign(chunk.substr(chunk.size() - keep));
  } else {
    std::uint64_t from_file = std::min(kept_, keep - chunk.size());
    tail = read_range(fd_.get(), note_ + kept_ - from_file, static_cast<std::size_t>(from_file));
    tail.append(chunk);
  }
  if (auto nl = tail.find('\n'); nl != std::string::npos && nl + 1 < tail.size())
    tail.erase(0, nl + 1);  // start at a line boundary
  std::uint64_t total = kept_ + chunk.size();
  std::string note = log_note(dropped_ + total - tail.size());
  try {
    dir_.remove(kLogRotateFile);  // left by a rotation that failed half-way
    OwnedFd out = dir_.create_file(kLogRotateFile, O_RDWR | O_APPEND, kRotatedLogMode);
    if (write_all(out.get(), note) != note.size() || write_all(out.get(), tail) != tail.size())
      throw Error(code::kStateIo, "the disk is full");
    dir_.rename(kLogRotateFile, kLogFile);
    fd_ = std::move(out);
  } catch (const Error&) {
    dropped_ += chunk.size();  // the log stays as it was, within the cap
    return;
  }
  dropped_ += total - tail.size();
  note_ = note.size();
  kept_ = tail.size();
}

}  // namespace cordon::detail
