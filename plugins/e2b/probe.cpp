// What an E2B sandbox proves: what a VM of its own gives by construction, and what a canary run
// as the template's user shows.
#include <cordon/sdk/capabilities.hpp>

#include <boost/json.hpp>

#include <sstream>

#include "e2b_backend.hpp"
#include "envd.hpp"

namespace cordon::e2b {

namespace {

constexpr const char* kCanary =
    "while read -r k r e _; do [ \"$k\" = Uid: ] && break; done </proc/$$/status\n"
    "echo \"uid=$r $e\"\n"
    "if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then echo sudo=yes; "
    "else echo sudo=no; fi\n"
    "(ulimit -n 64 && ulimit -t 60 && ulimit -f 2048 && "
    "echo \"limits=$(ulimit -n) $(ulimit -t) $(ulimit -f)\")\n"
    "command -v setsid >/dev/null 2>&1 && echo setsid=yes\n"
    "command -v setpriv >/dev/null 2>&1 && echo setpriv=yes\n"
    "command -v tar >/dev/null 2>&1 && echo tar=yes\n"
    "printf '%s' \"$1\"\n";

// Comes back byte for byte, or the script's arguments are not what cordon sent.
constexpr const char* kRoundTrip = "a;b $(x) `y` 'q' \"d\" \\ \n* -- --flag";

std::string value_of(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

void prove(ProbeResult& r, std::string_view id, bool ok, const std::string& evidence) {
  r.proofs.push_back({std::string(id), ok, evidence});
}

}  // namespace

ServiceProof probe_service(const Settings& s, const std::string& key) {
  Api api(s, key);
  auto info = api.find_template();
  if (!info)
    throw Error(code::kBackendUnavailable,
                "the E2B service at " + s.api_url + " has no template '" + s.template_id + "'",
                "name an existing template in backends.e2b.template");
  CreateSpec spec;
  spec.timeout_seconds = 60;
  spec.metadata = own_metadata();
  spec.metadata["cordon.purpose"] = "probe";
  Sandbox sb = api.create(spec);
  Collected c;
  try {
    StartSpec canary{s.user, "/bin/sh", {"-c", kCanary, "cordon-e2b", kRoundTrip}, {},
                     {},     false,     std::chrono::milliseconds(30000)};
    c = Envd(s, sb).run(canary, std::chrono::seconds(30));
  } catch (...) {
    api.kill(sb.id);
    throw;
  }
  api.kill(sb.id);
  if (c.outcome.error) throw *c.outcome.error;

  ServiceProof p;
  ProbeResult& r = p.result;
  r.available = true;
  std::string uid = value_of(c.out, "uid"), sudo = value_of(c.out, "sudo");
  bool round_trip = c.out.size() >= std::string_view(kRoundTrip).size() &&
                    c.out.compare(c.out.size() - std::string_view(kRoundTrip).size(),
                                  std::string::npos, kRoundTrip) == 0;
  if (!round_trip || uid.empty())
    throw Error(code::kBackendUnavailable,
                "the canary in an E2B sandbox of template '" + s.template_id +
                    "' did not answer as expected",
                "check that the template has a POSIX /bin/sh");
  p.tar = value_of(c.out, "tar") == "yes";
  p.uid = uid.substr(0, uid.find(' '));
  r.facts.push_back("E2B at " + s.api_url + ", template '" + s.template_id +
                    "': " + std::to_string(info->cpu_count) + " CPUs, " +
                    std::to_string(info->memory_mb) + " MiB per sandbox");
  r.facts.push_back("commands run as '" + s.user + "' (uid " + uid.substr(0, uid.find(' ')) +
                    "), sudo " + (sudo == "yes" ? "lets it become root" : "does not") +
                    "; setsid " + (value_of(c.out, "setsid") == "yes" ? "present" : "absent") +
                    "; setpriv " + (value_of(c.out, "setpriv") == "yes" ? "present" : "absent") +
                    "; tar " + (p.tar ? "present" : "absent (no workspace copy)"));
  const std::string vm = "a Firecracker microVM of the run's own (E2B), killed after it: ";
  prove(r, cap::fs_read_confine, true,
        vm + "none of this machine's files are in it; only the workspace is copied in");
  prove(r, cap::fs_read_block, true,
        vm + "blocked paths (and hard links to them) are never copied in");
  prove(r, cap::proc_isolate, true,
        vm + "a kernel of its own: this machine's processes are not in it");
  prove(r, cap::ipc_isolate, true, vm + "a kernel of its own: no socket or IPC object is shared");
  prove(r, cap::net_deny, true, "the sandbox is created with allow_internet_access = false");
  prove(r, cap::env_grant, true, "env -i with the granted variables before the command");
  prove(r, cap::home_private, true, "HOME is a fresh 0700 directory in the run's own VM");
  prove(r, cap::limit_timeout, true, "cordon kills the sandbox at the deadline");
  long real = -1, effective = -1;
  std::istringstream(uid) >> real >> effective;
  bool nnp = value_of(c.out, "setpriv") == "yes";
  bool unprivileged = real > 0 && effective > 0 && (nnp || sudo == "no");
  std::string who = "the user '" + s.user + "' (uid " + uid.substr(0, uid.find(' ')) + ")";
  std::string privileged_why = real > 0 && effective > 0
                                   ? who + " can become root with sudo in the VM (no setpriv)"
                                   : who + " is root in the VM";
  prove(r, cap::identity_unprivileged, unprivileged,
        unprivileged
            ? who + (nnp ? ", not root, under no_new_privs (setpriv)" : ", not root, no sudo") +
                  ", in a VM: no privilege of this machine's"
            : privileged_why);
  prove(r, cap::fs_write_confine, unprivileged,
        unprivileged ? "the copied workspace is root's in the VM and only the write paths are "
                       "handed to " +
                           who + "; nothing is copied back"
                     : privileged_why + ": it could write anywhere in the VM");
  bool limits = value_of(c.out, "limits") == "64 60 2048";
  for (auto id : {cap::limit_files, cap::limit_cpu, cap::limit_file_size})
    prove(r, id, limits,
          limits ? "ulimit before the command (checked by a canary)"
                 : "ulimit -n, -t and -f did not hold in a canary");
  std::string sized = "the template sets the VM's size (" + std::to_string(info->memory_mb) +
                      " MiB, " + std::to_string(info->cpu_count) +
                      " CPUs); cordon imposes no smaller cap in it";
  prove(r, cap::limit_memory, false, sized);
  prove(r, cap::limit_processes, false, sized);
  prove(r, cap::limit_cpu_share, false, sized);
  prove(r, cap::net_ports, false, "E2B opens the network to all or to nothing, not by port");
  prove(r, cap::fs_exec_block, false, "the VM's own programs are not this machine's: not confined");
  prove(r, cap::fs_exec_confine, false,
        "the VM's own programs are not this machine's: not confined");
  prove(r, cap::proc_no_subprocess, false,
        "nothing in the VM stops a process from starting another");
  return p;
}

namespace {

constexpr std::string_view kCached[] = {cap::identity_unprivileged, cap::fs_write_confine,
                                        cap::limit_files, cap::limit_cpu, cap::limit_file_size};

}  // namespace

std::optional<boost::json::value> cacheable(const ServiceProof& p) {
  if (!p.tar || p.uid.empty() || p.uid == "0") return std::nullopt;
  for (auto id : kCached)
    if (!p.result.proves(id)) return std::nullopt;
  boost::json::array proofs, facts;
  for (const auto& proof : p.result.proofs)
    proofs.push_back(boost::json::object{
        {"capability", proof.capability}, {"proven", proof.proven}, {"evidence", proof.evidence}});
  for (const auto& f : p.result.facts) facts.emplace_back(f);
  return boost::json::object{
      {"format", 1}, {"uid", p.uid}, {"proofs", std::move(proofs)}, {"facts", std::move(facts)}};
}

std::optional<ServiceProof> from_cache(const boost::json::value& v) {
  const auto* o = v.if_object();
  if (!o || !o->contains("format") || o->at("format") != 1) return std::nullopt;
  const auto* uid = o->if_contains("uid");
  const auto* proofs = o->if_contains("proofs");
  const auto* facts = o->if_contains("facts");
  if (!uid || !uid->is_string() || !proofs || !proofs->is_array() || !facts || !facts->is_array())
    return std::nullopt;
  ServiceProof p;
  p.tar = true;
  p.uid = std::string(uid->as_string());
  if (p.uid.empty() || p.uid.find_first_not_of("0123456789") != std::string::npos || p.uid == "0")
    return std::nullopt;
  p.result.available = true;
  for (const auto& item : proofs->as_array()) {
    const auto* e = item.if_object();
    if (!e || !e->contains("capability") || !e->at("capability").is_string() ||
        !e->contains("proven") || !e->at("proven").is_bool() || !e->contains("evidence") ||
        !e->at("evidence").is_string())
      return std::nullopt;
    p.result.proofs.push_back({std::string(e->at("capability").as_string()),
                               e->at("proven").as_bool(),
                               std::string(e->at("evidence").as_string())});
  }
  for (const auto& f : facts->as_array())
    if (f.is_string()) p.result.facts.emplace_back(f.as_string());
  if (!cacheable(p)) return std::nullopt;  // only what would have been written
  p.result.facts.push_back("probe cached: proven by a canary in an earlier cordon process");
  return p;
}

}  // namespace cordon::e2b
