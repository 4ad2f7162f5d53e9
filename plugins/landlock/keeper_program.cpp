// The keeper's program (keeper_exec.hpp): reads what cordon passed in its argv, maps the tree's
// arena, and becomes the keeper (keeper_process.hpp). Built static, without cordon's libraries.
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "child_io.hpp"
#include "keeper_exec.hpp"
#include "keeper_process.hpp"

namespace {

using cordon::landlock::ChildReport;

bool parse_number(const char* text, unsigned long long& out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

bool parse_fd(const char* text, int& out) {
  unsigned long long v = 0;
  if (!parse_number(text, v) || v > 1U << 30) return false;
  out = static_cast<int>(v);
  return true;
}

// "0,1,3": the CPUs cordon may use.
bool parse_cpus(const char* text, cpu_set_t& cpus) {
  CPU_ZERO(&cpus);
  while (*text != '\0') {
    char* end = nullptr;
    unsigned long cpu = std::strtoul(text, &end, 10);
    if (end == text || cpu >= CPU_SETSIZE) return false;
    CPU_SET(cpu, &cpus);
    text = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return false;
  }
  return true;
}

const char* optional(const char* text) { return std::strcmp(text, "-") == 0 ? nullptr : text; }

}  // namespace

int main(int argc, char** argv) {
  using namespace cordon::landlock;
  KeeperArgs a;
  int arena = -1;
  unsigned long long arena_size = 0;
  static cpu_set_t cpus;
  if (argc != kKeeperArgc || !parse_fd(argv[1], a.socket) || !parse_fd(argv[2], a.cordon) ||
      !parse_fd(argv[3], arena) || !parse_number(argv[4], arena_size))
    return kKeeperFailed;
  auto fail = [&](int err, const char* what) {
    send_report(a.socket, make_report(ChildReport::Kind::setup_failed, err, "namespaces", what));
    return kKeeperFailed;
  };
  a.network = std::strcmp(argv[5], "1") == 0;
  a.root = std::strcmp(argv[6], "1") == 0;
  if (std::strcmp(argv[7], "-") != 0) {
    if (!parse_cpus(argv[7], cpus)) return fail(EINVAL, "the keeper's CPUs");
    a.cpus = &cpus;
  }
  a.uid_map = optional(argv[8]);
  a.gid_map = optional(argv[9]);
  void* base = ::mmap(nullptr, static_cast<std::size_t>(arena_size), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_NORESERVE, arena, 0);
  if (base == MAP_FAILED) return fail(errno, "cannot map the tree's arena");
  ::close(arena);
  a.layout = static_cast<const FlatLayout*>(base);
  keeper_main(a);
}
