// The supervisor's spec: JSON form, and the sealed memory file that carries it.
#include "job_spec.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/request.hpp>
#include <cordon/sdk/error.hpp>

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>

namespace cordon::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr int kFormat = 1;
constexpr unsigned kSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

[[noreturn]] void malformed(const std::string& why) {
  throw Error(code::kJobState, "the job's spec is malformed: " + why,
              "a job supervisor is started only by 'cordon job start'");
}

template <class Seq>
json::array strings(const Seq& seq) {
  json::array a;
  for (const auto& s : seq) a.push_back(json::string(fs::path(s).string()));
  return a;
}

const json::value& member(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) malformed(std::string("no '") + key + "'");
  return *v;
}

std::string required_text(const json::object& o, const char* key) {
  const auto& v = member(o, key);
  if (!v.is_string()) malformed(std::string("'") + key + "' is not a string");
  return std::string(v.get_string());
}

std::vector<std::string> text_list(const json::value& v, const char* key) {
  if (!v.is_array()) malformed(std::string("'") + key + "' is not a list");
  std::vector<std::string> out;
  for (const auto& s : v.get_array()) {
    if (!s.is_string()) malformed(std::string("'") + key + "' holds a non-string");
    out.emplace_back(s.get_string());
  }
  return out;
}

std::vector<fs::path> paths(const json::object& o, const char* key) {
  std::vector<fs::path> out;
  for (auto& s : text_list(member(o, key), key)) out.emplace_back(std::move(s));
  return out;
}

json::object pins_json(const PluginPins& pins) {
  json::object sha;
  for (const auto& [name, digest] : pins.sha256) sha[name] = digest;
  json::object o{{"sha256", std::move(sha)}};
  if (pins.allow)
    o["allow"] = strings(*pins.allow);
  else
    o["allow"] = nullptr;
  return o;
}

PluginPins pins_of(const json::value& v) {
  if (!v.is_object()) malformed("'pins' is not an object");
  const auto& o = v.get_object();
  PluginPins pins;
  if (!member(o, "allow").is_null()) pins.allow = text_list(o.at("allow"), "allow");
  const auto& sha = member(o, "sha256");
  if (!sha.is_object()) malformed("'sha256' is not an object");
  for (const auto& kv : sha.get_object()) {
    if (!kv.value().is_string()) malformed("a digest is not a string");
    pins.sha256[kv.key()] = std::string(kv.value().get_string());
  }
  return pins;
}

}  // namespace

std::string encode_spec(const SupervisorSpec& s) {
  json::object env;
  for (const auto& [k, v] : s.env) env[k] = v;
  json::object o{{"format", kFormat},
                 {"state_dir", s.state_dir.string()},
                 {"id", s.id},
                 {"policy", s.policy_toml},
                 {"argv", strings(s.argv)},
                 {"workspace", s.workspace.string()},
                 {"host_home", s.host_home.string()},
                 {"backend", s.backend},
                 {"env", std::move(env)},
                 {"shell_unsafe", s.shell_unsafe},
                 {"plugin_dirs", strings(s.plugin_dirs)},
                 {"pins", pins_json(s.pins)},
                 {"config_backends", s.config_backends},
                 {"protected_paths", strings(s.protected_paths)}};
  if (s.stdin_data)
    o["stdin_base64"] = encode_base64(*s.stdin_data);
  else
    o["stdin_base64"] = nullptr;
  return json::serialize(o);
}

SupervisorSpec decode_spec(const std::string& text_in) {
  boost::system::error_code ec;
  auto v = json::parse(text_in, ec);
  if (ec || !v.is_object()) malformed("not a JSON object");
  const auto& o = v.get_object();
  const auto& format = member(o, "format");
  if (!format.is_int64() || format.get_int64() != kFormat) malformed("unknown format");
  SupervisorSpec s;
  s.state_dir = required_text(o, "state_dir");
  s.id = required_text(o, "id");
  s.policy_toml = required_text(o, "policy");
  s.argv = text_list(member(o, "argv"), "argv");
  s.workspace = required_text(o, "workspace");
  s.host_home = required_text(o, "host_home");
  s.backend = required_text(o, "backend");
  const auto& env = member(o, "env");
  if (!env.is_object()) malformed("'env' is not an object");
  for (const auto& kv : env.get_object()) {
    if (!kv.value().is_string()) malformed("an environment value is not a string");
    s.env[kv.key()] = std::string(kv.value().get_string());
  }
  const auto& unsafe = member(o, "shell_unsafe");
  if (!unsafe.is_bool()) malformed("'shell_unsafe' is not a boolean");
  s.shell_unsafe = unsafe.get_bool();
  s.plugin_dirs = paths(o, "plugin_dirs");
  s.pins = pins_of(member(o, "pins"));
  const auto& backends = member(o, "config_backends");
  if (!backends.is_object()) malformed("'config_backends' is not an object");
  s.config_backends = backends.get_object();
  s.protected_paths = paths(o, "protected_paths");
  if (const auto& in = member(o, "stdin_base64"); !in.is_null()) {
    if (!in.is_string()) malformed("'stdin_base64' is not a string");
    s.stdin_data = decode_base64(in.get_string());
    if (!s.stdin_data) malformed("'stdin_base64' is not base64");
  }
  if (s.argv.empty()) malformed("'argv' is empty");
  return s;
}

OwnedFd sealed_memfd(const std::string& data) {
  OwnedFd fd(::memfd_create("cordon-job-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  auto fail = [](const char* what) {
    throw Error(code::kJobStart, std::string("cannot hand the job to its supervisor: ") + what +
                                     ": " + std::strerror(errno));
  };
  if (!fd) fail("memfd_create");
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) fail("seal");
  return fd;
}

std::string read_sealed(int fd) {
  int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (static_cast<unsigned>(seals) & kSeals) != kSeals)
    throw Error(code::kJobState, "descriptor " + std::to_string(fd) + " is not a sealed job spec",
                "a job supervisor is started only by 'cordon job start'");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 0)
    throw Error(code::kJobState, "cannot read the job's spec: " + std::string(strerror(errno)));
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(code::kJobState, "cannot read the job's spec");
    got += static_cast<std::size_t>(n);
  }
  return text;
}

}  // namespace cordon::detail
