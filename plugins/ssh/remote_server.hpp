// Runs over a remote `cordon serve --framed`: one channel per connection, kept open, carrying a
// request frame per run and bringing back its output and result frames (cordon/sdk/frames.hpp).
// A run then costs a request on an open channel, not an sshd session, a login shell and a
// cordon process started and probed — the remote-cordon path without the start-up.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>

#include "connection.hpp"

namespace cordon::ssh {

/// What a served run brought back.
struct Served {
  std::optional<boost::json::object> result;  ///< the result frame; none when the server died
  std::string diagnostics;                    ///< the server's stderr during the run (8 KiB)
  bool accepted = false;                      ///< the server took the request (its 'a' frame)
  bool timed_out = false;                     ///< this side's deadline passed first
  bool killed = false;                        ///< this side gave up on the server
};

/// The line that starts the server: `exec CORDON serve --framed`.
std::string serve_line(const std::string& cordon_path);

/// Sends `request` (request_json()) to the server on `connection` (started on first use) and
/// streams its output to `sink` until the result frame. A stop request and the deadline (plus
/// `grace`, for the remote cordon to end the run itself) become stop frames; a server that does
/// not answer a kill within 5 s is closed (its stdin ends, which kills its run), as is one that
/// ended mid-run: the next run starts another. A server found ended, or that ends before it took
/// the request (nothing of the request ran), is replaced and the request sent again, once. Throws
/// cordon::Error CRD1005 when the connection goes away, CRD5003 for frames that are not cordon's.
Served serve_run(Connection& connection, const std::string& cordon_path, const std::string& request,
                 const Plan& plan, std::chrono::milliseconds grace, OutputSink& sink);

}  // namespace cordon::ssh
