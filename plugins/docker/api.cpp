// Version negotiation and the JSON plumbing of Engine API calls.
#include "api.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>

namespace cordon::docker {

std::optional<ApiVersion> parse_api_version(const std::string& text) {
  ApiVersion v;
  auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= text.size() || text.size() > 12)
    return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (i != dot && (text[i] < '0' || text[i] > '9')) return std::nullopt;
  v.major = std::stoi(text.substr(0, dot));
  v.minor = std::stoi(text.substr(dot + 1));
  return v;
}

ApiVersion negotiate(ApiVersion daemon_newest, std::optional<ApiVersion> daemon_oldest,
                     const std::string& where) {
  ApiVersion chosen = std::min(daemon_newest, kNewestApi);
  if (chosen < kOldestApi)
    throw Error(code::kBackendUnavailable,
                "the docker daemon at " + where + " speaks API " + daemon_newest.str() +
                    ", older than the oldest cordon supports (" + kOldestApi.str() + ")",
                "upgrade the docker engine");
  if (daemon_oldest && chosen < *daemon_oldest)
    throw Error(code::kBackendUnavailable,
                "the docker daemon at " + where + " accepts API " + daemon_oldest->str() +
                    " and newer, and cordon speaks up to " + kNewestApi.str(),
                "set DOCKER_MIN_API_VERSION on the daemon or use an older engine");
  return chosen;
}

namespace {

std::optional<ApiVersion> field_version(const boost::json::object& o, const char* key) {
  if (const auto* v = o.if_contains(key); v && v->is_string())
    return parse_api_version(std::string(v->get_string()));
  return std::nullopt;
}

}  // namespace

Daemon::Daemon(Endpoint ep) : ep_(std::move(ep)) {
  Response ping = http_request(ep_, "GET", "/_ping", std::nullopt, std::chrono::seconds(10));
  if (ping.status != 200)
    throw Error(code::kServiceUnreachable, "the docker daemon at " + ep_.display() +
                                               " answered /_ping with " +
                                               std::to_string(ping.status));
  Response ver = http_request(ep_, "GET", "/version", std::nullopt, std::chrono::seconds(10));
  boost::json::error_code ec;
  auto parsed = boost::json::parse(ver.body, ec);
  if (!ec && parsed.is_object()) version_info_ = parsed.as_object();
  auto newest = ping.headers.count("api-version")
                    ? parse_api_version(ping.headers.at("api-version"))
                    : field_version(version_info_, "ApiVersion");
  if (!newest)
    throw Error(code::kBackendUnavailable,
                "the docker daemon at " + ep_.display() + " did not say which API it speaks");
  version_ = negotiate(*newest, field_version(version_info_, "MinAPIVersion"), ep_.display());
}

std::string Daemon::path(const std::string& p) const { return "/v" + version_.str() + p; }

Response Daemon::call(std::string_view method, const std::string& p,
                      const std::optional<boost::json::value>& body,
                      std::chrono::milliseconds timeout, const Cancel& cancel) const {
  std::optional<std::string> text;
  if (body) text = boost::json::serialize(*body);
  return http_request(ep_, method, path(p), text, timeout, cancel);
}

boost::json::object Daemon::json(std::string_view method, const std::string& p, const char* code,
                                 const std::string& what,
                                 const std::optional<boost::json::value>& body) const {
  Response r = call(method, p, body);
  if (r.status < 200 || r.status > 299)
    throw Error(code, what + ": " + daemon_message(r) + " (HTTP " + std::to_string(r.status) + ")");
  boost::json::error_code ec;
  auto parsed = boost::json::parse(r.body, ec);
  if (ec || !parsed.is_object())
    throw Error(code::kBackendFault, what + ": the daemon's answer is not a JSON object");
  return parsed.as_object();
}

std::string daemon_message(const Response& r) {
  boost::json::error_code ec;
  auto parsed = boost::json::parse(r.body, ec);
  if (!ec && parsed.is_object())
    if (const auto* m = parsed.as_object().if_contains("message"); m && m->is_string())
      return std::string(m->get_string());
  std::string body = r.body;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  return body;
}

std::string string_member(const boost::json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::string url_encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace cordon::docker
