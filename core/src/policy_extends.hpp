// Reading policy documents and resolving their `extends` chains into one merged tree.
#pragma once

#include "policy_diagnostics.hpp"
#include "policy_node.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cordon::detail {

/// One parsed policy file or preset.
struct Document {
  Node root;
  std::string source;              ///< the file as named, or "preset:NAME"
  std::string identity;            ///< canonical path or "preset:NAME": what a cycle repeats
  std::filesystem::path base_dir;  ///< where its relative `extends` resolve
  bool file = false;               ///< read from the file `identity` names
};

/// CRD2007 for `name`, with the nearest preset and the list of presets.
Error unknown_preset(const std::string& name, const std::optional<Location>& where);

/// Reads a policy file: refuses non-regular files (CRD2001) and files over kMaxPolicyBytes
/// (CRD2014) before reading them. Throws Error.
std::string read_policy_file(const std::filesystem::path& file);

/// Parses a file / text / shipped preset into a document. Throw Error (CRD2001, CRD2002,
/// CRD2007, CRD2010, CRD2011, CRD2014).
Document document_from_file(const std::filesystem::path& file);
Document document_from_text(const std::string& text, const std::string& name,
                            const std::filesystem::path& base_dir);
Document document_from_preset(const std::string& name);

/// A policy tree with everything it extends merged in, and the sources it came from.
struct Resolved {
  Node root;
  std::vector<std::string> sources;  ///< base first
  std::vector<std::string> files;    ///< the files among them: canonical, and as named
};

/// Follows `extends` from `doc`, checking each document on its own against the key table, then
/// merges base first (scalars and tables override, lists replace). Every problem goes to `diag`.
Resolved resolve_extends(Document doc, Diagnostics& diag);

}  // namespace cordon::detail
