// Rendering escape-test policies as TOML.
#include "policy_spec.hpp"

#include <sstream>

#include "probes.hpp"

namespace escape {
namespace {

std::string toml_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + toml_string(items[i]);
  return out + "]";
}

std::string toml_list(const std::vector<int>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
  return out + "]";
}

void filesystem_section(const PolicySpec& p, std::ostringstream& out) {
  if (!p.read_host && !p.read && !p.write && !p.blocked && !p.home) return;
  out << "\n[filesystem]\n";
  if (p.read_host)
    out << "read = \"host\"\n";
  else if (p.read)
    out << "read = " << toml_list(*p.read) << "\n";
  if (p.write) out << "write = " << toml_list(*p.write) << "\n";
  if (p.blocked) out << "blocked = " << toml_list(*p.blocked) << "\n";
  if (p.home) out << "home = " << toml_string(*p.home) << "\n";
}

void network_section(const PolicySpec& p, std::ostringstream& out) {
  if (!p.net_allow && !p.connect_ports && !p.bind_ports) return;
  out << "\n[network]\n";
  if (p.net_allow) out << "allow = " << (*p.net_allow ? "true" : "false") << "\n";
  if (p.connect_ports) out << "connect_ports = " << toml_list(*p.connect_ports) << "\n";
  if (p.bind_ports) out << "bind_ports = " << toml_list(*p.bind_ports) << "\n";
}

void process_section(const PolicySpec& p, std::ostringstream& out) {
  if (!p.blocked_commands && !p.allowed_commands && !p.allow_subprocess) return;
  out << "\n[process]\n";
  if (p.blocked_commands) out << "blocked_commands = " << toml_list(*p.blocked_commands) << "\n";
  if (p.allowed_commands) out << "allowed_commands = " << toml_list(*p.allowed_commands) << "\n";
  if (p.allow_subprocess)
    out << "allow_subprocess = " << (*p.allow_subprocess ? "true" : "false") << "\n";
}

void env_section(const PolicySpec& p, std::ostringstream& out) {
  if (p.env_set.empty() && !p.env_pass) return;
  out << "\n[env]\n";
  if (!p.env_set.empty()) {
    out << "set = {";
    bool first = true;
    for (const auto& [k, v] : p.env_set) {
      out << (first ? " " : ", ") << k << " = " << toml_string(v);
      first = false;
    }
    out << " }\n";
  }
  if (p.env_pass) out << "pass = " << toml_list(*p.env_pass) << "\n";
}

}  // namespace

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string toml_duration(const std::string& text) { return toml_string(text); }

std::string PolicySpec::toml() const {
  std::ostringstream out;
  out << "# written by the cordon escape suite\nversion = 1\n\n[policy]\nname = "
      << toml_string(name) << "\n";
  if (extends) out << "extends = " << toml_string(*extends) << "\n";
  if (!limits.empty()) {
    out << "\n[limits]\n";
    for (const auto& [k, v] : limits) out << k << " = " << v << "\n";
  }
  filesystem_section(*this, out);
  network_section(*this, out);
  process_section(*this, out);
  env_section(*this, out);
  return out.str();
}

std::vector<std::string> base_read() {
  return {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", probe_dir()};
}

PolicySpec confined(const std::string& scratch_root) {
  PolicySpec p;
  p.limits["timeout"] = toml_duration("60s");
  p.read = base_read();
  p.read->push_back(scratch_root + "/listed");
  p.read->push_back(scratch_root + "/ro");
  p.write = std::vector<std::string>{"{workspace}"};
  p.blocked = std::vector<std::string>{};
  p.net_allow = false;
  p.blocked_commands = std::vector<std::string>{"sudo", "su"};
  p.env_set["LANG"] = "C.UTF-8";
  return p;
}

}  // namespace escape
