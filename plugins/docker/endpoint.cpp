// Resolving the daemon's address. Pure apart from the environment it is handed.
#include "endpoint.hpp"

#include <cstdlib>

namespace cordon::docker {

namespace {

Error bad_address(const std::string& what, const std::string& from) {
  return Error(code::kBadSettings, "cannot use docker address '" + what + "' from " + from,
               "give unix:///path/to/docker.sock or tcp://host:port");
}

Endpoint from_host(const std::string& host, const std::string& from, const EnvLookup& env) {
  Endpoint ep;
  if (host.rfind("unix://", 0) == 0) {
    ep.socket = host.substr(7);
    if (ep.socket.empty() || ep.socket.front() != '/') throw bad_address(host, from);
    ep.base_url = "http://docker";
    return ep;
  }
  if (host.rfind("tcp://", 0) != 0) throw bad_address(host, from);
  std::string hostport = host.substr(6);
  while (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
  if (hostport.empty() || hostport.find_first_of("/?#@ ") != std::string::npos)
    throw bad_address(host, from);
  auto verify = env("DOCKER_TLS_VERIFY");
  auto certs = env("DOCKER_CERT_PATH");
  ep.tls_verify = verify && !verify->empty() && *verify != "0";
  ep.tls = ep.tls_verify || (certs && !certs->empty());
  if (ep.tls) {
    auto home = env("HOME");
    ep.cert_dir = certs && !certs->empty() ? *certs : (home ? *home : "") + "/.docker";
  }
  ep.base_url = (ep.tls ? "https://" : "http://") + hostport;
  return ep;
}

}  // namespace

std::string Endpoint::display() const {
  if (!socket.empty()) return socket;
  auto scheme = base_url.find("://");
  return "tcp://" + base_url.substr(scheme == std::string::npos ? 0 : scheme + 3);
}

std::string Endpoint::key() const {
  if (!tls) return display();
  return display() + (tls_verify ? " tls-verify " : " tls ") + cert_dir;
}

Endpoint resolve_endpoint(const std::string& socket, const std::string& host,
                          const EnvLookup& env) {
  if (!socket.empty()) {
    if (socket.front() != '/') throw bad_address(socket, "backends.docker.socket");
    return Endpoint{socket, "http://docker", false, false, {}};
  }
  if (!host.empty()) return from_host(host, "backends.docker.host", env);
  if (auto dh = env("DOCKER_HOST"); dh && !dh->empty()) return from_host(*dh, "DOCKER_HOST", env);
  return Endpoint{kDefaultSocket, "http://docker", false, false, {}};
}

Endpoint resolve_endpoint(const std::string& socket, const std::string& host) {
  return resolve_endpoint(socket, host, [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace cordon::docker
