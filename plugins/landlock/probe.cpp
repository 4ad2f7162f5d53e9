// The probe's throwaway child and the proofs drawn from it.
#include "probe.hpp"

#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/error.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "child_io.hpp"
#include "child_util.hpp"
#include "fd.hpp"
#include "idmap.hpp"
#include "keeper_shared.hpp"
#include "namespaces.hpp"
#include "reductions.hpp"
#include "ruleset.hpp"

namespace cordon::landlock {

namespace {

// Bits the child reports back.
enum : std::uint32_t {
  kProc = 1u << 0,
  kIdentity = 1u << 1,
  kNproc = 1u << 2,
  kLandlock = 1u << 3,
  kSeccomp = 1u << 4,
};

struct ProbeSpec {
  int result_fd;
  bool root;
  const char* uid_map;
  const char* gid_map;
  uid_t uid;
  gid_t gid;
  int ruleset_fd;
  const RulesetPlan* ruleset;
  const SeccompProgram* filter;
  char* stack;  ///< three regions: the namespaces' child, and the two task-count children
  std::size_t region;
  bool own_memory = false;  ///< the first child is a fork, not on cordon's memory
};

struct ProbeReport {
  std::uint32_t bits;
  std::int32_t err;
  char stage[48];
};

int exit_now(void*) { ::_exit(0); }

// With RLIMIT_NPROC = 2 in the namespace, one child fits (2 tasks) and a grandchild does not.
int nproc_child(void* arg) {
  auto* stack_top = static_cast<char*>(arg);
  pid_t pid = ::clone(exit_now, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
  if (pid > 0) {
    ::waitpid(pid, nullptr, 0);
    ::_exit(1);
  }
  ::_exit(errno == EAGAIN ? 2 : 3);
}

bool nproc_counts_namespace(const ProbeSpec& s) {
  rlimit rl{2, 2};
  if (::setrlimit(RLIMIT_NPROC, &rl) != 0) return false;
  char* second = s.stack + 2 * s.region;
  pid_t pid = ::clone(nproc_child, second, CLONE_VM | CLONE_VFORK | SIGCHLD, second + s.region);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 2;
}

[[noreturn]] void finish(const ProbeSpec& s, ProbeReport& r, const char* stage) {
  r.err = errno;
  std::size_t i = 0;
  for (; stage[i] && i + 1 < sizeof r.stage; ++i) r.stage[i] = stage[i];
  r.stage[i] = '\0';
  (void)!::write(s.result_fd, &r, sizeof r);
  ::_exit(0);
}

// Pid 1 of the new namespaces: maps itself, mounts a fresh /proc, then checks the task count,
// a Landlock domain and the seccomp filter.
int namespaces_child(void* arg) {
  const auto& s = *static_cast<const ProbeSpec*>(arg);
  ProbeReport r{};
  if (write_id_maps(0, s.uid_map, s.gid_map, true, nullptr) != 0)
    finish(s, r, "user namespace maps");
  if (::getuid() == s.uid && s.uid != 0) r.bits |= kIdentity;
  // A fresh proc over the host's, in this private mount namespace only.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    finish(s, r, "mount namespace");
  char self[16] = {};
  if (::readlink("/proc/self", self, sizeof self - 1) == 1 && self[0] == '1') r.bits |= kProc;
  if (nproc_counts_namespace(s)) r.bits |= kNproc;
  const char* failed = "";
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      add_sandbox_rules(s.ruleset_fd, *s.ruleset, &failed) != 0 || restrict_self(s.ruleset_fd) != 0)
    finish(s, r, "landlock");
  int denied = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int granted = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (denied < 0 && errno == EACCES && granted >= 0) r.bits |= kLandlock;
  if (load_filter(*s.filter) != 0) finish(s, r, "seccomp");
  // The child holds CAP_SYS_ADMIN in its namespace: only the filter can make this fail.
  if (::unshare(CLONE_NEWUTS) != 0 && errno == EPERM) r.bits |= kSeccomp;
  finish(s, r, "done");
}

// The first child shares cordon's memory and suspends it (vfork), so nothing is copied. As
// root it first becomes nobody, so that the namespaces are an unprivileged user's, as a run's
// sandbox is; then it makes them all at once with its own child.
int identity_child(void* arg) {
  const auto& s = *static_cast<const ProbeSpec*>(arg);
  ProbeReport r{};
  if (s.root && (child::drop_supplementary_groups() != 0 || child::set_all_gids(s.gid) != 0 ||
                 child::set_all_uids(s.uid) != 0))
    finish(s, r, "sandbox identity");
  // The uid change made the (shared) mm non-dumpable, which hands /proc/self/*_map to root;
  // cordon restores its own setting afterwards. A fork has cordon's setting, which a keeper on
  // cordon's memory made non-dumpable.
  if (s.root || s.own_memory) ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  char* top = s.stack + s.region;
  pid_t pid = ::clone(
      namespaces_child, top,
      CLONE_VM | CLONE_VFORK | SIGCHLD | static_cast<int>(kSandboxNamespaces) | CLONE_NEWCGROUP,
      arg);
  if (pid < 0) finish(s, r, "namespaces");
  ::waitpid(pid, nullptr, 0);
  ::_exit(0);
}

std::string stage_error(const ProbeReport& r) {
  return std::string(r.stage) + ": " + std::strerror(r.err);
}

void run_child(ProbeFacts& facts, const SeccompProgram& filter) {
  Identity id;
  id.uid = facts.root ? kNobody : ::geteuid();
  id.gid = facts.root ? kNobody : ::getegid();
  std::string uid_map = id.uid_map(), gid_map = id.gid_map();
  RulesetPlan plan;
  plan.abi = facts.abi;
  plan.handled_fs = handled_fs_rights(facts.abi);
  plan.sandbox.push_back({"/proc", right::read_file | right::read_dir});
  UniqueFd ruleset = create_ruleset(plan);
  Pipe result = make_pipe();
  constexpr std::size_t kRegion = 16384;
  std::vector<char> stack(4 * kRegion);
  ProbeSpec spec{result.write.get(), facts.root, uid_map.c_str(), gid_map.c_str(), id.uid, id.gid,
                 ruleset.get(),      &plan,      &filter,         stack.data(),    kRegion};
  int dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  // A keeper on this memory (keeper_shared.hpp) makes it non-dumpable, and needs it so, which
  // the child's map writing cannot have: the child then gets memory of its own, and this
  // memory's flag is left to the keeper.
  const bool shared = keeper_shares_memory();
  spec.own_memory = shared;
  const int flags = shared ? SIGCHLD : CLONE_VM | CLONE_VFORK | SIGCHLD;
  pid_t pid = ::clone(identity_child, stack.data() + 4 * kRegion, flags, &spec);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  restore_dumpable(dumpable);
  result.write.reset();
  ProbeReport r{};
  ssize_t n = pid > 0 ? ::read(result.read.get(), &r, sizeof r) : -1;
  if (n != static_cast<ssize_t>(sizeof r)) {
    facts.failure = "the probe's sandbox died before reporting";
    return;
  }
  facts.namespaces = std::strcmp(r.stage, "namespaces") != 0;
  if (!facts.namespaces) {
    std::string why = userns_restriction();
    facts.failure = why.empty() ? "cannot create user, mount, pid, IPC, UTS and cgroup "
                                  "namespaces: " +
                                      std::string(std::strerror(r.err))
                                : why;
    return;
  }
  facts.identity = r.bits & kIdentity;
  facts.fresh_proc = r.bits & kProc;
  facts.nproc_per_userns = (r.bits & kNproc) && kernel_version() >= 5014;
  facts.landlock = r.bits & kLandlock;
  facts.seccomp = r.bits & kSeccomp;
  if (std::strcmp(r.stage, "done") != 0) facts.failure = stage_error(r);
}

}  // namespace

ProbeFacts gather_probe_facts(const SeccompProgram& filter) {
  auto start = std::chrono::steady_clock::now();
  ProbeFacts facts;
  facts.root = ::geteuid() == 0;
  facts.abi = landlock_abi();
  if (facts.abi >= 1) {
    try {
      run_child(facts, filter);
    } catch (const Error& e) {
      facts.failure = e.message();
    }
  }
  facts.netns = network_namespaces_allowed(facts.netns_evidence);
  facts.cgroups = probe_cgroups_unless_off(::geteuid());
  facts.micros = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  return facts;
}

}  // namespace cordon::landlock

namespace cordon::landlock {

namespace {

std::string abi_problem(int abi) {
  if (landlock_abi_ceiling() == 0)
    return "Landlock counts as absent: " + abi_knob() +
           " is not an ABI (a test knob that can only lower it)";
  if (abi == -ENOSYS) return "Landlock is not built into this kernel";
  if (abi == -EOPNOTSUPP) return "Landlock is disabled at boot (lsm= does not list landlock)";
  return std::string("Landlock is not available: ") + std::strerror(-abi);
}

std::string base_problem(const ProbeFacts& f) {
  if (f.abi < 1) return abi_problem(f.abi);
  if (!f.failure.empty()) return f.failure;
  if (!f.fresh_proc) return "a fresh /proc could not be mounted in the probe's pid namespace";
  if (!f.identity) return "the probe could not become an unprivileged uid in its user namespace";
  if (!f.landlock) return "a Landlock domain did not deny a read it did not grant";
  if (!f.seccomp) return "the seccomp filter did not deny unshare";
  return {};
}

std::string limits_evidence(const ProbeFacts& f) {
  if (f.cgroups.version != sdk::CgroupVersion::none) return f.cgroups.evidence;
  return "rlimits (" + f.cgroups.evidence + ")";
}

}  // namespace

ProbeResult probe_result(const ProbeFacts& f) {
  ProbeResult r;
  std::string problem = base_problem(f);
  bool base = problem.empty();
  r.available = base;
  r.reason = problem;
  std::string ll = "Landlock ABI " + std::to_string(f.abi);
  auto prove = [&r, base](std::string_view cap, bool ok, std::string evidence) {
    r.proofs.push_back({std::string(cap), base && ok, base ? std::move(evidence) : ""});
  };
  prove(cap::fs_read_confine, true,
        ll + " read rules, and a mount namespace holding only the "
             "readable paths");
  prove(cap::fs_read_block, true,
        "each blocked path masked in the mount namespace by an empty read-only mode-000 mount "
        "that the command cannot remove (no capabilities, seccomp, Landlock)");
  prove(cap::fs_write_confine, true,
        ll + " write rights only on filesystem.write, the "
             "workspace and the private /tmp and HOME");
  prove(cap::fs_exec_block, true,
        "each blocked program's file (through PATH and symlinks) "
        "masked by a read-only mode-000 file");
  // Landlock's EXECUTE right is checked at execve, not at mmap(PROT_EXEC): the dynamic loader,
  // which every allowed dynamic program needs, can load and run any readable program.
  prove(cap::fs_exec_confine, false,
        "not enforceable: the dynamic loader ('ld.so PROGRAM') runs any readable program, "
        "and Landlock does not check mmap(PROT_EXEC)");
  prove(cap::net_deny, f.netns, f.netns_evidence);
  prove(cap::net_ports, f.abi >= 4,
        f.abi >= 4
            ? ll + " TCP bind/connect port rules; seccomp refuses UDP, raw and other "
                   "non-TCP inet sockets"
            : "TCP port rules need Landlock ABI 4; this kernel has " + std::to_string(f.abi));
  bool memory = f.cgroups.memory, pids = f.cgroups.pids || f.nproc_per_userns;
  prove(cap::limit_memory, memory,
        memory ? f.cgroups.evidence + ": memory limit for the whole sandbox"
               : "no cgroup for a sandbox-wide memory total: " + f.cgroups.evidence +
                     " (RLIMIT_AS would bound each process, not the sandbox)");
  prove(cap::limit_processes, pids,
        f.cgroups.pids ? f.cgroups.evidence + ": pids limit for the whole sandbox"
        : pids ? "RLIMIT_NPROC set inside the sandbox's own user namespace counts only its tasks "
                 "(proven: a second task over the limit was refused)"
               : "no cgroup pids controller and RLIMIT_NPROC is not counted per user namespace");
  prove(cap::limit_files, true, "RLIMIT_NOFILE");
  prove(cap::limit_cpu, true, "RLIMIT_CPU per process");
  prove(cap::limit_file_size, true, "RLIMIT_FSIZE");
  prove(cap::limit_cpu_share, f.cgroups.cpu,
        f.cgroups.cpu ? f.cgroups.evidence + ": CPU quota"
                      : "no cgroup cpu controller: " + f.cgroups.evidence);
  prove(cap::limit_timeout, true,
        "the pid namespace's init (the keeper) is killed at the deadline and the "
        "kernel kills everything in the namespace with it");
  prove(cap::proc_isolate, f.fresh_proc,
        "pid namespace with a fresh /proc (the probe was pid 1 of its own /proc)" +
            std::string(f.abi >= 6 ? "; Landlock signal scope" : ""));
  prove(cap::proc_no_subprocess, true,
        "seccomp: fork, vfork and clone without CLONE_THREAD "
        "fail with EPERM, clone3 with ENOSYS");
  prove(cap::ipc_isolate, f.netns || f.abi >= 6,
        "IPC namespace" +
            std::string(f.netns ? "; network namespace (abstract unix sockets)" : "") +
            (f.abi >= 6 ? "; Landlock abstract unix socket scope" : ""));
  prove(cap::env_grant, true, "execve with only the granted variables and HOME");
  prove(cap::home_private, true, "HOME is an empty 0700 directory on a tmpfs of the sandbox");
  prove(cap::identity_unprivileged, f.identity,
        f.root ? "cordon is root: the user namespace maps only an unprivileged host uid (the "
                 "workspace's owner, backends.landlock.uid, or 65534) without supplementary "
                 "groups; no capabilities after exec; no_new_privs"
               : "the user namespace maps only the caller's uid; no capabilities after exec; "
                 "no_new_privs");
  if (f.abi >= 1) r.facts.push_back(ll);
  if (std::string knobs = reductions(); !knobs.empty())
    r.facts.push_back("reduced for testing by " + knobs + ": proves only what such a host would");
  r.facts.push_back("limits via " + limits_evidence(f));
  if (f.nproc_per_userns) r.facts.push_back("RLIMIT_NPROC is counted per user namespace");
  r.facts.push_back("probe took " + std::to_string(f.micros) + " us");
  return r;
}

}  // namespace cordon::landlock
