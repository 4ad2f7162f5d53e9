// Validation of [backends.ssh]. Pure.
#include "settings.hpp"

#include <cordon/sdk/settings.hpp>

#include <algorithm>
#include <optional>
#include <string_view>

namespace cordon::ssh {

namespace {

const std::vector<std::string_view> kKeys = {
    "host",        "hosts",           "port",      "user",  "identity",
    "known_hosts", "connect_timeout", "workspace", "cordon"};

Error bad(std::string_view key, const std::string& problem, const std::string& hint = {}) {
  return Error(code::kBadSettings, "'backends.ssh." + std::string(key) + "' " + problem, hint);
}

bool plain_text(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return !s.empty();
}

void check_string(const boost::json::object& s, std::string_view key, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (!v) return;
  if (!v->is_string() || !plain_text(v->as_string()))
    out.push_back(bad(key, "must be a non-empty string without control characters"));
}

void check_integer(const boost::json::object& s, std::string_view key, std::int64_t low,
                   std::int64_t high, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (!v) return;
  if (!v->is_int64() || v->as_int64() < low || v->as_int64() > high)
    out.push_back(
        bad(key, "must be an integer from " + std::to_string(low) + " to " + std::to_string(high)));
}

void check_absolute(const boost::json::object& s, std::string_view key, std::vector<Error>& out) {
  const auto* v = s.if_contains(key);
  if (v && v->is_string() && !v->as_string().empty() && v->as_string()[0] != '/')
    out.push_back(bad(key, "must be an absolute path"));
}

// "name", "name:port", "[v6]:port" -> name and port (0: the port setting's).
std::optional<std::pair<std::string, int>> host_port(std::string_view entry) {
  std::string_view name = entry, port;
  if (!entry.empty() && entry.front() == '[') {
    auto close = entry.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = entry.substr(1, close - 1);
    if (close + 1 < entry.size()) {
      if (entry[close + 1] != ':') return std::nullopt;
      port = entry.substr(close + 2);
    }
  } else if (auto colon = entry.rfind(':');
             colon != std::string_view::npos && entry.find(':') == colon) {
    name = entry.substr(0, colon);
    port = entry.substr(colon + 1);
  }
  if (name.empty() || !plain_text(name)) return std::nullopt;
  int number = 0;
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
    number = std::stoi(std::string(port));
    if (number < 1 || number > 65535) return std::nullopt;
  }
  return std::pair{std::string(name), number};
}

void check_hosts(const boost::json::object& s, std::vector<Error>& out) {
  const auto* v = s.if_contains("hosts");
  if (!v) return;
  if (!v->is_array() || v->as_array().empty()) {
    out.push_back(bad("hosts", "must be a non-empty array of \"host\" or \"host:port\" strings"));
    return;
  }
  for (std::size_t i = 0; i < v->as_array().size(); ++i) {
    const auto& e = v->as_array()[i];
    if (!e.is_string() || !host_port(e.as_string()))
      out.push_back(bad("hosts", "entry " + std::to_string(i + 1) +
                                     " must be \"host\" or \"host:port\" (port 1-65535)"));
  }
}

std::string text(const boost::json::object& s, std::string_view key, std::string fallback) {
  const auto* v = s.if_contains(key);
  return v ? std::string(v->as_string()) : fallback;
}

}  // namespace

std::string Target::name() const { return user + "@" + host + ":" + std::to_string(port); }

std::string Target::key() const {
  return name() + "\n" + identity + "\n" + known_hosts + "\n" + std::to_string(connect_timeout) +
         "\n" + cordon.value_or("");
}

std::vector<Error> validate(const boost::json::object& settings) {
  std::vector<Error> out = sdk::unknown_settings("ssh", settings, kKeys);
  if (!settings.if_contains("host") && !settings.if_contains("hosts"))
    out.push_back(Error(code::kBadSettings, "'backends.ssh.host' is missing",
                        "name the remote host: [backends.ssh] host = \"build1.example.org\" "
                        "(or a fleet: hosts = [\"build1\", \"build2:2222\"])"));
  if (settings.if_contains("host") && settings.if_contains("hosts"))
    out.push_back(
        bad("hosts", "and 'backends.ssh.host' are both set", "give one host, or a fleet in hosts"));
  check_hosts(settings, out);
  if (!settings.if_contains("identity"))
    out.push_back(Error(code::kBadSettings, "'backends.ssh.identity' is missing",
                        "name a private key file, or \"agent\" to use ssh-agent"));
  for (auto key : {"host", "user", "identity", "known_hosts", "workspace", "cordon"})
    check_string(settings, key, out);
  check_integer(settings, "port", 1, 65535, out);
  check_integer(settings, "connect_timeout", 1, 300, out);
  check_absolute(settings, "known_hosts", out);
  check_absolute(settings, "workspace", out);
  const auto* cordon = settings.if_contains("cordon");
  if (cordon && cordon->is_string() && cordon->as_string() != "off" &&
      !cordon->as_string().empty() && cordon->as_string()[0] != '/')
    out.push_back(bad("cordon", "must be an absolute path to the remote cordon, or \"off\""));
  const auto* id = settings.if_contains("identity");
  if (id && id->is_string() && id->as_string() != "agent" && !id->as_string().empty() &&
      id->as_string()[0] != '/')
    out.push_back(bad("identity", "must be an absolute path to a private key, or \"agent\""));
  return out;
}

std::vector<Target> targets_of(const boost::json::object& settings, const std::string& local_user,
                               const std::string& home) {
  Target base = target_of(settings, local_user, home);
  const auto* hosts = settings.if_contains("hosts");
  if (!hosts) return {base};
  std::vector<Target> out;
  for (const auto& e : hosts->as_array()) {
    auto [name, port] = *host_port(e.as_string());
    Target t = base;
    t.host = name;
    if (port) t.port = port;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

Target target_of(const boost::json::object& settings, const std::string& local_user,
                 const std::string& home) {
  Target t;
  t.host = text(settings, "host", "");
  if (const auto* v = settings.if_contains("port")) t.port = static_cast<int>(v->as_int64());
  t.user = text(settings, "user", local_user);
  t.identity = text(settings, "identity", "");
  t.known_hosts = text(settings, "known_hosts", home + "/.ssh/known_hosts");
  if (const auto* v = settings.if_contains("connect_timeout")) t.connect_timeout = v->as_int64();
  if (const auto* v = settings.if_contains("workspace")) t.workspace = std::string(v->as_string());
  if (const auto* v = settings.if_contains("cordon")) t.cordon = std::string(v->as_string());
  return t;
}

}  // namespace cordon::ssh
