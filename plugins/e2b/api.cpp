// The control plane's requests, and the errors its answers make.
#include "api.hpp"

#include <cordon/sdk/error.hpp>

#include <boost/json.hpp>

#include <cstdlib>

#include "http.hpp"

namespace cordon::e2b {

namespace json = boost::json;

namespace {

json::value parsed(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  return ec ? json::value() : v;
}

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

long number_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_int64() ? static_cast<long>(v->as_int64()) : 0;
}

// The service's own words, cut short and stripped of control characters.
std::string message_of(const std::string& body) {
  auto v = parsed(body);
  std::string m = v.is_object() ? string_at(v.as_object(), "message") : body;
  std::string out;
  for (char c : m.substr(0, 300)) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  return out;
}

}  // namespace

std::string api_key(const Settings& settings) {
  const char* value = std::getenv(settings.api_key_env.c_str());
  if (!value || !*value)
    throw Error(code::kCredentialsRefused,
                "no E2B API key: the variable " + settings.api_key_env + " is not set",
                "export " + settings.api_key_env +
                    " (or name another variable in "
                    "backends.e2b.api_key_env)");
  return value;
}

Api::Api(Settings settings, std::string key)
    : settings_(std::move(settings)), key_(std::move(key)) {}

std::vector<std::string> Api::headers() const {
  return {"X-API-Key: " + key_, "Content-Type: application/json", "Accept: application/json"};
}

std::string Api::describe_failure(long status, const std::string& body) const {
  std::string m = message_of(body);
  return "the E2B API at " + settings_.api_url + " answered " + std::to_string(status) +
         (m.empty() ? std::string() : ": " + m);
}

namespace {

[[noreturn]] void fail(long status, const std::string& what, const std::string& key_env) {
  if (status == 401 || status == 403)
    throw Error(code::kCredentialsRefused, what,
                "check the key in " + key_env + ": the service did not accept it");
  throw Error(code::kServiceUnreachable, what);
}

}  // namespace

json::value Api::call(const std::string& method, const std::string& path, const std::string& body,
                      const std::string& what) const {
  Request r{method, settings_.api_url + path, headers(), body};
  r.timeout = std::chrono::seconds(settings_.request_timeout);
  Response a = send(r);
  if (a.status / 100 != 2)
    fail(a.status, what + " failed: " + describe_failure(a.status, a.body), settings_.api_key_env);
  return parsed(a.body);
}

Sandbox Api::create(const CreateSpec& spec) const {
  json::object meta;
  for (const auto& [k, v] : spec.metadata) meta[k] = v;
  json::object body{{"templateID", settings_.template_id},
                    {"timeout", spec.timeout_seconds},
                    {"metadata", std::move(meta)},
                    {"secure", true},
                    {"allow_internet_access", spec.internet}};
  auto v = call("POST", "/sandboxes", json::serialize(body), "creating a sandbox");
  if (!v.is_object() || string_at(v.as_object(), "sandboxID").empty())
    throw Error(code::kServiceUnreachable, "the E2B API's answer to a create has no sandboxID");
  // The id becomes part of a host name and a URL path: letters, digits and '-' only.
  if (string_at(v.as_object(), "sandboxID")
          .find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") !=
      std::string::npos) {
    throw Error(code::kServiceUnreachable,
                "the E2B API answered a create with a malformed sandboxID");
  }
  const auto& o = v.as_object();
  return {string_at(o, "sandboxID"), string_at(o, "envdAccessToken"), string_at(o, "envdVersion"),
          string_at(o, "domain")};
}

bool Api::kill(const std::string& id) const noexcept {
  try {
    Request r{"DELETE", settings_.api_url + "/sandboxes/" + url_escape(id), headers(), ""};
    r.timeout = std::chrono::seconds(settings_.request_timeout);
    long status = send(r).status;
    return status == 204 || status == 200 || status == 404;
  } catch (...) {
    return false;
  }
}

void Api::renew(const std::string& id, long seconds) const {
  call("POST", "/sandboxes/" + url_escape(id) + "/timeout",
       json::serialize(json::object{{"timeout", seconds}}), "renewing sandbox " + id);
}

std::vector<Listed> Api::list(const std::map<std::string, std::string>& metadata) const {
  std::string query;
  for (const auto& [k, v] : metadata)
    query += (query.empty() ? "" : "&") + url_escape(k) + "=" + url_escape(v);
  // One page of up to 1000: the sandboxes of one machine's cordon processes.
  auto v = call("GET", "/v2/sandboxes?state=running&limit=1000&metadata=" + url_escape(query), "",
                "listing sandboxes");
  if (!v.is_array()) throw Error(code::kServiceUnreachable, "the sandbox list is not a list");
  std::vector<Listed> out;
  for (const auto& item : v.as_array()) {
    if (!item.is_object()) continue;
    Listed l{string_at(item.as_object(), "sandboxID"), {}};
    if (const auto* m = item.as_object().if_contains("metadata"); m && m->is_object())
      for (const auto& kv : m->as_object())
        if (kv.value().is_string()) l.metadata[kv.key()] = std::string(kv.value().as_string());
    out.push_back(std::move(l));
  }
  return out;
}

std::optional<TemplateInfo> Api::find_template() const {
  auto v = call("GET", "/templates", "", "reading the templates");
  if (!v.is_array()) throw Error(code::kServiceUnreachable, "the template list is not a list");
  for (const auto& item : v.as_array()) {
    if (!item.is_object()) continue;
    const auto& o = item.as_object();
    bool match = string_at(o, "templateID") == settings_.template_id;
    if (const auto* aliases = o.if_contains("aliases"); aliases && aliases->is_array())
      for (const auto& a2 : aliases->as_array())
        match = match || (a2.is_string() && a2.as_string() == settings_.template_id);
    if (match) return TemplateInfo{number_at(o, "cpuCount"), number_at(o, "memoryMB")};
  }
  return std::nullopt;
}

}  // namespace cordon::e2b
