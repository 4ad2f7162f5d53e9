// A job's output log: appended as output arrives, capped keeping the newest (internal).
#pragma once

#include <cordon/backend.hpp>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>

namespace cordon::detail {

/// Appends stdout and stderr to one log file. When the file passes `cap` bytes, the newest half
/// is kept, behind a line saying how many bytes in all were dropped.
class LogSink final : public OutputSink {
 public:
  LogSink(const std::filesystem::path& file, std::uint64_t cap);
  ~LogSink() override;
  void write(Stream stream, std::string_view chunk) override;
  std::uint64_t dropped() const { return dropped_; }

 private:
  void append(std::string_view bytes);
  void rotate();

  std::filesystem::path file_;
  std::uint64_t cap_;
  std::uint64_t size_ = 0;
  std::uint64_t dropped_ = 0;
  int fd_ = -1;
  std::mutex mu_;
};

/// The last `lines` lines of `file`, reading at most its last `window` bytes.
std::string tail_lines(const std::filesystem::path& file, std::size_t lines,
                       std::size_t window = 64 * 1024);

}  // namespace cordon::detail
