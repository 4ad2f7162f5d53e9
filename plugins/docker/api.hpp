// The Engine API calls the backend makes, at a version negotiated with the daemon: never
// hard-coded, min(the daemon's newest, ours), refused below our floor.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

#include "endpoint.hpp"
#include "http.hpp"

namespace cordon::docker {

/// An API version, "1.41" -> {1, 41}.
struct ApiVersion {
  int major = 0;
  int minor = 0;
  auto operator<=>(const ApiVersion&) const = default;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
};

/// The newest API this backend is written against.
inline constexpr ApiVersion kNewestApi{1, 47};
/// The oldest it accepts: /wait flushes its headers once the waiter is registered from 1.30.
inline constexpr ApiVersion kOldestApi{1, 30};

/// "1.41" -> {1, 41}; nullopt when malformed. Pure.
std::optional<ApiVersion> parse_api_version(const std::string& text);

/// The version to speak: min(daemon_newest, kNewestApi). Throws Error CRD1004 when it is below
/// kOldestApi or below the daemon's own oldest (`daemon_oldest`, when known). Pure.
ApiVersion negotiate(ApiVersion daemon_newest, std::optional<ApiVersion> daemon_oldest,
                     const std::string& where);

/// A daemon, reached and versioned.
class Daemon {
 public:
  /// Pings the daemon and negotiates the version (CRD1005 when nothing answers).
  explicit Daemon(Endpoint ep);

  const Endpoint& endpoint() const { return ep_; }
  ApiVersion version() const { return version_; }
  /// The daemon's /version answer.
  const boost::json::object& version_info() const { return version_info_; }

  /// A versioned request; the body is JSON. Throws CRD1005 when the daemon does not answer,
  /// Cancelled when `cancel` says so first.
  Response call(std::string_view method, const std::string& path,
                const std::optional<boost::json::value>& body = std::nullopt,
                std::chrono::milliseconds timeout = kRequestTimeout,
                const Cancel& cancel = {}) const;
  /// call() that expects a JSON object; throws Error(`code`, "<what>: <daemon's message>")
  /// for any status outside 200..299.
  boost::json::object json(std::string_view method, const std::string& path, const char* code,
                           const std::string& what,
                           const std::optional<boost::json::value>& body = std::nullopt) const;
  /// The versioned path, "/v1.41" + path.
  std::string path(const std::string& path) const;

 private:
  Endpoint ep_;
  ApiVersion version_;
  boost::json::object version_info_;
};

/// The daemon's message in an error body ({"message": "..."}), or the body itself.
std::string daemon_message(const Response& r);

/// Percent-encodes a query value.
std::string url_encode(const std::string& text);

/// The string member `key` of a daemon's answer, or "" when it is missing or not a string.
std::string string_member(const boost::json::object& o, const char* key);

}  // namespace cordon::docker
