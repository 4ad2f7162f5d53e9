// [backends.e2b]: which E2B service, which template, as whom, and what a run copies. Pure.
//
//   api_url          the control plane                       https://api.<domain>
//   domain           the sandboxes' domain                   e2b.app
//   envd_url         every sandbox's envd at one address, routed by the E2b-Sandbox-Id header
//                    (a regional gateway, or the local stand-in of the tests)
//                                                            https://49983-<id>.<domain>
//   template         the sandbox template                    base
//   api_key_env      the variable holding the API key        E2B_API_KEY
//   user             the Linux user commands run as          user
//   lease            seconds a sandbox lives without cordon renewing it, 30-86400   300
//   pool             sandboxes created ahead, 0-16           0
//   workspace        the command's directory in the sandbox (absolute)   the local workspace's path
//   upload           copy the workspace in before the command           true
//   upload_limit_mb  refuse a run whose upload is larger, 1-4096        100
//   download         copy the files the run wrote under the write paths back   false
//   request_timeout  seconds one control request may take, 1-300         30
#pragma once

#include <cordon/sdk/error.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon::e2b {

/// The settings, validated, with defaults filled in.
struct Settings {
  std::string api_url;
  std::string domain = "e2b.app";
  std::optional<std::string> envd_url;
  std::string template_id = "base";
  std::string api_key_env = "E2B_API_KEY";
  std::string user = "user";
  long lease = 300;
  long pool = 0;
  std::optional<std::string> workspace;
  bool upload = true;
  long upload_limit_mb = 100;
  bool download = false;
  long request_timeout = 30;

  /// What a sandbox of these settings is made from: two settings with the same key may share a
  /// pooled sandbox and a probe.
  std::string key() const;
  /// The envd address of sandbox `id`, on `sandbox_domain` when the service named one for it.
  std::string envd_base(const std::string& id, const std::string& sandbox_domain = {}) const;
  bool operator==(const Settings&) const = default;
};

/// Every mistake in `settings`, each naming its key (CRD2015). Empty when valid.
std::vector<Error> validate(const boost::json::object& settings);

/// The settings `settings` give. Call only with settings that validate.
Settings settings_of(const boost::json::object& settings);

/// True for an http:// URL whose host is a loopback address (127.0.0.1, ::1, localhost): the
/// only place a key may travel without TLS.
bool loopback_http(const std::string& url);

}  // namespace cordon::e2b
