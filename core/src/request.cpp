// Parsing the JSON run request: shape checks with the JSON path of each problem.
#include <cordon/request.hpp>

#include "json_keys.hpp"

#include <boost/json.hpp>

namespace cordon {

namespace {

namespace json = boost::json;

Error bad(const std::string& path, const std::string& what) {
  return Error(code::kBadRequest, "request " + path + ": " + what,
               "see the README's 'JSON request' section for the request format");
}

const json::string& want_string(const json::value& v, const std::string& path) {
  if (!v.is_string()) throw bad(path, "expected a string");
  return v.get_string();
}

Argument parse_argument(const json::value& v, const std::string& path) {
  if (v.is_string()) return trusted(std::string(v.get_string()));
  if (v.is_object()) {
    const auto& o = v.get_object();
    if (o.size() == 1 && o.contains("untrusted"))
      return untrusted(std::string(want_string(o.at("untrusted"), path + "/untrusted")));
    // Bytes that are not UTF-8 (JSON strings cannot hold them), given by the caller itself.
    if (o.size() == 1 && o.contains("base64")) {
      if (auto bytes = decode_base64(want_string(o.at("base64"), path + "/base64")))
        return trusted(std::move(*bytes));
      throw bad(path + "/base64", "not valid base64");
    }
  }
  throw bad(path, "expected a string, {\"untrusted\": \"...\"} or {\"base64\": \"...\"}");
}

std::vector<Argument> parse_argv(const json::value& v) {
  if (!v.is_array() || v.get_array().empty()) throw bad("/argv", "expected a non-empty array");
  std::vector<Argument> out;
  const auto& a = v.get_array();
  for (std::size_t i = 0; i < a.size(); ++i)
    out.push_back(parse_argument(a[i], "/argv/" + std::to_string(i)));
  checked_argv(out);  // CRD4002 / CRD4003 / CRD4006
  return out;
}

Duration parse_timeout(const json::value& v) {
  // At most ~3 years, so that the conversion to milliseconds cannot overflow.
  if (v.is_int64() && v.get_int64() > 0 && v.get_int64() <= 100'000'000)
    return std::chrono::seconds(v.get_int64());
  if (v.is_string())
    if (auto d = parse_duration(std::string(v.get_string()))) return *d;
  throw bad("/timeout", "expected a duration such as \"90s\" or a positive number of seconds");
}

std::string parse_stdin(const json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_object() && v.get_object().size() == 1 && v.get_object().contains("base64")) {
    if (auto bytes = decode_base64(want_string(v.get_object().at("base64"), "/stdin/base64")))
      return *bytes;
    throw bad("/stdin/base64", "not valid base64");
  }
  throw bad("/stdin", "expected a string or {\"base64\": \"...\"}");
}

std::map<std::string, std::string> parse_env(const json::value& v) {
  if (!v.is_object()) throw bad("/env", "expected an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& kv : v.get_object()) {
    std::string key(kv.key());
    out[key] = std::string(want_string(kv.value(), "/env/" + key));
  }
  return out;
}

void parse_policy(const json::value& v, RunRequest& r) {
  if (v.is_string())
    r.policy_path = std::string(v.get_string());
  else if (v.is_object())
    r.policy_inline = v.get_object();
  else
    throw bad("/policy", "expected a path or an inline policy object");
}

const char* const kKeys[] = {"argv",      "command", "policy", "backend",
                             "workspace", "timeout", "stdin",  "env"};

void check_keys(const json::object& o) {
  for (const auto& kv : o) {
    bool known = false;
    for (const char* k : kKeys) known = known || kv.key() == k;
    if (!known) throw bad("/" + std::string(kv.key()), "unknown key");
  }
  if (o.contains("argv") == o.contains("command"))
    throw bad("/", "give exactly one of \"argv\" and \"command\"");
}

json::value parse_json(std::string_view text) {
  if (text.size() > kMaxRequestBytes)
    throw bad("/", "larger than " + std::to_string(kMaxRequestBytes) + " bytes");
  json::parse_options opts;
  opts.max_depth = 32;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, {}, opts);
  if (ec) throw bad("/", "not valid JSON: " + ec.message());
  if (!v.is_object()) throw bad("/", "expected a JSON object");
  // The parser keeps the last of two equal keys: a request, or its inline policy, saying one
  // thing twice is refused as a policy file would be.
  if (auto dup = detail::first_duplicate_key(text))
    throw Error(code::kDuplicateKey,
                "request " + *dup + ": duplicate key '" + dup->substr(dup->rfind('/') + 1) + "'",
                "give each key once");
  return v;
}

}  // namespace

RunRequest parse_run_request(std::string_view text) {
  json::value v = parse_json(text);
  const auto& o = v.get_object();
  check_keys(o);
  RunRequest r;
  if (o.contains("argv")) r.argv = parse_argv(o.at("argv"));
  if (o.contains("command")) {
    r.command = std::string(want_string(o.at("command"), "/command"));
    if (r.command->find('\0') != std::string::npos)
      throw Error(code::kControlChar, "request /command contains a NUL byte");
  }
  if (o.contains("policy")) parse_policy(o.at("policy"), r);
  if (o.contains("backend")) r.backend = std::string(want_string(o.at("backend"), "/backend"));
  if (o.contains("workspace"))
    r.workspace = std::string(want_string(o.at("workspace"), "/workspace"));
  if (o.contains("timeout")) r.timeout = parse_timeout(o.at("timeout"));
  if (o.contains("stdin")) r.stdin_data = parse_stdin(o.at("stdin"));
  if (o.contains("env")) r.env = parse_env(o.at("env"));
  return r;
}

}  // namespace cordon
