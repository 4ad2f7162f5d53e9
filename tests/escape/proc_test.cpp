// Host processes and host IPC objects are out of the sandbox's sight and reach.
#include <dirent.h>
#include <sys/shm.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

int host_process_count() {
  int n = 0;
  DIR* d = opendir("/proc");
  while (dirent* e = d != nullptr ? readdir(d) : nullptr)
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') ++n;
  if (d != nullptr) closedir(d);
  return n;
}

/// The marker as hex: what `procprobe scan` takes, so that no command line in the sandbox
/// (cordon's argv included) contains the marker itself.
std::string hex(const std::string& text) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

/// The number after "key=" in a probe line, or -1.
int field(const std::string& line, const std::string& key) {
  auto at = line.find(key + "=");
  return at == std::string::npos ? -1 : std::stoi(line.substr(at + key.size() + 1));
}

}  // namespace

TEST_CASE("escape: host processes are invisible from the sandbox",
          "[escape][userns][proc][docker]") {
  Scratch s;
  auto marker = unique_marker("cordon-escape-hostproc");
  HostSleeper host(marker);
  auto own = unique_marker("cordon-escape-ownproc");
  // The host side sees the marked sleeper, and so does the probe run on the host: the scan can
  // find it.
  REQUIRE(pids_with_marker(marker).size() == 1);
  auto host_scan = run_on_host("procprobe", {"scan", hex(marker)});
  CHECK(field(host_scan.line("scan " + hex(marker)), "found") == 1);
  auto ran = run_probe(s, confined(s.root()), "procprobe", {"scan", hex(marker), "own", own});
  INFO(ran.describe());
  CHECK_THAT(ran.line("own " + own), IsOk());
  auto scan = ran.line("scan " + hex(marker));
  CHECK_THAT(scan, IsOk());
  CHECK(field(scan, "found") == 0);
  int visible = field(scan, "visible");
  INFO("host processes: " << host_process_count());
  CHECK(visible >= 1);
  CHECK(visible <= 8);
  CHECK(host.alive());
}

TEST_CASE("escape: host processes cannot be signalled, killed or traced",
          "[escape][userns][proc][signal][docker]") {
  Scratch s;
  HostSleeper host(unique_marker("cordon-escape-victim"));
  auto own = unique_marker("cordon-escape-ownkill");
  std::string pid = std::to_string(host.pid());
  auto ran = run_probe(s, confined(s.root()), "procprobe",
                       {"own", own, "kill0", pid, "kill9", pid, "ptrace", pid});
  INFO(ran.describe());
  CHECK_THAT(ran.line("own " + own), IsOk());
  CHECK_THAT(ran.line("kill0 " + pid), IsErr(kHostProcessDenied));
  CHECK_THAT(ran.line("kill9 " + pid), IsErr(kHostProcessDenied));
  CHECK_THAT(ran.line("ptrace " + pid), IsErr(kHostProcessDenied));
  CHECK(host.alive());
}

// The landlock backend's first process (its keeper) shares cordon's own memory: reading it
// would show where cordon's memory lies, writing it would take cordon over. The command's own
// memory stays its own to read and write: the probe is not simply refused everything. With the
// probe cache off, the backend's probe runs while the keeper starts: its children once made that
// memory dumpable again.
TEST_CASE("escape: the sandbox's first process can be neither read, written nor traced",
          "[escape][userns][proc]") {
  Scratch s;
  RunExtras extras;
  bool probing = GENERATE(false, true);
  if (probing) extras.set_env["CORDON_PROBE_CACHE"] = "off";
  auto ran = run_probe(s, confined(s.root()), "procprobe",
                       {"mem", "1", "maps", "1", "vmread", "1", "ptrace", "1", "kill9", "1", "mem",
                        "self", "maps", "self", "vmread", "self"},
                       extras);
  INFO((probing ? "probing: " : "") << ran.describe());
  CHECK_THAT(ran.line("mem self"), IsOk());
  CHECK_THAT(ran.line("maps self"), IsOk());
  CHECK_THAT(ran.line("mem 1"), IsErr({"EACCES", "EPERM"}));
  CHECK_THAT(ran.line("maps 1"), IsErr({"EACCES", "EPERM"}));
  CHECK_THAT(ran.line("ptrace 1"), IsErr({"EPERM"}));
  // seccomp denies process_vm_readv outright, the command's own memory included.
  CHECK_THAT(ran.line("vmread self"), IsErr({"EPERM"}));
  CHECK_THAT(ran.line("vmread 1"), IsErr({"EPERM"}));
  // SIGKILL to the first process is refused or dropped: the probe is still there afterwards
  // (the lines after it), as its death would have killed every process of the sandbox.
  CHECK(ran.line("kill9 1").rfind("<no line", 0) != 0);
}

TEST_CASE("escape: host SysV shared memory is invisible from the sandbox",
          "[escape][userns][proc][ipc][docker]") {
  Scratch s;
  key_t key = static_cast<key_t>(0x43450000 | (getpid() & 0xffff));
  int id = shmget(key, 4096, IPC_CREAT | 0666);
  REQUIRE(id >= 0);
  char key_text[32];
  snprintf(key_text, sizeof key_text, "0x%x", static_cast<unsigned>(key));
  // The host sees the segment by that key: the probe is not simply asking wrongly.
  auto host = run_on_host("procprobe", {"shmget", key_text});
  auto ran = run_probe(s, confined(s.root()), "procprobe", {"shmnew", "shmget", key_text});
  shmctl(id, IPC_RMID, nullptr);
  INFO(host.describe());
  CHECK_THAT(host.line(std::string("shmget ") + key_text), IsOk());
  INFO(ran.describe());
  CHECK_THAT(ran.line("shmnew"), IsOk());
  CHECK_THAT(ran.line(std::string("shmget ") + key_text), IsErr({"ENOENT"}));
}
