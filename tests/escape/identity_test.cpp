// The command holds no host privilege, even when cordon runs as root: root-only files and sockets
// the policy lets it see stay closed to it by plain permissions, because on the host it is not
// uid 0 (a process that is host uid 0 inside a user namespace would still pass those checks).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// A policy that may read the workspace's parent (the scratch root) itself.
PolicySpec reading_parent(const Scratch& s) {
  auto p = confined(s.root());
  p.read->push_back(s.root());
  return p;
}

/// A directory outside the workspace that reading_parent() lets the command read: the scratch
/// root; on docker, which mounts no filesystem.read path, listed/ (the suite's read-only mount).
std::string readable_dir(const Scratch& s) { return on_docker() ? s.listed() : s.root(); }

/// The host uid that sandbox uid `inside` maps to, from the probe's uid_map lines; -1 if none.
long long host_uid_of(const Ran& ran, long long inside) {
  for (const auto& line : ran.lines("uid_map")) {
    std::istringstream in(line);
    long long first = 0, outside = 0, count = 0;
    if (in >> first >> outside >> count && inside >= first && inside < first + count)
      return outside + (inside - first);
  }
  return -1;
}

}  // namespace

TEST_CASE("escape: the command is not host root", "[escape][userns][identity][docker]") {
  Scratch s;
  auto ran = run_probe(s, confined(s.root()), "lifeprobe", {"ids"});
  INFO(ran.describe());
  auto ids = ran.line("ids");
  auto at = ids.find("uid=") + 4;
  long long inside = std::stoll(ids.substr(at, ids.find(' ', at) - at));
  long long outside = host_uid_of(ran, inside);
  INFO("sandbox uid " << inside << " is host uid " << outside);
  CHECK(outside >= 0);
  CHECK(outside != 0);
  // As a normal user the sandbox can only be that user; as root, not root.
  if (!running_as_root()) CHECK(outside == static_cast<long long>(getuid()));
}

TEST_CASE("escape: a root-only file in a readable directory stays closed when cordon is root",
          "[escape][userns][identity][root][docker]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "needs root: cordon itself must run as root");
  Scratch s;
  std::string root_only = readable_dir(s) + "/root-only.txt";
  std::string public_file = readable_dir(s) + "/public.txt";
  s.write(root_only, kSecretContent, 0600);
  s.write(public_file, kListedContent, 0644);
  s.write(s.ws() + "/root-owned.txt", "root-owned\n", 0644);
  auto ran = run_probe(s, reading_parent(s), "fsop",
                       {"read", public_file, "read", root_only, "read", "root-owned.txt", "append",
                        "root-owned.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + public_file), Contains(kListedContent));
  CHECK_THAT(ran.line("read " + root_only), IsErr({"EACCES"}));
  CHECK_THAT(ran.line("read root-owned.txt"), Contains("root-owned"));
  CHECK_THAT(ran.line("append root-owned.txt"), IsErr({"EACCES"}));
  CHECK(s.read(s.ws() + "/root-owned.txt") == "root-owned\n");
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: a root-only unix socket stays closed when cordon is root",
          "[escape][userns][identity][root][unix][docker]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "needs root: cordon itself must run as root");
  Scratch s;
  std::string root_sock = readable_dir(s) + "/root.sock";
  std::string open_sock = readable_dir(s) + "/open.sock";
  UnixListener root_only(UnixListener::Kind::path, root_sock, 0600);
  UnixListener open(UnixListener::Kind::path, open_sock, 0666);
  std::vector<std::string> args{"unix", open_sock, "to-open", "unix", root_sock, "to-root"};
  // The Docker daemon's socket, where there is one: the classic way from root to the host.
  bool docker = exists("/var/run/docker.sock");
  if (docker) args.insert(args.end(), {"unix", "/var/run/docker.sock", "to-docker"});
  auto policy = reading_parent(s);
  if (docker) policy.read->push_back("/var/run");
  auto ran = run_probe(s, policy, "netprobe", args);
  INFO(ran.describe());
  CHECK_THAT(ran.line("unix " + open_sock), IsOk());
  CHECK(open.accept_message(2000) == std::optional<std::string>("to-open"));
  CHECK_THAT(ran.line("unix " + root_sock), IsErr({"EACCES"}));
  CHECK_FALSE(root_only.accept_message(300).has_value());
  if (docker) CHECK_THAT(ran.line("unix /var/run/docker.sock"), IsErr({"EACCES", "ENOENT"}));
}
