// The command's output on a terminal: escape sequences shown as text (not obeyed) unless --raw;
// pipes get the bytes exactly. A pseudo-terminal comes from util-linux's `script`.
#include <unistd.h>

#include <fstream>

#include "cli.hpp"

using namespace itest;

namespace {

// A policy any user can run: no cgroup limit.
std::string open_policy(Scratch& s) {
  std::string file = (s / "terminal.toml").string();
  std::ofstream(file) << "version = 1\n[policy]\nname = \"terminal-test\"\n";
  return file;
}

// `cordon run ... -- printf OSC-52` with cordon's stdout on a pseudo-terminal.
escape::Exit on_terminal(Scratch& s, const std::string& policy, const std::string& flags) {
  std::string command = std::string(CORDON_CLI) + " run " + flags + " --policy " + policy +
                        " --workspace " + s.dir.string() +
                        " -- printf '\\033]52;c;b3duZWQ=\\007\\033[2Jdone\\n'";
  escape::SpawnOptions o;
  o.argv = {"/usr/bin/script", "-qec", command, "/dev/null"};
  return escape::run_process(o);
}

}  // namespace

TEST_CASE("terminal: a command's escape sequences are shown as text on a terminal, unless --raw",
          "[terminal][cli]") {
  Scratch s;
  auto policy = open_policy(s);
  if (!landlock_usable(policy)) return;
  if (::access("/usr/bin/script", X_OK) != 0) {
    if (in_ci()) FAIL("no /usr/bin/script (util-linux's bsdutils) for a pseudo-terminal");
    WARN("skipped: no /usr/bin/script for a pseudo-terminal");
    return;
  }
  auto shown = on_terminal(s, policy, "");
  INFO(shown.out << shown.err);
  CHECK(shown.status == 0);
  CHECK(shown.out.find("\\x1b]52;c;b3duZWQ=\\x07\\x1b[2Jdone") != std::string::npos);
  CHECK(shown.out.find('\x1b') == std::string::npos);
  auto raw = on_terminal(s, policy, "--raw");
  INFO(raw.out);
  CHECK(raw.out.find("\x1b]52;c;b3duZWQ=\x07") != std::string::npos);
  // Into a pipe, the bytes are the command's, exactly.
  auto piped = run_cli({"run", "--policy", policy, "--workspace", s.dir.string(), "--", "printf",
                        "\\033]52;c;b3duZWQ=\\007"});
  CHECK(piped.out == "\x1b]52;c;b3duZWQ=\x07");
}
