// HTTP for the e2b backend, with libcurl: the control plane's JSON requests, envd's unary and
// streaming Connect calls and its /files transfers. Secrets travel only in the headers a caller
// passes; no message this file makes quotes a header.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::e2b {

/// One request.
struct Request {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  ///< "Name: value"
  std::string body;
  /// Sent as multipart/form-data with one part named "file" holding `body`, instead of a raw
  /// body (envd's /files upload, which every envd version takes).
  bool file_part = false;
  std::chrono::milliseconds timeout{30000};  ///< the whole request, connection included
};

/// A complete answer.
struct Response {
  long status = 0;
  std::string body;
};

/// Sends `request` and reads the whole answer. Throws cordon::Error (CRD1005) when the service
/// does not answer; the message names the method and the URL without its query, never a header.
Response send(const Request& request);

/// A streaming call: `on_body` gets the answer's body as it arrives (return false to stop
/// reading: the transfer is then abandoned without an error); `cancelled` is asked about every
/// 100 ms and abandons the transfer when true. Returns the answer's status. `request.timeout`
/// bounds only the connection. Throws cordon::Error (CRD1005) when the connection fails or
/// breaks, unless `cancelled` or `on_body` ended it.
long stream(const Request& request, const std::function<bool(std::string_view)>& on_body,
            const std::function<bool()>& cancelled);

/// Nanoseconds this process has spent waiting in requests, every thread together but those
/// marked background (for the benchmark: a run's time less this is cordon's own).
std::int64_t request_nanoseconds();

/// Marks the calling thread as working in the background (the pool's refill): its requests do
/// not count in request_nanoseconds().
void mark_background_thread();

/// `value` escaped for a URL's query.
std::string url_escape(std::string_view value);

/// The URL without its query, for messages.
std::string url_for_messages(const std::string& url);

}  // namespace cordon::e2b
