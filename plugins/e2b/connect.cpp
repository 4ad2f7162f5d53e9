// Connect envelopes and envd's process events. Pure.
#include "connect.hpp"

#include <cordon/request.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <stdexcept>
#include <utility>

namespace cordon::e2b {

namespace {

std::uint32_t be32(std::string_view b) {
  return (std::uint32_t(std::uint8_t(b[0])) << 24) | (std::uint32_t(std::uint8_t(b[1])) << 16) |
         (std::uint32_t(std::uint8_t(b[2])) << 8) | std::uint32_t(std::uint8_t(b[3]));
}

boost::json::value json_of(std::string_view payload) {
  boost::system::error_code ec;
  auto v = boost::json::parse(payload, ec);
  if (ec) throw std::runtime_error("an envelope of envd's stream is not JSON");
  return v;
}

const boost::json::object* member(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

std::string string_member(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

long long number_member(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<long long>(v->as_uint64());
  if (v->is_string()) return std::stoll(std::string(v->as_string()));  // int64 as a string
  return 0;
}

std::string decoded(const boost::json::object& o, std::string_view key) {
  auto bytes = decode_base64(string_member(o, key));
  if (!bytes) throw std::runtime_error("a data event of envd's stream is not base64");
  return std::move(*bytes);
}

}  // namespace

std::string envelope(std::string_view payload) {
  std::string out(5, '\0');
  auto n = static_cast<std::uint32_t>(payload.size());
  out[1] = static_cast<char>(n >> 24);
  out[2] = static_cast<char>(n >> 16);
  out[3] = static_cast<char>(n >> 8);
  out[4] = static_cast<char>(n);
  out.append(payload);
  return out;
}

std::vector<Envelope> EnvelopeReader::feed(std::string_view bytes) {
  buffer_.append(bytes);
  std::vector<Envelope> out;
  std::size_t at = 0;
  while (buffer_.size() - at >= 5) {
    std::uint32_t n = be32(std::string_view(buffer_).substr(at + 1, 4));
    if (n > kMaxEnvelope) throw std::runtime_error("an envelope of envd's stream is too large");
    if (buffer_.size() - at - 5 < n) break;
    auto flags = static_cast<std::uint8_t>(buffer_[at]);
    if (flags & kCompressed) throw std::runtime_error("envd sent a compressed envelope");
    out.push_back({flags, buffer_.substr(at + 5, n)});
    at += 5 + n;
  }
  buffer_.erase(0, at);
  return out;
}

Event parse_event(std::string_view payload) {
  auto v = json_of(payload);
  Event e;
  const auto* event = v.is_object() ? member(v.as_object(), "event") : nullptr;
  if (!event) return e;
  if (const auto* s = member(*event, "start")) {
    e.kind = Event::Kind::start;
    e.pid = static_cast<long>(number_member(*s, "pid"));
  } else if (const auto* d = member(*event, "data")) {
    e.kind = d->if_contains("stderr") ? Event::Kind::err : Event::Kind::out;
    e.data = decoded(*d, e.kind == Event::Kind::err ? "stderr" : "stdout");
  } else if (member(*event, "keepalive")) {
    e.kind = Event::Kind::keepalive;
  } else if (const auto* end = member(*event, "end")) {
    e.kind = Event::Kind::end;
    e.exit_code = static_cast<int>(number_member(*end, "exitCode"));
    const auto* exited = end->if_contains("exited");
    e.exited = exited && exited->is_bool() && exited->as_bool();
    e.status = string_member(*end, "status");
    e.error = string_member(*end, "error");
  }
  return e;
}

std::optional<std::string> end_stream_error(std::string_view payload) {
  auto v = json_of(payload);
  if (!v.is_object()) return std::nullopt;
  const auto* error = member(v.as_object(), "error");
  if (!error) return std::nullopt;
  std::string code = string_member(*error, "code"), message = string_member(*error, "message");
  return code.empty() ? message : message.empty() ? code : code + ": " + message;
}

int signal_of_status(std::string_view status) {
  constexpr std::string_view prefix = "signal: ";
  if (status.rfind(prefix, 0) != 0) return 0;
  auto name = status.substr(prefix.size());
  if (auto core = name.find(" (core dumped)"); core != std::string_view::npos)
    name = name.substr(0, core);
  static constexpr std::array<std::pair<std::string_view, int>, 15> kNames = {{
      {"hangup", 1},
      {"interrupt", 2},
      {"quit", 3},
      {"illegal instruction", 4},
      {"trace/breakpoint trap", 5},
      {"aborted", 6},
      {"bus error", 7},
      {"floating point exception", 8},
      {"killed", 9},
      {"user defined signal 1", 10},
      {"segmentation fault", 11},
      {"user defined signal 2", 12},
      {"broken pipe", 13},
      {"alarm clock", 14},
      {"terminated", 15},
  }};
  for (auto [text, number] : kNames)
    if (name == text) return number;
  if (name.rfind("signal ", 0) == 0) name.remove_prefix(7);
  int n = 0;
  for (char c : name) {
    if (c < '0' || c > '9' || n > 1000) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace cordon::e2b
