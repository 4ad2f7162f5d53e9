// E2B's control plane: create, kill, renew and list sandboxes, and read a template. Every
// request carries the API key in X-API-Key; no error message this file makes contains it.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "settings.hpp"

namespace cordon::e2b {

/// A sandbox as the control plane describes it when it is created.
struct Sandbox {
  std::string id;
  std::string access_token;  ///< envd's X-Access-Token (secure sandboxes)
  std::string envd_version;
  std::string domain;  ///< the sandbox's traffic domain when the service names one
};

/// What POST /sandboxes asks for.
struct CreateSpec {
  long timeout_seconds = 300;  ///< the sandbox is killed by the service this long from now
  bool internet = false;       ///< allow_internet_access
  std::map<std::string, std::string> metadata;
};

/// One sandbox of GET /v2/sandboxes.
struct Listed {
  std::string id;
  std::map<std::string, std::string> metadata;
};

/// A template's resources, as GET /templates gives them (0: not said).
struct TemplateInfo {
  long cpu_count = 0;
  long memory_mb = 0;
};

class Api {
 public:
  /// `key`: the API key's value (from the variable the settings name).
  Api(Settings settings, std::string key);

  /// POST /sandboxes (secure, the settings' template). Throws cordon::Error: CRD1010 for a key
  /// the service refuses, CRD1005 for any other failure (with the service's message).
  Sandbox create(const CreateSpec& spec) const;
  /// DELETE /sandboxes/{id}; true when it is gone (killed now, or already gone: 404).
  /// Never throws.
  bool kill(const std::string& id) const noexcept;
  /// POST /sandboxes/{id}/timeout: the sandbox lives `seconds` from now. Throws as create().
  void renew(const std::string& id, long seconds) const;
  /// GET /v2/sandboxes of running sandboxes whose metadata has every pair of `metadata`
  /// (all pages). Throws as create().
  std::vector<Listed> list(const std::map<std::string, std::string>& metadata) const;
  /// GET /templates: the settings' template (by id or alias), or nullopt when the service does
  /// not have it. Throws as create().
  std::optional<TemplateInfo> find_template() const;

 private:
  std::vector<std::string> headers() const;
  std::string describe_failure(long status, const std::string& body) const;
  /// `method path` with `body`; the answer's JSON when its status is 2xx, else throws as
  /// create() does, the message starting with `what` ("creating a sandbox").
  boost::json::value call(const std::string& method, const std::string& path,
                          const std::string& body, const std::string& what) const;

  Settings settings_;
  std::string key_;
};

/// The API key from the variable `settings` name; throws cordon::Error (CRD1010) naming the
/// variable when it is unset or empty.
std::string api_key(const Settings& settings);

}  // namespace cordon::e2b
