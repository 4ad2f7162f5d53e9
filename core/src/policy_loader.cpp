// The public loading API: a file, a text or a preset becomes a checked, resolved Policy, or an
// ErrorList with every problem found.
#include <cordon/policy_loader.hpp>

#include "policy_extends.hpp"
#include "policy_keys.hpp"

namespace cordon {

namespace {

using detail::Diagnostics;
using detail::Document;

Policy resolve(Document doc) {
  Diagnostics diag;
  detail::Resolved resolved = detail::resolve_extends(std::move(doc), diag);
  Policy policy;  // the defaults of policy.hpp, under everything the files say
  // Each file was checked on its own already; checking the merged tree would repeat those
  // errors. The contradictions are still looked for, so one run reports everything.
  Diagnostics repeated;
  detail::decode_tree(resolved.root, policy, repeated);
  detail::record_origins(resolved.root, policy);
  policy.sources = std::move(resolved.sources);
  policy.files = std::move(resolved.files);
  detail::check_contradictions(policy, resolved.root, diag);
  diag.throw_if_any();
  return policy;
}

// The API throws ErrorList only; a single fatal Error becomes a list of one.
template <class F>
Policy as_error_list(F&& load) {
  try {
    return load();
  } catch (const Error& e) {
    throw ErrorList({e});
  }
}

}  // namespace

Policy load_policy_file(const std::filesystem::path& file) {
  return as_error_list([&] { return resolve(detail::document_from_file(file)); });
}

Policy load_policy_text(const std::string& text, const std::string& name,
                        const std::filesystem::path& base_dir) {
  return as_error_list([&] { return resolve(detail::document_from_text(text, name, base_dir)); });
}

Policy load_preset(const std::string& name) {
  return as_error_list([&] { return resolve(detail::document_from_preset(name)); });
}

bool names_policy_file(std::string_view ref) {
  return ref.find('/') != std::string_view::npos || ref.ends_with(".toml") ||
         ref.ends_with(".yaml") || ref.ends_with(".yml");
}

Policy load_policy(const std::string& ref) {
  return names_policy_file(ref) ? load_policy_file(ref) : load_preset(ref);
}

std::vector<Error> policy_warnings(const Policy& policy) { return detail::warnings_of(policy); }

}  // namespace cordon
