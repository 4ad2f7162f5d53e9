// From policy text to the format-neutral tree: format choice, input hardening, the parsers.
#pragma once

#include <cordon/sdk/error.hpp>

#include "policy_node.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace cordon::detail {

/// The formats a policy may be written in.
enum class Format { toml, yaml };

/// Deepest nesting (tables, arrays, dotted keys, block indentation) a policy may use. The
/// parsers recurse per level, so hostile nesting is refused before they run.
inline constexpr int kMaxNesting = 64;
/// Most nodes one policy tree may hold after YAML aliases are expanded.
inline constexpr std::size_t kMaxNodes = 100'000;

/// The format of `name` by its extension; throws Error CRD2011 for anything else.
Format format_for(const std::string& name);

/// Refuses, before any parser sees it, text that is too large, holds a NUL byte or invalid
/// UTF-8, or nests deeper than kMaxNesting. Throws Error CRD2014 with the offending line and
/// column.
void check_input(std::string_view text, Format format, const std::string& name);

/// Nesting checks alone (check_input runs them); each throws Error CRD2014.
void check_toml_nesting(std::string_view text, const std::string& name);
void check_yaml_nesting(std::string_view text, const std::string& name);

/// Parses TOML into a tree. Throws Error CRD2002 (syntax), CRD2010 (a key or table defined
/// twice) or CRD2014 (too many nodes).
Node parse_toml(std::string_view text, const std::shared_ptr<const std::string>& file);

/// Parses YAML into a tree, resolving scalars by the YAML 1.2 core schema, expanding aliases
/// and `<<` merge keys. Throws Error CRD2002, CRD2010 (duplicate key) or CRD2014 (too many
/// nodes or too deep after alias expansion).
Node parse_yaml(std::string_view text, const std::shared_ptr<const std::string>& file);

/// A YAML scalar as a tree node: quoted (`tag` "!") and !!str scalars are strings, plain ones
/// (`tag` "?") resolve to null, booleans, integers, floats or strings by the YAML 1.2 core
/// schema. Throws Error CRD2002 for other tags, CRD2005 for an integer out of range.
Node resolve_yaml_scalar(const std::string& tag, const std::string& text, Mark where);

/// check_input, then the parser for `format`: the whole way from text to tree. (Exported for
/// the tests of the compiled presets.)
CORDON_API Node parse_policy_text(std::string_view text, Format format, const std::string& name);

}  // namespace cordon::detail
