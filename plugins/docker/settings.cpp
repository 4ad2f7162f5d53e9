// Validation of [backends.docker]. Pure.
#include "settings.hpp"

#include <cordon/sdk/settings.hpp>

#include <string_view>
#include <utility>
#include <vector>

namespace cordon::docker {

namespace {

const std::vector<std::string_view> kKeys = {"image",  "socket",  "host", "user",
                                             "mounts", "runtime", "pull", "pool"};

std::string key_path(std::string_view key) { return "backends.docker." + std::string(key); }

Error bad(std::string_view key, const std::string& problem, const std::string& hint = {}) {
  return Error(code::kBadSettings, "'" + key_path(key) + "' " + problem, hint);
}

// "SRC:DST[:ro|rw]" with absolute paths; nullopt when malformed.
std::optional<ExtraMount> parse_mount(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ':') {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw") return std::nullopt;
  for (int i = 0; i < 2; ++i)
    if (parts[i].empty() || parts[i].front() != '/' || parts[i].find(',') != std::string::npos)
      return std::nullopt;
  return ExtraMount{parts[0], parts[1], parts.size() == 3 && parts[2] == "rw"};
}

// One side of a `user` setting: digits (a uid or gid) or a name the image resolves.
bool digits(std::string_view part) {
  return !part.empty() && part.size() <= 10 &&
         std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool name(std::string_view part) {
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
  };
  if (part.empty() || part.size() > 32) return false;
  for (std::size_t i = 0; i < part.size(); ++i)
    if (!ok(part[i], i == 0)) return false;
  return true;
}

// `part` spells root: "0", "00", "root".
bool is_root(std::string_view part) {
  if (part == "root") return true;
  return digits(part) && std::all_of(part.begin(), part.end(), [](char c) { return c == '0'; });
}

}  // namespace

std::string user_problem(std::string_view user) {
  auto colon = user.find(':');
  std::vector<std::pair<std::string_view, const char*>> parts{{user.substr(0, colon), "uid"}};
  if (colon != std::string_view::npos) parts.emplace_back(user.substr(colon + 1), "gid");
  std::string saw = "saw '" + std::string(user) + "'";
  for (auto [part, what] : parts) {
    if (!digits(part) && !name(part))
      return "must be 'uid', 'uid:gid', 'name' or 'name:group' (digits, or a name of letters, "
             "digits, '_', '.' and '-'), " +
             saw;
    if (digits(part) && std::stoull(std::string(part)) > kMaxUserId)
      return "must hold ids of at most " + std::to_string(kMaxUserId) + ", " + saw;
    if (is_root(part))
      return std::string("must not be root (") + what + " 0, " + saw +
             "): the command never holds host privileges";
  }
  return {};
}

namespace {

void check_string(std::string_view key, const boost::json::value& v, std::vector<Error>& errors) {
  if (!v.is_string()) {
    errors.push_back(bad(key, "must be a string"));
    return;
  }
  std::string_view s = v.get_string();
  if (s.empty()) errors.push_back(bad(key, "must not be empty"));
  if (key == "socket" && !s.empty() && s.front() != '/')
    errors.push_back(bad(key, "must be an absolute path", "for example '/var/run/docker.sock'"));
  if (key == "host" && !s.empty() && s.rfind("unix://", 0) != 0 && s.rfind("tcp://", 0) != 0)
    errors.push_back(bad(key, "must start with 'unix://' or 'tcp://'"));
  if (key == "user" && !s.empty())
    if (auto problem = user_problem(s); !problem.empty())
      errors.push_back(bad(key, problem, "give an unprivileged 'uid:gid' such as '65534:65534'"));
}

void check_value(std::string_view key, const boost::json::value& v, std::vector<Error>& errors) {
  if (key == "pull") {
    if (!v.is_bool())
      errors.push_back(bad(key, "must be a boolean"));
    else if (v.get_bool())
      errors.push_back(bad(key, "must be false: cordon never pulls an image",
                           "pull it yourself ('docker pull IMAGE'), then run again"));
  } else if (key == "pool") {
    if (!v.is_int64() && !v.is_uint64())
      errors.push_back(bad(key, "must be an integer"));
    else if (v.is_int64() ? (v.get_int64() < 0 || v.get_int64() > kMaxPool)
                          : v.get_uint64() > kMaxPool)
      errors.push_back(bad(key, "must be between 0 and " + std::to_string(kMaxPool)));
  } else if (key == "mounts") {
    if (!v.is_array()) {
      errors.push_back(bad(key, "must be an array of 'SRC:DST[:ro|rw]' strings"));
      return;
    }
    std::size_t i = 0;
    for (const auto& m : v.get_array()) {
      std::string item = std::string(key) + "[" + std::to_string(i++) + "]";
      if (!m.is_string() || !parse_mount(m.get_string()))
        errors.push_back(bad(item,
                             "must be 'SRC:DST', 'SRC:DST:ro' or 'SRC:DST:rw' with absolute "
                             "paths"));
    }
  } else {
    check_string(key, v, errors);
  }
}

}  // namespace

std::vector<Error> validate_settings(const boost::json::object& table) {
  std::vector<Error> errors = sdk::unknown_settings("docker", table, kKeys);
  for (const auto& kv : table) {
    std::string_view key = kv.key();
    if (!sdk::known_setting(key, kKeys)) continue;
    check_value(key, kv.value(), errors);
  }
  if (!table.contains("image"))
    errors.emplace_back(code::kBadSettings, "missing setting '" + key_path("image") + "'",
                        "name the image to run in, e.g. image = \"debian:bookworm-slim\"; cordon "
                        "has no default image");
  if (table.contains("socket") && table.contains("host"))
    errors.push_back(bad("socket", "and 'backends.docker.host' are exclusive: give one"));
  return errors;
}

Settings parse_settings(const boost::json::object& table) {
  Settings s;
  auto text = [&table](const char* key) {
    const auto* v = table.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  s.image = text("image");
  s.socket = text("socket");
  s.host = text("host");
  s.user = text("user");
  s.runtime = text("runtime");
  if (const auto* v = table.if_contains("pool"); v && (v->is_int64() || v->is_uint64()))
    s.pool = static_cast<std::uint32_t>(v->is_int64() ? v->get_int64() : v->get_uint64());
  if (const auto* v = table.if_contains("mounts"); v && v->is_array())
    for (const auto& m : v->get_array())
      if (m.is_string())
        if (auto parsed = parse_mount(m.get_string())) s.mounts.push_back(*parsed);
  return s;
}

}  // namespace cordon::docker
