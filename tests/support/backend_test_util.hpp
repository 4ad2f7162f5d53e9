// What every backend's test suite needs around a run: a sink that keeps the output, and small
// file helpers that leave files owned like their directory (tests that run as root hand
// directories to the sandbox's unprivileged identity).
#pragma once

#include <sys/types.h>
#include <cordon/sdk/backend.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace cordon::testing {

/// Keeps everything written to it.
class CaptureSink final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override;
  std::string out;
  std::string err;
  std::size_t chunks = 0;
};

/// Keeps everything written to it, and tells when the command's output first holds `cue`: a
/// test that stops a command once it is ready (a trap set, a file open) waits for the command
/// to say so, not for a guess at how long its start takes on the backend.
class CueSink final : public OutputSink {
 public:
  explicit CueSink(std::string cue) : cue_(std::move(cue)) {}
  void write(Stream stream, std::string_view chunk) override;
  /// True once the cue has been written; false when `limit` passed first.
  bool wait(std::chrono::milliseconds limit);
  std::string out;
  std::string err;

 private:
  std::string cue_;
  std::mutex mutex_;
  std::condition_variable seen_;
  bool cued_ = false;
};

/// A directory `base`/`prefix`XXXXXX, mode 0755, removed with everything in it. When the tests
/// run as root it belongs to `owner` (default 65534), so that the sandbox's identity can write it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix, uid_t owner = 65534,
                   const std::string& base = "/tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// path() / name
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Writes `text` to `file` with `mode`, owned like the directory that holds it.
void write_file(const std::string& file, const std::string& text, mode_t mode = 0644);

/// The whole file, or "" when it cannot be read.
std::string read_file(const std::string& file);

}  // namespace cordon::testing
