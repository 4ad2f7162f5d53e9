// Validation of [backends.e2b]. Pure.
#include "settings.hpp"

#include <cordon/sdk/settings.hpp>

#include <string_view>

namespace cordon::e2b {

namespace {

const std::vector<std::string_view> kKeys = {
    "api_url", "domain",    "envd_url", "template",        "api_key_env", "user",           "lease",
    "pool",    "workspace", "upload",   "upload_limit_mb", "download",    "request_timeout"};

Error bad(std::string_view key, const std::string& problem, const std::string& hint = {}) {
  return Error(code::kBadSettings, "'backends.e2b." + std::string(key) + "' " + problem, hint);
}

bool plain_text(std::string_view s) {
  for (unsigned char c : s)
    if (c <= 0x20 || c == 0x7f) return false;
  return !s.empty();
}

void check_word(const boost::json::object& s, std::string_view key, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (v && (!v->is_string() || !plain_text(v->as_string())))
    out.push_back(bad(key, "must be a non-empty string without spaces or control characters"));
}

void check_integer(const boost::json::object& s, std::string_view key, std::int64_t low,
                   std::int64_t high, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (v && (!v->is_int64() || v->as_int64() < low || v->as_int64() > high))
    out.push_back(
        bad(key, "must be an integer from " + std::to_string(low) + " to " + std::to_string(high)));
}

void check_bool(const boost::json::object& s, std::string_view key, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (v && !v->is_bool()) out.push_back(bad(key, "must be true or false"));
}

// An API key must never cross a network in clear text: https, or http to this machine only.
void check_url(const boost::json::object& s, std::string_view key, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (!v || !v->is_string() || !plain_text(v->as_string())) return;
  std::string url(v->as_string());
  if (url.rfind("https://", 0) == 0 && url.size() > 8) return;
  if (loopback_http(url)) return;
  out.push_back(bad(key, "must be an https:// URL (http:// only to 127.0.0.1, ::1 or localhost)",
                    "the API key and the sandbox's access token travel in its headers"));
}

bool normal_absolute(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  std::size_t at = 1;
  while (at <= path.size()) {
    auto end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    auto part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

std::string text(const boost::json::object& s, std::string_view key, std::string fallback) {
  const auto* v = s.if_contains(key);
  return v ? std::string(v->as_string()) : fallback;
}

long number(const boost::json::object& s, std::string_view key, long fallback) {
  const auto* v = s.if_contains(key);
  return v ? static_cast<long>(v->as_int64()) : fallback;
}

bool flag(const boost::json::object& s, std::string_view key, bool fallback) {
  const auto* v = s.if_contains(key);
  return v ? v->as_bool() : fallback;
}

std::string without_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

bool loopback_http(const std::string& url) {
  for (std::string_view host : {"http://127.0.0.1", "http://[::1]", "http://localhost"}) {
    if (url.rfind(host, 0) != 0) continue;
    char next = url.size() > host.size() ? url[host.size()] : '\0';
    if (next == '\0' || next == ':' || next == '/') return true;
  }
  return false;
}

std::string Settings::key() const {
  return api_url + "\n" + envd_url.value_or("") + "\n" + domain + "\n" + template_id + "\n" +
         api_key_env + "\n" + user + "\n" + std::to_string(lease);
}

std::string Settings::envd_base(const std::string& id, const std::string& sandbox_domain) const {
  if (envd_url) return *envd_url;
  bool usable =
      !sandbox_domain.empty() && sandbox_domain.find_first_of("/:@?# \t\r\n") == std::string::npos;
  return "https://49983-" + id + "." + (usable ? sandbox_domain : domain);
}

std::vector<Error> validate(const boost::json::object& settings) {
  std::vector<Error> out = sdk::unknown_settings("e2b", settings, kKeys);
  for (auto key : {"api_url", "domain", "envd_url", "template", "api_key_env", "user", "workspace"})
    check_word(settings, key, out);
  check_url(settings, "api_url", out);
  check_url(settings, "envd_url", out);
  if (const auto* v = settings.if_contains("workspace");
      v && v->is_string() && !v->as_string().empty() && !normal_absolute(v->as_string()))
    out.push_back(bad("workspace", "must be an absolute path without '.', '..' or empty parts",
                      "the workspace is unpacked there as root in the sandbox"));
  if (const auto* v = settings.if_contains("api_key_env"); v && v->is_string()) {
    std::string_view name = v->as_string();
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name)
      ok = ok &&
           ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok) out.push_back(bad("api_key_env", "must be an environment variable's name"));
  }
  check_integer(settings, "lease", 30, 86400, out);
  check_integer(settings, "pool", 0, 16, out);
  check_integer(settings, "upload_limit_mb", 1, 4096, out);
  check_integer(settings, "request_timeout", 1, 300, out);
  check_bool(settings, "upload", out);
  check_bool(settings, "download", out);
  return out;
}

Settings settings_of(const boost::json::object& s) {
  Settings r;
  r.domain = text(s, "domain", r.domain);
  r.api_url = without_slash(text(s, "api_url", "https://api." + r.domain));
  if (const auto* v = s.if_contains("envd_url"))
    r.envd_url = without_slash(std::string(v->as_string()));
  r.template_id = text(s, "template", r.template_id);
  r.api_key_env = text(s, "api_key_env", r.api_key_env);
  r.user = text(s, "user", r.user);
  r.lease = number(s, "lease", r.lease);
  r.pool = number(s, "pool", r.pool);
  if (const auto* v = s.if_contains("workspace")) r.workspace = std::string(v->as_string());
  r.upload = flag(s, "upload", r.upload);
  r.upload_limit_mb = number(s, "upload_limit_mb", r.upload_limit_mb);
  r.download = flag(s, "download", r.download);
  r.request_timeout = number(s, "request_timeout", r.request_timeout);
  return r;
}

}  // namespace cordon::e2b
