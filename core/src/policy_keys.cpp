// The table of policy keys: section, name, kind, description, bounds, and how each is read from
// the tree into a Policy and written back. Add a key here and the decoder, `policy show` and the
// JSON Schema all know it.
#include "policy_keys.hpp"

#include <cordon/policy_loader.hpp>

namespace cordon::detail {

std::string KeySpec::dotted() const {
  return section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
}

namespace {

// Encoders of the member types, used by the generic specs below.
std::optional<Node> encode(std::uint64_t v) { return make_integer(static_cast<std::int64_t>(v)); }
std::optional<Node> encode(const std::optional<std::uint64_t>& v) {
  return v ? encode(*v) : std::nullopt;
}
std::optional<Node> encode(bool v) { return make_bool(v); }
std::optional<Node> encode(const std::string& v) {
  return v.empty() ? std::nullopt : std::optional<Node>(make_string(v));
}
std::optional<Node> encode(const std::optional<Duration>& v) {
  return v ? std::optional<Node>(make_string(format_duration(*v))) : std::nullopt;
}
std::optional<Node> encode(const std::vector<std::string>& v) {
  Node out = make_array();
  for (const auto& s : v) out.items.push_back(make_string(s));
  return out;
}
// Resolved paths as written: those that came from `~` as `~` paths again.
std::optional<Node> encode_paths(const Filesystem& f, const std::vector<std::string>& v) {
  std::vector<std::string> written;
  for (const auto& p : v) written.push_back(written_form(f, p));
  return encode(written);
}
std::optional<Node> encode(const std::vector<std::uint16_t>& v) {
  Node out = make_array();
  for (auto p : v) out.items.push_back(make_integer(p));
  return out;
}
std::optional<Node> encode(const std::map<std::string, std::string>& v) {
  Node out = make_table();
  for (const auto& [k, s] : v) out.entries.push_back(NodeEntry{k, {}, make_string(s)});
  return out;
}

// Each spec maker takes an accessor `[](auto& p) -> auto& { return p.x.y; }`; being captureless
// it is default-constructible, so the decode and encode functions can be plain pointers.
// A limit key takes "unlimited": no limit asked for, so no requirement is derived (and a policy
// can drop a limit it inherits).
template <class Get>
KeySpec count_key(std::string_view section, std::string_view key, std::int64_t max,
                  std::string_view doc, Get) {
  KeySpec s{section, key, ValueKind::count, doc, 1, max};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (Decoder::unlimited(n))
      Get{}(p).reset();
    else if (auto v = d.count(n, k))
      Get{}(p) = *v;
  };
  s.encode = [](const Policy& p) { return encode(Get{}(p)); };
  return s;
}

template <class Get>
KeySpec duration_key(std::string_view section, std::string_view key, std::string_view doc, Get) {
  KeySpec s{section, key, ValueKind::duration, doc};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (Decoder::unlimited(n))
      Get{}(p).reset();
    else if (auto v = d.duration(n, k))
      Get{}(p) = *v;
  };
  s.encode = [](const Policy& p) { return encode(Get{}(p)); };
  return s;
}

constexpr std::int64_t kMaxMegabytes = std::int64_t{1} << 30;  // 1 PiB, far from overflow in bytes
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;

// cordon's own buffers (a run's output, a job's log) always have a size: "unlimited" is the
// largest they take, and is written back as "unlimited".
template <class Get>
KeySpec buffer_key(std::string_view key, std::string_view doc, Get) {
  KeySpec s{"limits", key, ValueKind::count, doc, 1, kMaxBytes};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (Decoder::unlimited(n))
      Get{}(p) = static_cast<std::uint64_t>(kMaxBytes);
    else if (auto v = d.count(n, k))
      Get{}(p) = *v;
  };
  s.encode = [](const Policy& p) {
    std::uint64_t v = Get{}(p);
    if (v == static_cast<std::uint64_t>(kMaxBytes))
      return std::optional<Node>(make_string("unlimited"));
    return encode(v);
  };
  return s;
}

template <class Get>
KeySpec bool_key(std::string_view section, std::string_view key, std::string_view doc, Get) {
  KeySpec s{section, key, ValueKind::boolean, doc};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.boolean(n, k)) Get{}(p) = *v;
  };
  s.encode = [](const Policy& p) { return encode(Get{}(p)); };
  return s;
}

template <class Get>
KeySpec list_key(std::string_view section, std::string_view key, ValueKind kind,
                 std::string_view doc, Get) {
  KeySpec s{section, key, kind, doc};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.strings(n, k)) Get{}(p) = std::move(*v);
  };
  s.encode = [](const Policy& p) { return encode(Get{}(p)); };
  return s;
}

template <class Get>
KeySpec ports_key(std::string_view key, std::string_view doc, Get) {
  KeySpec s{"network", key, ValueKind::ports, doc};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.ports(n, k)) Get{}(p) = std::move(*v);
  };
  s.encode = [](const Policy& p) { return encode(Get{}(p)); };
  return s;
}

// The keys whose reading is particular to them.

KeySpec version_key() {
  KeySpec s{"", "version", ValueKind::version, "Format version of the policy file; must be 1."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    d.version(n, k);
    p.version = 1;
  };
  s.encode = [](const Policy& p) { return encode(static_cast<std::uint64_t>(p.version)); };
  return s;
}

KeySpec name_key() {
  KeySpec s{"policy", "name", ValueKind::text, "A name for the policy, shown in reports."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.text(n, k)) p.name = *v;
  };
  s.encode = [](const Policy& p) { return encode(p.name); };
  return s;
}

KeySpec extends_key() {
  KeySpec s{"policy", "extends", ValueKind::text,
            "A shipped preset (minimal, standard, generous, strict, permissive) or a path "
            "relative to this file. Scalars and tables override it, lists replace its lists."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.text(n, k)) p.extends = *v;
  };
  // The effective policy is already resolved: writing `extends` would apply it twice.
  s.encode = [](const Policy&) -> std::optional<Node> { return std::nullopt; };
  return s;
}

// filesystem.read and filesystem.write: a list of paths, or "host" for the whole host.
template <bool Filesystem::*Host, std::vector<std::string> Filesystem::*Paths>
KeySpec host_or_paths_key(const char* key, const char* doc) {
  KeySpec s{"filesystem", key, ValueKind::read_paths, doc};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    std::string name(k.key);
    if (n.type == NodeType::string && n.text == "host") {
      p.filesystem.*Host = true;
      (p.filesystem.*Paths).clear();
    } else if (n.type == NodeType::string) {
      d.bad_value(n,
                  "'filesystem." + name + "' takes a list of paths or \"host\", saw " + describe(n),
                  "write " + name + " = [\"/usr\", ...] or " + name + " = \"host\"");
    } else if (auto v = d.strings(n, k)) {
      p.filesystem.*Host = false;
      p.filesystem.*Paths = std::move(*v);
    }
  };
  s.encode = [](const Policy& p) {
    return p.filesystem.*Host ? std::optional<Node>(make_string("host"))
                              : encode_paths(p.filesystem, p.filesystem.*Paths);
  };
  return s;
}

KeySpec blocked_key() {
  KeySpec s{"filesystem", "blocked", ValueKind::paths,
            "Paths that cannot be read, listed, written or executed."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.strings(n, k)) p.filesystem.blocked = std::move(*v);
  };
  s.encode = [](const Policy& p) { return encode_paths(p.filesystem, p.filesystem.blocked); };
  return s;
}

KeySpec home_key() {
  KeySpec s{"filesystem", "home", ValueKind::home,
            "HOME inside the sandbox: \"private\" (an empty 0700 directory) or \"host\"."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.home(n, k)) p.filesystem.home = *v;
  };
  s.encode = [](const Policy& p) {
    return std::optional<Node>(make_string(to_string(p.filesystem.home)));
  };
  return s;
}

KeySpec shell_key() {
  KeySpec s{"process", "shell", ValueKind::shell,
            "Whether a command string may run through /bin/sh: \"off\", \"sandboxed\" (only on "
            "a backend proving containment) or \"unsafe\"."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.shell(n, k)) p.process.shell = *v;
  };
  s.encode = [](const Policy& p) {
    return std::optional<Node>(make_string(to_string(p.process.shell)));
  };
  return s;
}

KeySpec env_set_key() {
  KeySpec s{"env", "set", ValueKind::env_map, "Variables set in the command's environment."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.env_map(n, k)) p.env.set = std::move(*v);
  };
  s.encode = [](const Policy& p) { return encode(p.env.set); };
  return s;
}

KeySpec backends_key() {
  KeySpec s{"", "backends", ValueKind::settings,
            "Settings of each backend ([backends.docker] image = ...), checked by that backend."};
  s.decode = [](const Node& n, Policy& p, Decoder& d, const KeySpec& k) {
    if (auto v = d.settings(n, k)) p.backends = std::move(*v);
  };
  s.encode = [](const Policy& p) -> std::optional<Node> {
    if (p.backends.empty()) return std::nullopt;
    return json_to_node(boost::json::value(p.backends));
  };
  return s;
}

std::vector<KeySpec> make_keys() {
  return {
      version_key(),
      name_key(),
      extends_key(),
      count_key(
          "limits", "memory_mb", kMaxMegabytes, "Memory cap of the whole sandbox, in MiB.",
          [](auto& p) -> auto& { return p.limits.memory_mb; }),
      count_key(
          "limits", "max_processes", 1 << 22, "Most processes the sandbox may hold at once.",
          [](auto& p) -> auto& { return p.limits.max_processes; }),
      count_key(
          "limits", "max_open_files", 1 << 30, "Most open files per process.",
          [](auto& p) -> auto& { return p.limits.max_open_files; }),
      count_key(
          "limits", "cpu_seconds", std::int64_t{1} << 40, "CPU time, in seconds.",
          [](auto& p) -> auto& { return p.limits.cpu_seconds; }),
      count_key(
          "limits", "cpu_percent", 10000, "CPU share: 50 is half of one CPU, 200 two CPUs.",
          [](auto& p) -> auto& { return p.limits.cpu_percent; }),
      duration_key(
          "limits", "timeout", "Wall-clock deadline of the whole process tree.",
          [](auto& p) -> auto& { return p.limits.timeout; }),
      buffer_key(
          "max_output_bytes", "Output kept per stream; past it the head and the tail are kept.",
          [](auto& p) -> auto& { return p.limits.max_output_bytes; }),
      count_key(
          "limits", "max_file_size_mb", kMaxMegabytes, "Largest file the command may write.",
          [](auto& p) -> auto& { return p.limits.max_file_size_mb; }),
      duration_key(
          "limits", "job_lifetime", "How long a background job may live.",
          [](auto& p) -> auto& { return p.limits.job_lifetime; }),
      buffer_key(
          "max_log_bytes", "Largest log a background job keeps.",
          [](auto& p) -> auto& { return p.limits.max_log_bytes; }),
      host_or_paths_key<&Filesystem::read_host, &Filesystem::read>(
          "read", "Readable paths, or \"host\": everything not blocked is readable."),
      host_or_paths_key<&Filesystem::write_host, &Filesystem::write>(
          "write",
          "Writable paths (\"{workspace}\" is the directory the command runs in), or \"host\": "
          "wherever the invoking user can write (no confinement)."),
      blocked_key(),
      home_key(),
      bool_key(
          "network", "allow", "true: unrestricted network; false: none but the listed ports.",
          [](auto& p) -> auto& { return p.network.allow; }),
      ports_key(
          "connect_ports", "TCP ports that may be connected to while the network is denied.",
          [](auto& p) -> auto& { return p.network.connect_ports; }),
      ports_key(
          "bind_ports", "TCP ports that may be listened on while the network is denied.",
          [](auto& p) -> auto& { return p.network.bind_ports; }),
      shell_key(),
      list_key(
          "process", "blocked_commands", ValueKind::programs, "Programs that may not be executed.",
          [](auto& p) -> auto& { return p.process.blocked_commands; }),
      list_key(
          "process", "allowed_commands", ValueKind::programs,
          "When not empty, the only programs that may be executed.",
          [](auto& p) -> auto& { return p.process.allowed_commands; }),
      bool_key(
          "process", "allow_subprocess", "false: the command may not start other processes.",
          [](auto& p) -> auto& { return p.process.allow_subprocess; }),
      list_key(
          "process", "blocked_imports", ValueKind::modules,
          "Python modules the command should not import. Advisory: no kernel can enforce it; "
          "`cordon scan --policy` reports such imports.",
          [](auto& p) -> auto& { return p.process.blocked_imports; }),
      env_set_key(),
      list_key(
          "env", "pass", ValueKind::env_names,
          "Names of host variables passed through as they are.",
          [](auto& p) -> auto& { return p.env.pass; }),
      list_key(
          "backend", "prefer", ValueKind::backend_names,
          "Backends to try, in order, when none is named.",
          [](auto& p) -> auto& { return p.backend.prefer; }),
      backends_key(),
  };
}

}  // namespace

const std::vector<KeySpec>& policy_keys() {
  static const std::vector<KeySpec> keys = make_keys();
  return keys;
}

const std::vector<SectionSpec>& policy_sections() {
  static const std::vector<SectionSpec> sections = {
      {"policy", "Name of the policy and what it extends."},
      {"limits",
       "Resource limits; a key left out is not asked for (or is inherited from `extends`), and "
       "\"unlimited\" asks for no limit."},
      {"filesystem", "What the command may read and write, and what it may not touch."},
      {"network", "Network access; denied unless allowed."},
      {"process", "Shell use and which programs may run."},
      {"env", "The environment, granted rather than inherited."},
      {"backend", "Which backends to prefer."},
  };
  return sections;
}

const KeySpec* find_key(std::string_view section, std::string_view key) {
  for (const auto& spec : policy_keys())
    if (spec.section == section && spec.key == key) return &spec;
  return nullptr;
}

}  // namespace cordon::detail
