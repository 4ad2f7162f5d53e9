// The `none` backend through the CLI: it runs only what asks for nothing it cannot prove.
#include <unistd.h>

#include <fstream>

#include "cli.hpp"

using namespace itest;

namespace {

// The least a policy can ask for: no confinement, network allowed, the host's HOME.
const char* kOpenPolicy =
    "version = 1\n[policy]\nname = \"open\"\n[filesystem]\nread = \"host\"\nwrite = \"host\"\n"
    "home = \"host\"\n[network]\nallow = true\n[limits]\ntimeout = \"10s\"\n";

}  // namespace

TEST_CASE("none: refuses any policy that confines, naming each capability", "[none][cli]") {
  Scratch s;
  auto r = run_cli({"run", "--backend", "none", "--workspace", s.dir.string(), "--", "/bin/true"});
  CHECK(r.status == 125);
  CHECK(r.err.find("CRD1001") != std::string::npos);
  for (auto cap : {"fs.read.confine", "fs.write.confine", "net.deny", "proc.isolate"})
    CHECK(r.err.find(cap) != std::string::npos);
}

TEST_CASE("none: runs an open policy, and never as root", "[none][cli]") {
  Scratch s;
  std::ofstream(s / "open.toml") << kOpenPolicy;
  auto r = run_cli({"run", "--backend", "none", "--policy", (s / "open.toml").string(),
                    "--workspace", s.dir.string(), "--", "/bin/sh", "-c", "echo ran; exit 4"});
  INFO(r.err);
  if (::geteuid() == 0) {
    // Even asked for nothing, a command never holds host privileges: as root, refuse.
    CHECK(r.status == 125);
    CHECK(r.err.find("identity.unprivileged") != std::string::npos);
    CHECK(r.out.find("ran") == std::string::npos);
  } else {
    CHECK(r.status == 4);
    CHECK(r.out == "ran\n");
  }
}

TEST_CASE("none: is never chosen unless named", "[none][cli]") {
  Scratch s;
  std::ofstream(s / "open.toml") << kOpenPolicy;
  auto run = run_cli({"run", "--policy", (s / "open.toml").string(), "--workspace", s.dir.string(),
                      "--json", "--", "/bin/true"});
  INFO(run.out << run.err);
  // The open policy is satisfiable by none, yet dispatch passes it over: only landlock runs it.
  CHECK(run.out.find("\"backend\":\"none\"") == std::string::npos);
  CHECK(run.out.find("\"backend\":\"landlock\"") != std::string::npos);
}
