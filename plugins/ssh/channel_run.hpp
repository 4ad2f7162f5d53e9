// One command on a remote host: its exec channel driven by the SDK's pump (cordon/sdk/pump.hpp).
//
// stdout and stderr stream to the sink as they arrive, stdin is written within the channel's
// window and then closed (EOF), and the deadline and the StopToken end the run: terminate sends
// SIGTERM to the remote process group, kill SIGKILL — each as a "signal" channel request and, in
// case the server ignores that, by `kill` on a second channel. A run whose process is not known
// yet, or whose kill did not close the channel in time, drops the whole connection: sshd's
// session process then ends and the command's parent-death signal takes the tree with it.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/pump.hpp>

#include <optional>
#include <string>

#include "connection.hpp"

namespace cordon::ssh {

/// How a remote command ended.
struct ChannelEnd {
  std::optional<int> status;  ///< its exit status, when it sent one
  int signal = 0;             ///< the signal that killed it, when it sent that
  long pid = 0;               ///< its process group on the remote host; 0: the script never ran it
  std::string setup_error;  ///< the script's message when it failed before the command (status 125)
  bool dropped = false;     ///< the connection was dropped to end the run (it cannot be reused)
  sdk::PumpEnd pump;
};

/// Drives `channel` (running a remote_line() of `connection`) until it closes, with `plan`'s
/// stdin, deadline and stop token. Throws cordon::Error CRD1005 when the connection goes away.
ChannelEnd run_channel(Connection& connection, Channel& channel, const Plan& plan,
                       OutputSink& sink);

/// The signal number of an ssh signal name ("TERM" -> 15), 0 when unknown.
int signal_number(const std::string& name);

}  // namespace cordon::ssh
