// Where the daemon is: a unix socket or a TCP address (with TLS), from the settings or the
// environment (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH). Pure.
#pragma once

#include <cordon/sdk/error.hpp>

#include <functional>
#include <optional>
#include <string>

namespace cordon::docker {

/// The socket every docker client uses when nothing else is said.
inline constexpr const char* kDefaultSocket = "/var/run/docker.sock";

/// A daemon address.
struct Endpoint {
  std::string socket;    ///< unix socket path; empty for TCP
  std::string base_url;  ///< "http://docker" for a socket, "http(s)://host:port" for TCP
  bool tls = false;
  bool tls_verify = false;
  std::string cert_dir;  ///< holds ca.pem, cert.pem, key.pem when tls
  /// "/var/run/docker.sock" or "tcp://host:2376", for messages.
  std::string display() const;
  /// display() and the TLS settings: two endpoints with the same key are the same daemon
  /// reached the same way (for caches).
  std::string key() const;
  bool operator==(const Endpoint&) const = default;
};

/// Reads an environment variable; empty optional when unset.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

/// The endpoint for `socket` / `host` settings (either may be empty), else DOCKER_HOST, else
/// the default socket. Throws Error CRD2015 for an address it cannot use.
Endpoint resolve_endpoint(const std::string& socket, const std::string& host, const EnvLookup& env);

/// resolve_endpoint with the process environment.
Endpoint resolve_endpoint(const std::string& socket, const std::string& host);

}  // namespace cordon::docker
