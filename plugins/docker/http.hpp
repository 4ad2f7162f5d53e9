// HTTP/1.1 to the daemon with libcurl: plain requests, and hijacked connections (attach) that
// carry raw bytes both ways once the daemon has answered "101 UPGRADED".
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "endpoint.hpp"

namespace cordon::docker {

/// A complete answer.
struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  ///< names lowercased
  std::string body;
};

/// How long one control request may take, connection included.
inline constexpr std::chrono::milliseconds kRequestTimeout{30000};

/// Polled while a request waits (about every 50 ms); true abandons it. Empty: never.
using Cancel = std::function<bool()>;

/// Thrown when a Cancel said to abandon a request: cordon gave up, the daemon did not fail.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("the request was abandoned") {}
};

/// One request; throws Error CRD1005 when the daemon does not answer (the message names the
/// endpoint and the reason, "connection refused"), Cancelled when `cancel` says so. `body` is
/// sent as JSON when set.
Response http_request(const Endpoint& ep, std::string_view method, const std::string& path,
                      const std::optional<std::string>& body = std::nullopt,
                      std::chrono::milliseconds timeout = kRequestTimeout,
                      const Cancel& cancel = {});

/// A request whose answer's head arrives long before its body (POST /wait): `on_head` gets the
/// status once the head is complete; `cancelled` is polled (about every 50 ms) and aborts the
/// transfer when it returns true. No overall timeout. Throws Error CRD1005 when the connection
/// fails or is aborted.
Response http_long_request(const Endpoint& ep, std::string_view method, const std::string& path,
                           const std::function<void(long)>& on_head,
                           const std::function<bool()>& cancelled);

/// A hijacked connection: after the handshake, raw bytes in both directions. Non-blocking.
class RawStream {
 public:
  /// Connects, sends `POST path` with the upgrade headers and reads the answer's head. Throws
  /// Error CRD1005 when the daemon does not answer, CRD1003 when it refuses the attach,
  /// Cancelled when `cancel` says so first.
  RawStream(const Endpoint& ep, const std::string& path, const Cancel& cancel = {});
  ~RawStream();
  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;

  /// The socket, for poll().
  int fd() const;
  /// Bytes received so far that are not yet returned, then new ones; "" and false at the end
  /// of the stream. Returns true with "" when nothing is ready.
  bool receive(std::string& out);
  /// Sends what it can of `data` now; returns how many bytes went out.
  std::size_t send_some(std::string_view data);
  /// Half-closes the write side: the container's stdin reaches end of file.
  void close_write();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// "connection refused" and the like for a failed transfer, lowercase.
std::string transport_reason(int curl_code, long os_errno);

/// What went wrong with a TLS connection that failed with `curl_code` ("TLS verification of the
/// daemon's certificate failed: …", "the daemon refused the TLS connection: …"), with libcurl's
/// `detail`; empty when the failure is not TLS's. Pure.
std::string tls_reason(int curl_code, const std::string& detail, bool client_cert,
                       const std::string& cert_dir);

}  // namespace cordon::docker
