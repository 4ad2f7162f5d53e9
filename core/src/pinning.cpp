// The operator's configuration file: [plugins] pinning, [dispatch] order and [backends.<name>]
// settings, over cordon's shipped configuration.
#include <cordon/config.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "job_spawn.hpp"
#include "private_dir_rule.hpp"
#include "toml.hpp"
#include "unique_fd.hpp"

namespace cordon {

namespace fs = std::filesystem;

bool PluginPins::allows(const std::string& name) const {
  return !allow || std::find(allow->begin(), allow->end(), name) != allow->end();
}

namespace {

// A configuration is a page of settings; anything near this is not one.
constexpr std::size_t kMaxConfigBytes = 1u << 20;

Location at(const std::string& file, const toml::source_region& src) {
  return Location{file, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
}

std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

const char* type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

std::string suggestion(std::string_view key, std::initializer_list<std::string_view> valid) {
  std::string_view best;
  std::size_t best_d = 3;  // farther than two edits is no suggestion
  for (auto v : valid)
    if (auto d = distance(key, v); d < best_d) best = v, best_d = d;
  return best.empty() ? "" : " (did you mean '" + std::string(best) + "'?)";
}

// Walks one parsed file, collecting every problem rather than stopping at the first.
class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  Config read(const toml::table& root) {
    Config cfg;
    cfg.source = file_;
    for (const auto& [key, node] : root) {
      if (key.str() == "plugins")
        read_plugins(node, cfg.pins);
      else if (key.str() == "backends")
        read_backends(node, cfg.backends);
      else if (key.str() == "dispatch")
        read_dispatch(node, cfg);
      else
        unknown(key, "", {"plugins", "backends", "dispatch"});
    }
    return cfg;
  }
  std::vector<Error> errors;

 private:
  void unknown(const toml::key& key, const std::string& table,
               std::initializer_list<std::string_view> valid) {
    std::string where = table.empty() ? "at the top level" : "in [" + table + "]";
    errors.emplace_back(
        code::kUnknownKey,
        "unknown key '" + std::string(key.str()) + "' " + where + suggestion(key.str(), valid), "",
        at(file_, key.source()));
  }
  void wrong_type(const toml::node& node, const std::string& key, const char* expected) {
    errors.emplace_back(code::kWrongType,
                        "'" + key + "' must be " + expected + ", saw " + type_name(node), "",
                        at(file_, node.source()));
  }
  void bad_pin(const toml::node& node, const std::string& message, const std::string& hint) {
    errors.emplace_back(code::kPluginConfig, message, hint, at(file_, node.source()));
  }

  void read_plugins(const toml::node& node, PluginPins& pins) {
    const auto* table = node.as_table();
    if (!table) return wrong_type(node, "plugins", "a table");
    for (const auto& [key, value] : *table) {
      if (key.str() == "allow")
        read_allow(value, pins);
      else if (key.str() == "sha256")
        read_digests(value, pins);
      else
        unknown(key, "plugins", {"allow", "sha256"});
    }
  }

  void read_allow(const toml::node& node, PluginPins& pins) {
    const auto* list = node.as_array();
    if (!list) return wrong_type(node, "plugins.allow", "an array of backend names");
    pins.allow.emplace();
    for (const auto& item : *list) {
      const auto* name = item.as_string();
      if (!name) {
        wrong_type(item, "plugins.allow", "an array of backend names");
      } else if (!valid_backend_name(name->get())) {
        bad_pin(item, "'" + name->get() + "' in plugins.allow is not a backend name",
                "a backend name is 1 to 31 of a-z, 0-9, '_' and '-'");
      } else {
        pins.allow->push_back(name->get());
      }
    }
  }

  void read_digests(const toml::node& node, PluginPins& pins) {
    const auto* table = node.as_table();
    if (!table) return wrong_type(node, "plugins.sha256", "a table of digests");
    for (const auto& [key, value] : *table) {
      std::string name(key.str());
      const auto* digest = value.as_string();
      if (!digest) {
        wrong_type(value, "plugins.sha256." + name, "a string of 64 hex digits");
        continue;
      }
      std::string hex = digest->get();
      std::transform(hex.begin(), hex.end(), hex.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (!valid_backend_name(name))
        bad_pin(value, "'" + name + "' in plugins.sha256 is not a backend name", "");
      else if (name == kNoneBackend)
        bad_pin(value, "plugins.sha256.none pins nothing: 'none' is built into cordon",
                "remove the key; use plugins.allow to forbid 'none'");
      else if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
        bad_pin(value,
                "plugins.sha256." + name + " must be 64 hex digits, saw '" + digest->get() + "'",
                "compute it with: sha256sum cordon-backend-" + name + ".so");
      else
        pins.sha256[name] = hex;
    }
  }

  void read_dispatch(const toml::node& node, Config& cfg) {
    const auto* table = node.as_table();
    if (!table) return wrong_type(node, "dispatch", "a table");
    for (const auto& [key, value] : *table) {
      if (key.str() == "order")
        read_order(value, cfg);
      else
        unknown(key, "dispatch", {"order"});
    }
  }

  void read_order(const toml::node& node, Config& cfg) {
    const auto* list = node.as_array();
    if (!list) return wrong_type(node, "dispatch.order", "an array of backend names");
    cfg.dispatch_source = file_;
    for (const auto& item : *list) {
      const auto* name = item.as_string();
      if (!name) {
        wrong_type(item, "dispatch.order", "an array of backend names");
      } else if (!valid_backend_name(name->get())) {
        bad_order(item, "'" + name->get() + "' in dispatch.order is not a backend name",
                  "a backend name is 1 to 31 of a-z, 0-9, '_' and '-'");
      } else if (name->get() == kNoneBackend) {
        bad_order(item, "'none' in dispatch.order: it isolates nothing and runs only when named",
                  "remove it; run with --backend none to use it");
      } else if (std::count(cfg.dispatch_order.begin(), cfg.dispatch_order.end(), name->get())) {
        bad_order(item, "'" + name->get() + "' is listed twice in dispatch.order", "");
      } else {
        cfg.dispatch_order.push_back(name->get());
      }
    }
  }
  void bad_order(const toml::node& node, const std::string& message, const std::string& hint) {
    errors.emplace_back(code::kBadValue, message, hint, at(file_, node.source()));
  }

  void read_backends(const toml::node& node, boost::json::object& out) {
    const auto* table = node.as_table();
    if (!table) return wrong_type(node, "backends", "a table of backend settings");
    for (const auto& [key, value] : *table) {
      if (!value.is_table()) {
        wrong_type(value, "backends." + std::string(key.str()), "a table");
        continue;
      }
      out[key.str()] = to_json(value);
    }
  }

  static boost::json::value to_json(const toml::node& node) {
    if (const auto* t = node.as_table()) {
      boost::json::object o;
      for (const auto& [k, v] : *t) o[k.str()] = to_json(v);
      return o;
    }
    if (const auto* a = node.as_array()) {
      boost::json::array arr;
      for (const auto& v : *a) arr.push_back(to_json(v));
      return arr;
    }
    if (const auto* s = node.as_string()) return boost::json::string(s->get());
    if (const auto* i = node.as_integer()) return i->get();
    if (const auto* f = node.as_floating_point()) return f->get();
    if (const auto* b = node.as_boolean()) return b->get();
    std::ostringstream text;  // dates and times keep their TOML spelling
    node.visit([&text](const auto& leaf) { text << leaf; });
    return boost::json::string(text.str());
  }

  std::string file_;
};

// A configuration chooses plugins, identities and daemons for every run: what is read must
// be written by cordon's user or root alone. (Not its directory: a file of theirs reached
// through another's directory still says only what they wrote.)
void refuse_untrusted_config(const fs::path& file, const struct stat& st) {
  auto why = detail::untrusted_reason(st.st_uid, st.st_mode, ::geteuid(), detail::Trust::ancestor);
  if (!why) return;
  throw ErrorList({Error(code::kUntrustedState, "configuration '" + file.string() + "' " + *why,
                         "make it yours and not writable by others (chmod go-w), or pass "
                         "--config a file of your own")});
}

}  // namespace

fs::path default_config_path() {
  if (auto xdg = env_dir("XDG_CONFIG_HOME"); !xdg.empty()) return xdg / "cordon" / "config.toml";
  // Without HOME, the home the user database gives, as for the job state: a run then keeps
  // the sandbox from the same configuration directory a later cordon reads.
  return detail::invoking_home() / ".config" / "cordon" / "config.toml";
}

Config parse_config(const std::string& text, const std::string& name) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ErrorList({Error(code::kSyntax, std::string(e.description()), "", at(name, e.source()))});
  }
  ConfigReader reader(name);
  Config cfg = reader.read(root);
  // Tables iterate by key; report in file order.
  std::stable_sort(reader.errors.begin(), reader.errors.end(), [](const Error& a, const Error& b) {
    auto la = a.where().value_or(Location{}), lb = b.where().value_or(Location{});
    return std::pair(la.line, la.column) < std::pair(lb.line, lb.column);
  });
  if (!reader.errors.empty()) throw ErrorList(std::move(reader.errors));
  return cfg;
}

Config load_config_file(const fs::path& file) {
  auto unreadable = [&file](const std::string& why) {
    return ErrorList(
        {Error(code::kFileUnreadable, "cannot read configuration '" + file.string() + "': " + why,
               "pass an existing file to --config")});
  };
  // O_NONBLOCK: a FIFO is refused below rather than waited on.
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw unreadable(std::strerror(errno));
  detail::Fd held(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw unreadable(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw unreadable("not a regular file");
  refuse_untrusted_config(file, st);
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw unreadable(std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigBytes) throw unreadable("larger than 1 MiB");
  }
  return parse_config(text, file.string());
}

Config load_config(const std::optional<fs::path>& explicit_file) {
  Config cfg;
  std::error_code ec;
  if (explicit_file)
    cfg = load_config_file(*explicit_file);
  else if (fs::path def = default_config_path(); fs::exists(def, ec))
    cfg = load_config_file(def);
  // The shipped file gives the default order; the operator's [dispatch] order replaces it.
  if (cfg.dispatch_source.empty())
    if (fs::path shipped = shipped_config_file(); !shipped.empty()) {
      Config defaults = load_config_file(shipped);
      cfg.dispatch_order = std::move(defaults.dispatch_order);
      cfg.dispatch_source = std::move(defaults.dispatch_source);
    }
  return cfg;
}

}  // namespace cordon
