// The sandbox's /dev is minimal and its own: the harmless character devices work, the host's
// disks, kernel log, KVM, vsock and loop devices do not exist, and the host's POSIX shared memory
// (/dev/shm) is not shared.
#include <dirent.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// What a minimal /dev may hold: the devices the design names plus the usual links and mounts.
const std::set<std::string> kMinimalDev{"null", "zero", "full",  "random",  "urandom",
                                        "tty",  "fd",   "stdin", "stdout",  "stderr",
                                        "shm",  "pts",  "ptmx",  "console", "mqueue"};

std::vector<std::string> host_dev_entries() {
  std::vector<std::string> names;
  DIR* d = opendir("/dev");
  while (dirent* e = d != nullptr ? readdir(d) : nullptr)
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  if (d != nullptr) closedir(d);
  return names;
}

}  // namespace

TEST_CASE("escape: /dev holds only the minimal devices", "[escape][userns][dev][docker]") {
  Scratch s;
  auto ran =
      run_probe(s, confined(s.root()), "fsop",
                {"list", "/dev", "read", "/dev/zero", "append", "/dev/null", "read", "/dev/urandom",
                 "read", "/dev/kmsg", "read", "/dev/mem", "read", "/dev/vda"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read /dev/zero"), Contains("OK 200 bytes"));
  CHECK_THAT(ran.line("append /dev/null"), IsOk());
  CHECK_THAT(ran.line("read /dev/urandom"), Contains("OK 200 bytes"));
  for (const char* dev : {"/dev/kmsg", "/dev/mem", "/dev/vda"})
    CHECK_THAT(ran.line(std::string("read ") + dev), IsErr(kReadDenied));
  auto listing = ran.line("list /dev");
  REQUIRE_THAT(listing, IsOk());
  // Every host device outside the minimal set is absent; the host does have some (the test
  // would prove nothing on a host without any).
  int host_only = 0;
  for (const auto& name : host_dev_entries()) {
    if (kMinimalDev.count(name) != 0) continue;
    ++host_only;
    INFO("host device " << name);
    CHECK_THAT(listing, !Contains("[" + name + ",") && !Contains("," + name + ","));
  }
  CHECK(host_only > 0);
}

TEST_CASE("escape: the host's /dev/shm is not shared", "[escape][userns][dev][ipc][docker]") {
  Scratch s;
  std::string name = unique_marker("cordon-escape-shm");
  std::string host_file = "/dev/shm/" + name;
  s.write(host_file, kSecretContent, 0666);
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"list", "/dev/shm", "read", host_file, "create", "/dev/shm/sandbox-own",
                        "read", "/dev/shm/sandbox-own"});
  std::string host_content = s.read(host_file);
  unlink(host_file.c_str());
  INFO(ran.describe());
  CHECK(host_content == kSecretContent);
  CHECK_THAT(ran.line("read " + host_file), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list /dev/shm"), IsErr(kReadDenied) || !Contains(name));
  // The sandbox may have its own (private) /dev/shm; what it writes there stays there.
  CHECK_THAT(ran.line("create /dev/shm/sandbox-own"), IsOk() || IsErr(kHiddenWriteDenied));
  CHECK_FALSE(exists("/dev/shm/sandbox-own"));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: kernel tunables under /proc/sys cannot be written",
          "[escape][userns][proc][sysctl][docker]") {
  Scratch s;
  auto ran =
      run_probe(s, confined(s.root()), "fsop",
                {"read", "/proc/sys/kernel/ostype", "append", "/proc/sys/vm/drop_caches", "append",
                 "/proc/sys/kernel/core_pattern", "append", "/proc/sysrq-trigger"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read /proc/sys/kernel/ostype"), Contains("Linux"));
  CHECK_THAT(ran.line("append /proc/sys/vm/drop_caches"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("append /proc/sys/kernel/core_pattern"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("append /proc/sysrq-trigger"), IsErr(kHiddenWriteDenied));
}
