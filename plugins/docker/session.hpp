// One attached run: stdin out, frames in, the deadline and stop requests honoured, until the
// container's exit is known. The container and its waiter are made by the caller.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <optional>
#include <string>

#include "container.hpp"
#include "http.hpp"

namespace cordon::docker {

/// How the attached run ended.
struct SessionOutcome {
  std::optional<std::int64_t> status;  ///< the container's exit status
  bool timed_out = false;              ///< the deadline passed and the container was killed
  bool stopped = false;                ///< a stop request killed it
  std::string daemon_error;            ///< set when the daemon went away or a frame was bad
  std::string init_error;              ///< the init's own "exec failed" line, kept out of stderr
};

/// How the run's stdin and exit are wired.
struct SessionIo {
  std::optional<std::string> input;  ///< written to the container's stdin
  bool close_stdin = true;           ///< half-close the stream once `input` is written
  /// The daemon's exit waiter (one-shot runs); nullptr for a pooled run, whose exit comes only
  /// from the waiter program's trailer (or, when it was killed, from inspect).
  ExitWaiter* waiter = nullptr;
  std::string nonce;  ///< the waiter program's trailer nonce; empty when there is no trailer
};

/// Streams until the exit is known. Output goes to `sink`; the init's exec failure message is
/// held back and returned instead.
SessionOutcome stream_session(const Plan& plan, const SessionIo& io, const Container& container,
                              RawStream& stream, OutputSink& sink);

/// The init's (or the pool waiter's) message when the command could not be executed ("[FATAL
/// tini (7)] exec X failed: No such file or directory"): from "exec " on, or empty. Pure.
std::string init_exec_failure(const std::string& stderr_head);

}  // namespace cordon::docker
