// Validation of [backends.docker]. Pure.
#include "settings.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace cordon::docker {

namespace {

constexpr std::array<std::string_view, 8> kKeys = {"image",  "socket",  "host", "user",
                                                   "mounts", "runtime", "pull", "pool"};

std::string key_path(std::string_view key) { return "backends.docker." + std::string(key); }

Error bad(std::string_view key, const std::string& problem, const std::string& hint = {}) {
  return Error(code::kBadSettings, "'" + key_path(key) + "' " + problem, hint);
}

std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j < row.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row.back();
}

std::string nearest_key(std::string_view key) {
  std::string best;
  std::size_t best_distance = 3;
  for (auto candidate : kKeys)
    if (auto d = distance(key, candidate); d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  return best;
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

bool is_root_user(std::string_view user) {
  auto name = user.substr(0, user.find(':'));
  if (name == "root") return true;
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c == '0'; });
}

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
  if (key == "user" && is_root_user(s))
    errors.push_back(bad(key, "must not be root: the command never holds host privileges",
                         "give an unprivileged 'uid:gid' such as '65534:65534'"));
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
  std::vector<Error> errors;
  for (const auto& kv : table) {
    std::string_view key = kv.key();
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      auto near = nearest_key(key);
      errors.emplace_back(code::kBadSettings,
                          "unknown setting '" + key_path(key) + "'" +
                              (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                          "backend 'docker' takes image, socket, host, user, mounts, runtime, "
                          "pull and pool");
      continue;
    }
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
