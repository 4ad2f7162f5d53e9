// The JSON request an agent host sends to run one command (`cordon run --request FILE|-`).
// Parsing is pure; the request is checked here for shape, and later against the policy.
#pragma once

#include <cordon/command.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>

#include <boost/json/object.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// Largest request accepted, in bytes.
inline constexpr std::size_t kMaxRequestBytes = 16 * 1024 * 1024;

/// One run, as a request gives it. Exactly one of `argv` and `command` is set.
///
///   {"argv": ["git", "clone", {"untrusted": "https://..."}],   // or "command": "git status"
///    "policy": "policies/agent.toml" | { ...inline policy... },
///    "backend": "landlock", "workspace": "/src/app", "timeout": "90s" | 90,
///    "stdin": "text" | {"base64": "..."}, "env": {"CI": "1"}}
struct RunRequest {
  std::vector<Argument> argv;
  std::optional<std::string> command;
  std::optional<std::string> policy_path;
  std::optional<boost::json::object> policy_inline;
  std::optional<std::string> backend;
  std::optional<std::string> workspace;
  std::optional<Duration> timeout;
  std::optional<std::string> stdin_data;
  std::map<std::string, std::string> env;  ///< values for names the policy's env.pass grants
};

/// Parses a request. Throws Error CRD4006 naming the JSON path of the problem ("/argv/2"),
/// CRD4002 / CRD4003 for untrusted arguments that fail their checks.
CORDON_API RunRequest parse_run_request(std::string_view json_text);

/// Decodes standard base64 (padding optional); nullopt on any other character.
CORDON_API std::optional<std::string> decode_base64(std::string_view text);
/// Encodes standard base64 with padding.
CORDON_API std::string encode_base64(std::string_view bytes);
/// True when `bytes` is valid UTF-8.
CORDON_API bool is_utf8(std::string_view bytes);

}  // namespace cordon
