// A job's output log: appended as output arrives, capped keeping the newest (internal).
#pragma once

#include <cordon/jobs.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>

namespace cordon::detail {

/// Appends stdout and stderr to the file output.log of a job directory, which it creates. The
/// file never holds more than `cap` bytes (at least 1024): when a chunk would not fit, the
/// newest output — at most half the cap, from a line start when there is one — is written to
/// output.log.rotate behind a line saying how many bytes of output in all were dropped, and
/// renamed over the log (with mode kRotatedLogMode). dropped() counts output bytes only, exactly:
/// what was written minus what the file holds.
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

/// The mode of a log a rotation wrote (a new log is 0600): only cordon sets it, so a reader
/// takes the first line for the note only then, never from the command's own output.
inline constexpr mode_t kRotatedLogMode = 0400;

/// Up to `len` bytes of `fd` from `offset` (fewer at its end), retrying interrupted reads.
std::string read_range(int fd, std::uint64_t offset, std::size_t len);

/// The line a rotation writes at the start of the log: `dropped` bytes of output came before
/// what follows it.
CORDON_API std::string log_note(std::uint64_t dropped);

/// The last `lines` lines of the log open at `fd` (-1: none yet), reading at most its last
/// `window` bytes, with a marker line first when the window holds fewer lines (JobManager::
/// output_tail).
CORDON_API JobOutput tail_lines(int fd, std::size_t lines, std::size_t window = kTailWindow);

/// The output from `offset` on in the log open at `fd` (-1: none yet), at most `max_bytes`
/// (JobManager::output_since). Throws Error CRD4007 for an offset past the end.
CORDON_API JobOutput read_since(int fd, std::uint64_t offset, std::size_t max_bytes);

}  // namespace cordon::detail
