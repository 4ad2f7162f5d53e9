// Writing a policy out: the effective policy as TOML, YAML or JSON, and the JSON Schema of the
// policy format. Both come from the same key table the loader checks files against.
#pragma once

#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>

#include <string>

namespace cordon {

/// The effective policy (presets and `extends` applied) as a TOML policy file. Loading the text
/// gives a policy whose same_rules() is true against `policy`.
CORDON_API std::string to_toml(const Policy& policy);

/// The effective policy as a YAML policy file; round-trips like to_toml().
CORDON_API std::string to_yaml(const Policy& policy);

/// The effective policy as a JSON object with the same keys (JSON is also valid YAML, so the
/// text loads back under a .yaml name).
CORDON_API std::string to_json(const Policy& policy);

/// A JSON Schema (draft 2020-12) of the policy format, generated from the loader's key table;
/// committed as policies/cordon-policy.schema.json for editors.
CORDON_API std::string policy_json_schema();

}  // namespace cordon
