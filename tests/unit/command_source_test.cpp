// Tests of shell modes, command strings and the blocked-command check on resolved programs.
#include <catch2/catch.hpp>
#include <cordon/command_source.hpp>

#include <unistd.h>

#include <filesystem>

#include "error_code.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
namespace fs = std::filesystem;

namespace {

Policy with_shell(ShellMode m) {
  Policy p;
  p.process.shell = m;
  return p;
}

}  // namespace

TEST_CASE("command_source: CORDON_SHELL makes the mode stricter, never looser", "[shell]") {
  CHECK(effective_shell_mode(with_shell(ShellMode::unsafe), nullptr) == ShellMode::unsafe);
  CHECK(effective_shell_mode(with_shell(ShellMode::unsafe), "sandboxed") == ShellMode::sandboxed);
  CHECK(effective_shell_mode(with_shell(ShellMode::unsafe), "off") == ShellMode::off);
  CHECK(effective_shell_mode(with_shell(ShellMode::sandboxed), "0") == ShellMode::off);
  // Looser asks are ignored: the policy wins.
  CHECK(effective_shell_mode(with_shell(ShellMode::off), "unsafe") == ShellMode::off);
  CHECK(effective_shell_mode(with_shell(ShellMode::off), "sandboxed") == ShellMode::off);
  CHECK(effective_shell_mode(with_shell(ShellMode::sandboxed), "raw") == ShellMode::sandboxed);
  CHECK(error_code_of([] { effective_shell_mode(with_shell(ShellMode::off), "maybe"); }) ==
        "CRD4007");
}

TEST_CASE("command_source: shell modes and their aliases", "[shell]") {
  for (auto s : {"1", "true", "yes", "sandbox", "native", "sandboxed"})
    CHECK(parse_shell_mode(s) == ShellMode::sandboxed);
  for (auto s : {"raw", "host", "unsafe"}) CHECK(parse_shell_mode(s) == ShellMode::unsafe);
  for (auto s : {"", "0", "false", "no", "none", "off"})
    CHECK(parse_shell_mode(s) == ShellMode::off);
  for (auto s : {"on", "shell", "bash", "2"}) CHECK_FALSE(parse_shell_mode(s));
}

TEST_CASE("command_source: a command string under each mode", "[shell]") {
  CommandInput in{{}, std::string("echo x > f")};
  CHECK(error_code_of([&] { prepare_command(in, ShellMode::off); }) == "CRD4001");

  auto sandboxed = prepare_command(in, ShellMode::sandboxed);
  CHECK(sandboxed.argv == std::vector<std::string>{"/bin/sh", "-c", "echo x > f"});
  CHECK(sandboxed.shell_sandboxed);
  CHECK_FALSE(sandboxed.shell_unsafe);
  CHECK(requires_capability(sandboxed.extra_requirements, "fs.write.confine"));
  CHECK(requires_capability(sandboxed.extra_requirements, "proc.isolate"));

  auto unsafe = prepare_command(in, ShellMode::unsafe);
  CHECK(unsafe.argv == std::vector<std::string>{"/bin/sh", "-c", "echo x > f"});
  CHECK(unsafe.shell_unsafe);
  CHECK(unsafe.extra_requirements.empty());
  CHECK_FALSE(unsafe.notes.empty());

  CommandInput plain{{}, std::string("git status --short")};
  CHECK(prepare_command(plain, ShellMode::off).argv ==
        std::vector<std::string>{"git", "status", "--short"});
}

TEST_CASE("command_source: an argv is never given to a shell", "[shell]") {
  CommandInput in{{trusted("echo"), trusted("x > f")}, std::nullopt};
  for (auto m : {ShellMode::off, ShellMode::sandboxed, ShellMode::unsafe}) {
    auto p = prepare_command(in, m);
    CHECK(p.argv == std::vector<std::string>{"echo", "x > f"});
    CHECK_FALSE(p.shell_unsafe);
  }
  CommandInput bad{{trusted("git"), untrusted("--upload-pack=x")}, std::nullopt};
  CHECK(error_code_of([&] { prepare_command(bad, ShellMode::off); }) == "CRD4002");
}

TEST_CASE("command_source: blocked commands are matched after PATH and symlinks", "[shell]") {
  char tmpl[] = "/tmp/cordon-blocked-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::create_directories(dir / "bin");
  fs::copy_file("/bin/true", dir / "bin" / "forbidden");
  fs::create_symlink(dir / "bin" / "forbidden", dir / "innocent");
  fs::copy_file("/bin/true", dir / "bin" / "fine");
  Policy p;
  p.process.blocked_commands = {"forbidden"};
  std::string path = (dir / "bin").string() + ":/usr/bin:/bin";
  auto check = [&](std::vector<std::string> argv) {
    return error_code_of([&] { check_blocked_commands(argv, p, path, dir.string()); });
  };
  CHECK(check({"forbidden"}) == "CRD4005");                           // by PATH lookup
  CHECK(check({(dir / "bin" / "forbidden").string()}) == "CRD4005");  // by path
  CHECK(check({"./innocent"}) == "CRD4005");                          // through a symlink
  CHECK(check({"sh", "-c", "echo hi; forbidden --now"}) == "CRD4005");
  CHECK(check({"fine"}) == "");
  CHECK(check({"./innocent-not-there"}) == "");
  CHECK(check({"sh", "-c", "echo forbidden"}) == "");  // an argument, not a program
  // A variable assignment before the program is not the program.
  CHECK(check({"sh", "-c", "FOO=1 BAR=x forbidden"}) == "CRD4005");
  CHECK(check({"sh", "-c", "echo ok; A_1=2 forbidden"}) == "CRD4005");
  CHECK(check({"sh", "-c", "FOO=1 fine forbidden"}) == "");
  p.process.blocked_commands = {(dir / "bin" / "forbidden").string()};
  CHECK(check({"innocent"}) == "");  // not on PATH: exec would not find it either
  CHECK(check({"./innocent"}) == "CRD4005");
  fs::remove_all(dir);
}
