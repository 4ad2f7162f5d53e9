// What every backend's test suite needs around a run: a sink that keeps the output, and small
// file helpers that leave files owned like their directory (tests that run as root hand
// directories to the sandbox's unprivileged identity).
#pragma once

#include <sys/types.h>
#include <cordon/backend.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace cordon::testing {

/// Keeps everything written to it.
class CaptureSink final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override;
  std::string out;
  std::string err;
  std::size_t chunks = 0;
};

/// Writes `text` to `file` with `mode`, owned like the directory that holds it.
void write_file(const std::string& file, const std::string& text, mode_t mode = 0644);

/// The whole file, or "" when it cannot be read.
std::string read_file(const std::string& file);

}  // namespace cordon::testing
