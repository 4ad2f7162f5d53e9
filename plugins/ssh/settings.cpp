// Validation of [backends.ssh]. Pure.
#include "settings.hpp"

#include <array>
#include <string_view>

namespace cordon::ssh {

namespace {

constexpr std::array<std::string_view, 8> kKeys = {
    "host", "port", "user", "identity", "known_hosts", "connect_timeout", "workspace", "cordon"};

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
  std::vector<Error> out;
  for (const auto& kv : settings) {
    bool known = false;
    for (auto k : kKeys) known = known || kv.key() == k;
    if (!known)
      out.push_back(bad(kv.key(), "is not a setting of the ssh backend",
                        "known: host, port, user, identity, known_hosts, connect_timeout, "
                        "workspace, cordon"));
  }
  if (!settings.if_contains("host"))
    out.push_back(Error(code::kBadSettings, "'backends.ssh.host' is missing",
                        "name the remote host: [backends.ssh] host = \"build1.example.org\""));
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
