// Tests of the supervisor's spec: everything a job needs, in a sealed memory file only.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include "error_code.hpp"
#include "job_spec.hpp"
#include "own_state.hpp"

using cordon::testing::error_code_of;
using namespace cordon;
using namespace cordon::detail;

TEST_CASE("jobs spec: every field survives the round trip", "[jobs][spec]") {
  SupervisorSpec s;
  s.state_dir = "/var/lib/cordon/jobs";
  s.id = "j0123456789abcdef01234567";
  s.policy_toml = "version = 1\n[policy]\nname = \"x\"\n";
  s.argv = {"sh", "-c", "echo 'a b'"};
  s.workspace = "/work/p";
  s.host_home = "/root";
  s.backend = "docker";
  s.env = {{"CI", "true"}};
  s.stdin_data = std::string("in\0put", 6);
  s.shell_unsafe = true;
  s.plugin_dirs = {"/opt/plugins"};
  s.pins.allow = std::vector<std::string>{"docker"};
  s.pins.sha256["docker"] = std::string(64, 'a');
  s.config_backends = {{"docker", {{"image", "busybox"}}}};
  s.protected_paths = {"/etc/cordon.toml"};
  auto back = decode_spec(encode_spec(s));
  CHECK(back.state_dir == s.state_dir);
  CHECK(back.id == s.id);
  CHECK(back.policy_toml == s.policy_toml);
  CHECK(back.argv == s.argv);
  CHECK(back.workspace == s.workspace);
  CHECK(back.host_home == s.host_home);
  CHECK(back.backend == s.backend);
  CHECK(back.env == s.env);
  CHECK(back.stdin_data == s.stdin_data);
  CHECK(back.shell_unsafe);
  CHECK(back.plugin_dirs == s.plugin_dirs);
  CHECK(back.pins == s.pins);
  CHECK(back.config_backends == s.config_backends);
  CHECK(back.protected_paths == s.protected_paths);
  s.stdin_data.reset();
  s.pins.allow.reset();
  back = decode_spec(encode_spec(s));
  CHECK_FALSE(back.stdin_data);
  CHECK_FALSE(back.pins.allow);
}

TEST_CASE("jobs spec: a malformed spec is refused, never half read", "[jobs][spec]") {
  for (const char* text :
       {"", "[]", "{}", R"({"format": 2})", R"({"format": 1, "state_dir": 3})"}) {
    INFO(text);
    CHECK(error_code_of([&] { decode_spec(text); }) == "CRD6004");
  }
}

TEST_CASE("jobs spec: only a sealed memory file is read", "[jobs][spec]") {
  auto fd = sealed_memfd("spec text");
  CHECK(read_sealed(fd.get()) == "spec text");
  // Sealed: nobody can change it any more, not even through a descriptor of its own.
  CHECK(::write(fd.get(), "x", 1) < 0);
  CHECK(::ftruncate(fd.get(), 0) != 0);
  // The other way: an unsealed memory file, a pipe.
  OwnedFd open(::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  REQUIRE(::write(open.get(), "x", 1) == 1);
  CHECK(error_code_of([&] { read_sealed(open.get()); }) == "CRD6004");
  int p[2];
  REQUIRE(::pipe(p) == 0);
  CHECK(error_code_of([&] { read_sealed(p[0]); }) == "CRD6004");
  ::close(p[0]);
  ::close(p[1]);
}

TEST_CASE("own state: the cordon directory holding a state directory is protected", "[own_state]") {
  CHECK(cordon_root_of("/root/.local/state/cordon/jobs") == "/root/.local/state/cordon");
  CHECK(cordon_root_of("/run/cordon/backends/") == "/run/cordon");
  CHECK(cordon_root_of("/srv/my-jobs") == "/srv/my-jobs");
  CHECK(cordon_root_of("/var/lib/cordon") == "/var/lib/cordon");
}
