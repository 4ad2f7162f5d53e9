// The host side of a certification (certify_host.hpp).
#include "certify_host.hpp"

#include <cordon/sdk/error.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <system_error>

#include "runtime_options.hpp"

namespace cordon::cli {

namespace {

namespace fs = std::filesystem;

// The first IPv4 address of an interface that is up and not loopback: reachable from the host's
// own network namespace only through a route, which a sandbox without network lacks.
std::string non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string out;
  for (ifaddrs* a = list; a && out.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) out = text;
  }
  ::freeifaddrs(list);
  return out;
}

// A TCP listener on `ip`, port chosen by the kernel; returns the descriptor and sets `port`.
int tcp_listener(const std::string& ip, int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

int abstract_listener(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

fs::path make_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cordon-certify-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error(code::kCorpusMissing, "cannot make a directory for the certification: " +
                                          std::string(std::strerror(errno)));
  // Other users (the sandbox's identity) must reach the workspaces inside.
  std::error_code ec;
  fs::permissions(pattern, fs::perms(0755), ec);
  return pattern;
}

}  // namespace

HostFixtures::HostFixtures(const fs::path& probe) : dir_(make_dir()), probe_(probe) {
  fs::create_directories(dir_ / "outside");
  values_["{outside}"] = (dir_ / "outside").string();
  values_["{host_pid}"] = std::to_string(::getpid());
  values_["{home}"] = host_home().string();
  std::string ip = non_loopback_ipv4();
  int port = 0;
  if (!ip.empty()) listener_ = tcp_listener(ip, port);
  if (listener_ >= 0) {
    values_["{host_ip}"] = ip;
    values_["{open_port}"] = std::to_string(port);
  } else {
    values_["{open_port}"] = "1";  // policies that name it still load
    missing_["host_ip"] = "no non-loopback IPv4 address to listen on here";
  }
  std::string name = "cordon-certify-" + std::to_string(::getpid());
  abstract_ = abstract_listener(name);
  if (abstract_ >= 0)
    values_["{abstract}"] = name;
  else
    missing_["abstract"] = "cannot listen on an abstract unix socket here";
  int key = 0x43000000 | (::getpid() & 0xffffff);
  shm_id_ = ::shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0644);
  if (shm_id_ >= 0)
    values_["{sysv_key}"] = std::to_string(key);
  else
    missing_["sysv"] = "cannot create a SysV shared-memory segment here";
}

HostFixtures::~HostFixtures() {
  if (listener_ >= 0) ::close(listener_);
  if (abstract_ >= 0) ::close(abstract_);
  if (shm_id_ >= 0) ::shmctl(shm_id_, IPC_RMID, nullptr);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

fs::path HostFixtures::new_workspace() {
  fs::path ws = dir_ / ("ws-" + std::to_string(++workspaces_));
  fs::create_directory(ws);
  fs::permissions(ws, fs::perms(0777));
  fs::copy_file(probe_, ws / "cordon-probe");
  fs::permissions(ws / "cordon-probe", fs::perms(0755));
  return ws;
}

std::string HostFixtures::missing(const std::string& need) const {
  auto it = missing_.find(need);
  if (it != missing_.end()) return it->second;
  if (need == "host_ip" || need == "abstract" || need == "sysv") return {};
  return "unknown need '" + need + "'";
}

}  // namespace cordon::cli
