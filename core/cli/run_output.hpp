// How `cordon run` shows a result: the --json object and the -v enforcement report.
#pragma once

#include <cordon/runner.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/terminal_text.hpp>

#include <boost/json/object.hpp>

#include <iosfwd>
#include <optional>
#include <string>

namespace cordon::cli {

/// Keeps the command's output for the --json object.
class CollectSink final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override;
  std::string out, err;
};

/// Writes the command's output to cordon's own stdout and stderr as it arrives; on a terminal
/// its control sequences are written as visible text unless `raw` (terminal_text.hpp).
class PassThroughSink final : public OutputSink {
 public:
  explicit PassThroughSink(bool raw = false);
  void write(Stream stream, std::string_view chunk) override;
  /// Writes what a filter held back at the end of the output.
  void finish();

 private:
  std::optional<TerminalText> out_, err_;
};

/// Writes the command's output to cordon's stdout as frames (cordon/sdk/frames.hpp), for the
/// cordon that started this one from afar; finish() writes the result frame.
class FramedSink final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override;
  /// `cordon serve`: the request was taken and its run begins.
  void accepted();
  void finish(const boost::json::object& result);
};

/// The --json object: exit_code, signal, timed_out, stdout, stderr (base64 with
/// stdout_base64 / stderr_base64 = true when not UTF-8), stdout_truncated, stderr_truncated,
/// stdout_bytes, stderr_bytes (what the command wrote, before the cap),
/// duration_ms, backend, report, notes, error.
boost::json::object run_json(const RunOutcome& outcome, const CollectSink& output);

/// An ErrorList as one Error: the first one's code and hint, every message.
Error as_one_error(const ErrorList& list);

/// An error as JSON: {code, message, hint}, or null when there is none.
boost::json::value error_json(const std::optional<Error>& e);

/// The -v report: backend, duration, status, each requirement's mechanism and the notes.
void print_report(const RunOutcome& outcome, std::ostream& err);

}  // namespace cordon::cli
