// `extends`: a policy names a shipped preset or another file; the chain is followed to its base,
// each link checked on its own, then merged base first.
#include <cordon/policy_loader.hpp>

#include "policy_compiled.hpp"
#include "policy_extends.hpp"
#include "policy_keys.hpp"
#include "policy_parse.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace cordon::detail {

namespace {

[[noreturn]] void unreadable(const std::filesystem::path& file, const std::string& why) {
  throw Error(code::kFileUnreadable, "cannot read policy '" + file.string() + "': " + why,
              "check the path and its permissions", Location{file.string()});
}

std::string canonical_identity(const std::filesystem::path& file) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(file, ec), ec);
  return ec ? std::filesystem::absolute(file).lexically_normal().string() : canonical.string();
}

std::string join(const std::vector<std::string>& names, const char* sep) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

// The string value of policy.extends in a document's own tree, if it has one.
const Node* extends_of(const Node& root) {
  const Node* section = root.find("policy");
  if (!section || !section->is_table()) return nullptr;
  const Node* value = section->find("extends");
  return value && value->type == NodeType::string && !value->text.empty() ? value : nullptr;
}

// Each document is checked against the key table on its own, so that an error is reported in
// the file that has it, once.
void check_document(const Document& doc, Diagnostics& diag) {
  Policy scratch;
  decode_tree(doc.root, scratch, diag);
}

Document load_parent(const Document& child, const Node& extends) {
  const std::string& value = extends.text;
  if (names_policy_file(value)) {
    std::filesystem::path path = std::filesystem::path(value).is_absolute()
                                     ? std::filesystem::path(value)
                                     : child.base_dir / value;
    try {
      return document_from_file(path);
    } catch (const Error& e) {
      if (e.code() != code::kFileUnreadable) throw;
      throw Error(e.code(), e.message(), "'extends' names a path relative to the extending file",
                  extends.mark.location());
    }
  }
  if (!preset_text(value)) throw unknown_preset(value, extends.mark.location());
  return document_from_preset(value);
}

}  // namespace

Error unknown_preset(const std::string& name, const std::optional<Location>& where) {
  std::string message = "unknown preset '" + name + "'";
  if (auto near = nearest(name, preset_names())) message += " (did you mean '" + *near + "'?)";
  return Error(code::kUnknownPreset, message,
               "presets: " + join(preset_names(), ", ") +
                   "; a file needs a '/' or a .toml, .yaml or .yml extension",
               where);
}

std::string read_policy_file(const std::filesystem::path& file) {
  // O_NONBLOCK: a FIFO must not hang the loader; it is refused below as not a regular file.
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) unreadable(file, std::strerror(errno));
  struct stat st {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    problem = "is a directory";
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxPolicyBytes) {
    ::close(fd);
    throw Error(code::kInputRejected,
                "file is " + std::to_string(st.st_size) + " bytes, more than the " +
                    std::to_string(kMaxPolicyBytes) + " a policy may have",
                "a policy is a short text file; is this the right file?", Location{file.string()});
  } else {
    // Read to the end but never far past the cap: the file may grow after fstat.
    char buf[16 * 1024];
    text.reserve(static_cast<std::size_t>(st.st_size));
    while (text.size() <= kMaxPolicyBytes) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) problem = std::strerror(errno);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  if (!problem.empty()) unreadable(file, problem);
  return text;
}

Document document_from_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  Format format = format_for(name);
  std::string text = read_policy_file(file);
  return Document{parse_policy_text(text, format, name), name, canonical_identity(file),
                  file.parent_path(), true};
}

Document document_from_text(const std::string& text, const std::string& name,
                            const std::filesystem::path& base_dir) {
  Format format = format_for(name);
  std::error_code ec;
  std::filesystem::path base = base_dir.empty() ? std::filesystem::current_path(ec) : base_dir;
  if (ec) base = "/";
  return Document{parse_policy_text(text, format, name), name,
                  canonical_identity(base / std::filesystem::path(name).filename()), base};
}

Document document_from_preset(const std::string& name) {
  // A preset never changes while cordon runs, so each is parsed once.
  static std::mutex mutex;
  static std::map<std::string, Document> parsed;
  std::lock_guard lock(mutex);
  auto it = parsed.find(name);
  if (it == parsed.end()) {
    const std::string source = "preset:" + name;
    // Compiled at build time; parsed only if a preset were ever left out of the compilation.
    std::optional<Node> root = compiled_preset(name);
    if (!root) {
      auto text = preset_text(name);
      if (!text) throw unknown_preset(name, std::nullopt);
      root = parse_policy_text(*text, Format::toml, source);
    }
    it = parsed.emplace(name, Document{std::move(*root), source, source, {}}).first;
  }
  return it->second;
}

Resolved resolve_extends(Document doc, Diagnostics& diag) {
  std::vector<Document> chain;  // the extending document first
  check_document(doc, diag);
  chain.push_back(std::move(doc));
  while (const Node* extends = extends_of(chain.back().root)) {
    std::vector<std::string> names;
    for (const auto& d : chain) names.push_back(d.source);
    if (static_cast<int>(chain.size()) > kMaxExtendsDepth) {
      diag.add(code::kExtendsTooDeep,
               "'extends' chain is deeper than " + std::to_string(kMaxExtendsDepth) + ": " +
                   join(names, " -> ") + " -> " + extends->text,
               extends->mark, "flatten the chain: extend a file that extends fewer others");
      break;
    }
    std::optional<Document> parent;
    try {
      parent = load_parent(chain.back(), *extends);
    } catch (const Error& e) {
      diag.add(e);
      break;
    }
    auto same = [&](const Document& d) { return d.identity == parent->identity; };
    if (std::any_of(chain.begin(), chain.end(), same)) {
      diag.add(code::kExtendsCycle,
               "'extends' cycle: " + join(names, " -> ") + " -> " + parent->source, extends->mark,
               "a policy cannot extend itself, directly or through others");
      break;
    }
    check_document(*parent, diag);
    chain.push_back(std::move(*parent));
  }
  Resolved out;
  out.root = make_table();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    merge_into(out.root, it->root);
    out.sources.push_back(it->source);
    if (!it->file) continue;
    // Where it leads, and the name it was given: a link there could be swapped for another.
    out.files.push_back(it->identity);
    std::error_code ec;
    std::string named = std::filesystem::absolute(it->source, ec).lexically_normal().string();
    if (!ec && named != it->identity) out.files.push_back(named);
  }
  out.root.mark = chain.front().root.mark;
  return out;
}

}  // namespace cordon::detail
