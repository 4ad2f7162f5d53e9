// The canary probe (canary.hpp) on Linux, through stand-ins for sandbox-exec, both ways: a
// stand-in that ignores the profile is refused, naming the check that failed; one that enforces
// it with bwrap, reading the -D parameters it is given (the WRITE_ ones writable, the BLOCKED_
// ones hidden, the rest of / read-only), proves; and stand-ins that break one check each are
// refused by that check. Seatbelt itself is not exercised. Without a working bwrap the enforcing
// cases are skipped with the reason, and fail under CI=true.
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "canary.hpp"

using namespace cordon;
using namespace cordon::seatbelt;
namespace fs = std::filesystem;

namespace {

// What an enforcing stand-in leaves out, to break one canary check.
struct Enforce {
  bool writes = true;   ///< bind the WRITE_ parameters writable
  bool hide = true;     ///< hide the BLOCKED_ parameters
  bool leak = false;    ///< print the blocked files to stderr before running the command
  bool others = true;   ///< hide every BLOCKED_ parameter, not only the first (the file's own)
  bool noexec = true;   ///< hide the NOEXEC_ parameters (the blocked programs)
  bool net = true;      ///< a network namespace of its own unless the profile allows the network
  bool plant = false;   ///< leave a file in HOME before running the command
  bool reads = true;    ///< confine reads to the READ_ parameters when the profile does
  bool links = true;    ///< sandbox the run that makes a hard link in the grant (else run it bare)
  bool broken = false;  ///< fail, before the script starts, every run of the blocked program
};

// Seatbelt's /private/tmp is /tmp here: a parameter that does not exist loses its /private.
constexpr const char* kBwrapStandIn = R"sh(
binds=() hides=() net=() reads=() root=(--ro-bind / /)
while [ "$1" != -- ]; do
  case "$1" in
    -f)
      shift
      profile=$(cat "$1")
      case "$profile" in *"(allow network"*) ;; *) [ "$NET" = 1 ] && net=(--unshare-net) ;; esac
      # Reads confined to the grants: /usr for the shell, and the READ_ parameters below.
      case "$profile" in *"(allow file-read*)"*) ;; *)
        [ "$READS" = 1 ] && root=(--tmpfs / --ro-bind /usr /usr --symlink usr/bin /bin
          --symlink usr/lib /lib --symlink usr/lib64 /lib64) ;;
      esac ;;
    -DREAD_*=*)
      v=${1#*=}
      [ -e "$v" ] || v=${v#/private}
      case "$v" in /usr | /usr/* | /bin | /lib | /lib64) ;; *) [ -e "$v" ] && reads+=(--ro-bind "$v" "$v") ;; esac ;;
    -DWRITE_*=* | -DBLOCKED_*=* | -DNOEXEC_*=*)
      v=${1#*=}
      [ -e "$v" ] || v=${v#/private}
      if [ -e "$v" ]; then
        case "$1" in
          -DWRITE_*) [ "$WRITES" = 1 ] && binds+=(--bind "$v" "$v") ;;
          -DNOEXEC_*) [ "$NOEXEC" = 1 ] && [ -f "$v" ] && hides+=(--ro-bind /dev/null "$v") ;;
          *)
            [ "$LEAK" = 1 ] && cat "$v" >&2
            if [ "$HIDE" != 1 ]; then :
            elif [ "$OTHERS" != 1 ] && [ "${1%%=*}" != -DBLOCKED_0 ]; then :
            elif [ -d "$v" ]; then hides+=(--tmpfs "$v")
            else hides+=(--ro-bind /dev/null "$v"); fi ;;
        esac
      fi ;;
  esac
  shift
done
shift
[ "$PLANT" = 1 ] && touch "$HOME/planted"
[ "$LINKS" = 1 ] || case "$*" in */granted/link*) exec "$@" ;; esac
[ "$BROKEN" = 1 ] && case "$*" in */blocked-program*) echo 'launcher broke' >&2; exit 71 ;; esac
[ "${root[0]}" = --tmpfs ] || reads=()
exec bwrap "${root[@]}" --dev /dev "${reads[@]}" "${net[@]}" "${binds[@]}" "${hides[@]}" -- "$@"
)sh";

struct CanaryLauncher {
  fs::path dir = fs::temp_directory_path() / ("cordon-sbcanary-" + std::to_string(::getpid()));
  fs::path launcher = dir / "sandbox-exec";
  explicit CanaryLauncher(const std::string& script) {
    fs::create_directories(dir);
    std::ofstream(launcher) << script;
    fs::permissions(launcher, fs::perms::owner_all);
  }
  ~CanaryLauncher() { fs::remove_all(dir); }
  // The stand-in that ignores the profile and runs the command as it is (run_test.cpp's kind).
  static CanaryLauncher ignoring() {
    return CanaryLauncher(
        "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n");
  }
  static std::string enforcing(Enforce e) {
    return std::string("#!/bin/bash\nWRITES=") + (e.writes ? "1" : "0") +
           " HIDE=" + (e.hide ? "1" : "0") + " LEAK=" + (e.leak ? "1" : "0") +
           " OTHERS=" + (e.others ? "1" : "0") + " NOEXEC=" + (e.noexec ? "1" : "0") +
           " NET=" + (e.net ? "1" : "0") + " PLANT=" + (e.plant ? "1" : "0") +
           " READS=" + (e.reads ? "1" : "0") + " LINKS=" + (e.links ? "1" : "0") +
           " BROKEN=" + (e.broken ? "1" : "0") + "\n" + kBwrapStandIn;
  }
};

// True when bwrap can make a read-only view of / here; else skipped, or failed under CI=true.
bool bwrap_works() {
  if (std::system("bwrap --ro-bind / / --dev /dev -- /bin/true >/dev/null 2>&1") == 0) return true;
  std::string why = "bwrap is missing or cannot make its namespaces here";
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("missing prerequisite: " << why);
  WARN("skipped: " << why);
  return false;
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void check_refused(const ProbeResult& r) {
  CHECK_FALSE(r.available);
  CHECK(r.reason.rfind("seatbelt canary: ", 0) == 0);
  CHECK(r.proofs.size() == cap::all().size());
  for (const auto& p : r.proofs) CHECK_FALSE(p.proven);
}

}  // namespace

TEST_CASE(
    "seatbelt canary: a launcher that ignores the profile is refused: the write outside the "
    "grant worked, the blocked file was read",
    "[seatbelt]") {
  CanaryLauncher s = CanaryLauncher::ignoring();
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  check_refused(r);
  CHECK(mentions(r.reason, "a write outside the grant worked ('"));
  CHECK(mentions(r.reason, "/outside/written' was written)"));
  CHECK(mentions(r.reason, "the blocked file '"));
  CHECK(mentions(r.reason, "was read ("));
  CHECK_FALSE(mentions(r.reason, "inside the grant"));
}

TEST_CASE("seatbelt canary: a launcher that runs nothing is refused: the write inside failed",
          "[seatbelt]") {
  CanaryLauncher s("#!/bin/sh\necho 'no sandbox here' >&2\nexit 71\n");
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  check_refused(r);
  CHECK(r.reason.rfind(
            "seatbelt canary: a write inside the grant failed (exit 71: no sandbox here, before "
            "the script started); ",
            0) == 0);
  // Nor do the refusals count: nothing was tried.
  CHECK(mentions(r.reason, "the write outside the grant could not be tried (exit 71"));
  CHECK(mentions(r.reason,
                 "could not be tried (exit 71: no sandbox here, before the script started)"));
}

TEST_CASE("seatbelt canary: a launcher that enforces the profile proves what the canary checked",
          "[seatbelt]") {
  if (!bwrap_works()) return;
  CanaryLauncher s(CanaryLauncher::enforcing({}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  REQUIRE(r.available);
  CHECK(r.reason.empty());
  CHECK(r.proofs.size() == cap::all().size());
  CHECK(r.proves(cap::fs_write_confine));
  CHECK(mentions(r.evidence(cap::fs_write_confine), "the canary through " + s.launcher.string()));
  CHECK(r.proves(cap::limit_files));
  // What Seatbelt cannot keep, or the canary did not check, stays unproven with a reason.
  // Neither the blocked file's other name nor a hard link made to it could be read.
  CHECK(r.proves(cap::fs_read_block));
  CHECK(mentions(r.evidence(cap::fs_read_block), "nor its other name (a hard link"));
  // Nor did the blocked program run, nor a copy of it.
  CHECK(r.proves(cap::fs_exec_block));
  CHECK(mentions(r.evidence(cap::fs_exec_block), "nor a copy of it"));
  // The host's loopback was out of reach with the network denied, and HOME was the run's own.
  CHECK(r.proves(cap::net_deny));
  CHECK(r.proves(cap::home_private));
  CHECK(mentions(r.evidence(cap::home_private), "not the caller's"));
  // With reads confined, a file in the grant was read and one outside it was not.
  CHECK(r.proves(cap::fs_read_confine));
  for (auto id : {cap::limit_memory, cap::limit_processes, cap::limit_cpu_share, cap::env_grant,
                  cap::proc_isolate, cap::identity_unprivileged}) {
    INFO(id);
    CHECK_FALSE(r.proves(id));
    CHECK_FALSE(r.evidence(id).empty());
  }
}

TEST_CASE("seatbelt canary: an enforcing launcher that does not hide the blocked file is refused",
          "[seatbelt]") {
  if (!bwrap_works()) return;
  CanaryLauncher s(CanaryLauncher::enforcing({.hide = false}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  check_refused(r);
  CHECK(mentions(r.reason, "the blocked file '"));
  CHECK(mentions(r.reason, "was read ("));
  CHECK_FALSE(mentions(r.reason, "grant"));  // both writes behaved
}

TEST_CASE("seatbelt canary: an enforcing launcher that shows the blocked file's content is refused",
          "[seatbelt]") {
  if (!bwrap_works()) return;
  CanaryLauncher s(CanaryLauncher::enforcing({.leak = true}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  check_refused(r);
  CHECK(mentions(r.reason, "was read (its content was printed)"));
  CHECK_FALSE(mentions(r.reason, "grant"));
}

TEST_CASE(
    "seatbelt canary: an enforcing launcher that grants no write is refused by the write "
    "inside",
    "[seatbelt]") {
  if (!bwrap_works()) return;
  CanaryLauncher s(CanaryLauncher::enforcing({.writes = false}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  check_refused(r);
  CHECK(mentions(r.reason, "a write inside the grant failed (exit "));
  CHECK_FALSE(mentions(r.reason, "outside"));
  CHECK_FALSE(mentions(r.reason, "blocked"));
}

TEST_CASE(
    "seatbelt canary: a launcher that keeps all but one thing is usable, and only the proof of "
    "that thing is refused, naming what happened",
    "[seatbelt]") {
  if (!bwrap_works()) return;
  struct Gap {
    const char* launcher;
    Enforce enforce;
    std::string_view refused;
    std::vector<std::string> evidence;
  };
  const std::vector<Gap> gaps = {
      {"hides a blocked file under its own name only",
       {.others = false},
       cap::fs_read_block,
       {"the blocked file's other name (a hard link) '", "was read ("}},
      {"lets a blocked program run",
       {.noexec = false},
       cap::fs_exec_block,
       {"the blocked program '", "a copy of the blocked program made in the grant"}},
      {"leaves the host's network reachable",
       {.net = false},
       cap::net_deny,
       {"worked with the network denied"}},
      {"leaves a file in HOME",
       {.plant = true},
       cap::home_private,
       {"HOME was not empty (entries in it: 1)"}},
      {"leaves files outside the grants readable",
       {.reads = false},
       cap::fs_read_confine,
       {"outside the grant was read"}},
  };
  const std::vector<std::string_view> decided = {cap::fs_write_confine, cap::fs_read_block,
                                                 cap::fs_exec_block,    cap::net_deny,
                                                 cap::home_private,     cap::fs_read_confine};
  for (const auto& gap : gaps) {
    INFO("a launcher that " << gap.launcher);
    CanaryLauncher s(CanaryLauncher::enforcing(gap.enforce));
    ProbeResult r = canary_probe(s.launcher.string());
    INFO(r.reason);
    REQUIRE(r.available);
    for (auto id : decided) {
      INFO(id << ": " << r.evidence(id));
      CHECK(r.proves(id) == (id != gap.refused));
    }
    for (const auto& part : gap.evidence) CHECK(mentions(r.evidence(gap.refused), part));
  }
}

TEST_CASE(
    "seatbelt canary: a hard link the command made in the grant does not turn the later checks "
    "into refused runs that count as held",
    "[seatbelt]") {
  if (!bwrap_works()) return;
  // The link's run goes unsandboxed and leaves the link; the blocked program then runs.
  CanaryLauncher s(CanaryLauncher::enforcing({.noexec = false, .links = false}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  REQUIRE(r.available);
  CHECK_FALSE(r.proves(cap::fs_read_block));
  CHECK(mentions(r.evidence(cap::fs_read_block),
                 "a hard link made to the blocked file in the grant"));
  CHECK_FALSE(r.proves(cap::fs_exec_block));
  INFO(r.evidence(cap::fs_exec_block));
  CHECK(mentions(r.evidence(cap::fs_exec_block), "' ran"));
  CHECK(r.proves(cap::net_deny));  // tried, not refused for the link
}

TEST_CASE(
    "seatbelt canary: a run that fails before its script starts is not a refusal: the proof it "
    "decides is not given",
    "[seatbelt]") {
  if (!bwrap_works()) return;
  CanaryLauncher s(CanaryLauncher::enforcing({.broken = true}));
  ProbeResult r = canary_probe(s.launcher.string());
  INFO(r.reason);
  REQUIRE(r.available);
  CHECK_FALSE(r.proves(cap::fs_exec_block));
  INFO(r.evidence(cap::fs_exec_block));
  CHECK(mentions(r.evidence(cap::fs_exec_block),
                 "could not be tried (exit 71: launcher broke, before the script started)"));
  CHECK(r.proves(cap::fs_read_block));
}
