// `cordon run` and a signal: SIGINT, SIGTERM and SIGHUP stop the run the way its deadline does
// (the backend kills the command's whole tree and removes what it made: a container, cgroups)
// instead of killing cordon, which would leave a container running until `cordon gc`.
#pragma once

#include <cordon/sdk/stop_token.hpp>

#include <memory>

namespace cordon::cli {

/// Gives SIGCHLD its default action back when the program that started cordon left it ignored
/// (SIG_IGN survives execve) or set SA_NOCLDWAIT: the kernel would otherwise reap the sandbox's
/// processes itself, and a run could not know how its command ended. Called first thing by the
/// `cordon` executables; a program embedding cordon keeps its own (the backends refuse a run
/// then: cordon/sdk/child.hpp, children_not_waitable()).
void default_child_signal() noexcept;

/// While alive, SIGINT, SIGTERM and SIGHUP raise `token` to StopToken::Level::kill; the old
/// handlers come back when it is destroyed. One at a time per process.
///
/// With `term_terminates` SIGTERM raises it to Level::terminate instead (the command gets
/// SIGTERM and may end on its own; SIGINT or SIGHUP still kill): how the cordon that started a
/// `cordon run --framed` from afar passes a stop request on.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::shared_ptr<StopToken> token, bool term_terminates = false);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  /// The first of those signals that arrived, or 0.
  int received() const noexcept;

 private:
  std::shared_ptr<StopToken> token_;
};

}  // namespace cordon::cli
