// A job's output log: appended as output arrives, capped keeping the newest (internal).
#pragma once

#include <cordon/backend.hpp>
#include <cordon/export.hpp>
#include <cordon/private_dir.hpp>

#include <cstdint>
#include <mutex>
#include <string>

namespace cordon::detail {

/// Appends stdout and stderr to the file output.log of a job directory, which it creates. The
/// file never holds more than `cap` bytes (at least 1024): when a chunk would not fit, the
/// newest output — at most half the cap, from a line start when there is one — is written to
/// output.log.rotate behind a line saying how many bytes of output in all were dropped, and
/// renamed over the log. dropped() counts output bytes only, exactly: what was written minus
/// what the file holds.
class CORDON_API LogSink final : public OutputSink {
 public:
  /// Throws Error (CRD5006) when the log cannot be created; `dir` must outlive the sink.
  LogSink(const PrivateDir& dir, std::uint64_t cap);
  void write(Stream stream, std::string_view chunk) override;
  /// Bytes of output dropped so far.
  std::uint64_t dropped() const;
  /// Bytes in the file now (the note line included).
  std::uint64_t file_bytes() const;

 private:
  void append(std::string_view bytes);
  void rotate(std::string_view chunk);

  const PrivateDir& dir_;
  std::uint64_t cap_;
  std::uint64_t note_ = 0;  ///< bytes of the note line at the start of the file
  std::uint64_t kept_ = 0;  ///< bytes of output in the file, after the note
  std::uint64_t dropped_ = 0;
  OwnedFd fd_;
  mutable std::mutex mu_;
};

/// The last `lines` lines of the file open at `fd`, reading at most its last `window` bytes.
CORDON_API std::string tail_lines(int fd, std::size_t lines, std::size_t window = 64 * 1024);

}  // namespace cordon::detail
