// The remote-cordon path: on a host that has cordon, a run is `cordon run --request - --framed`
// there. The policy travels inside the request on the channel's stdin (never as a file the
// remote account could swap), the remote cordon's landlock backend enforces it, and its framed
// stdout brings back the command's output and its result, merged into ours. Pure, but for the
// OutputSink it drives.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/frames.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>

namespace cordon::ssh {

/// The remote cordon's own backend that runs the commands.
inline constexpr const char* kRemoteBackend = "landlock";

/// What the remote cordon's `cordon backends --json` says of its landlock backend: its proofs,
/// each with the remote's evidence, when it is available; otherwise nullopt and `why`.
std::optional<ProbeResult> remote_proofs(const std::string& backends_json, std::string& why);

/// The request of one run: `plan`'s argv, environment (the values of env.pass names), stdin,
/// the time left, and its policy with every path beneath the local workspace rebased onto the
/// remote one (`{workspace}/...`) and every `~` path written as `~` again, so that the remote
/// cordon resolves them against the remote workspace and the remote login's home.
std::string request_json(const Plan& plan, const std::string& remote_workspace);

/// The exec line: the pid marker, then `exec CORDON run --request - --framed`.
std::string cordon_line(const std::string& cordon_path);

/// The channel's output of a remote cordon's run: stdout is a framed stream whose output frames
/// go on to `sink` and whose result frame is kept; stderr is the remote cordon's own
/// diagnostics, kept apart from the command's stderr. `serving`: the stream of a `cordon serve`
/// (remote_server.hpp), many runs long, each begun by an accepted frame.
class FramedChannelSink final : public OutputSink {
 public:
  explicit FramedChannelSink(OutputSink& sink, bool serving = false)
      : sink_(sink), reader_(serving) {}
  void write(Stream stream, std::string_view chunk) override;

  /// The result object, once its frame arrived.
  const std::optional<boost::json::object>& result() const { return result_; }
  /// The remote cordon's diagnostics (at most 8 KiB), and a framing error when there was one.
  const std::string& diagnostics() const { return diagnostics_; }
  /// True once a `cordon serve` took the request (its accepted frame).
  bool accepted() const { return accepted_; }
  /// True once the stream was not cordon's framing: nothing after it is believed.
  bool broken() const { return broken_; }

 private:
  OutputSink& sink_;
  sdk::FrameReader reader_;
  std::optional<boost::json::object> result_;
  std::string diagnostics_;
  bool accepted_ = false;
  bool broken_ = false;
};

/// `r` from the remote cordon's result object: status, signal, timeout, truncation, resources,
/// notes, error; each report line names `host` and the remote mechanism.
void merge_result(const boost::json::object& result, const std::string& host, RunResult& r);

}  // namespace cordon::ssh
