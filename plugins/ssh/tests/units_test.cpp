// Pure parts: quoting, the remote script, the settings.
#include <cordon/sdk/error.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "remote_line.hpp"
#include "settings.hpp"

using namespace cordon;
using namespace cordon::ssh;

namespace {

// What `sh -c LINE` prints on this machine: the login shell's part, run locally.
std::string run_locally(const std::string& line) {
  std::string out;
  FILE* p = ::popen(("sh -c " + sh_quote(line)).c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

const std::string kNasty = "a b;$(echo pwned)`id`'\"\\\n\t*?~!#&|<>{}\xff\xfe end";

}  // namespace

TEST_CASE("ssh quoting: every value is one single-quoted word", "[ssh]") {
  CHECK(sh_quote("") == "''");
  CHECK(sh_quote("plain") == "'plain'");
  CHECK(sh_quote("it's") == "'it'\\''s'");
  CHECK(sh_quote("$(id);`x`") == "'$(id);`x`'");
  try {
    sh_quote(std::string("a\0b", 3));
    FAIL("a NUL byte was quoted");
  } catch (const Error& e) {
    CHECK(std::string(e.code()) == code::kControlChar);
  }
}

TEST_CASE("ssh quoting: the remote script gives the program its arguments byte for byte", "[ssh]") {
  RemoteRun run;
  run.workspace = "/";
  run.env = {{"PATH", "/usr/bin:/bin"}};
  run.argv = {"printf", "%s|", kNasty, "-n", "--", "x=y", ""};
  std::string out = run_locally(remote_line(run, {}));
  REQUIRE(out.rfind(std::string(kPidMarker), 0) == 0);
  CHECK(out.substr(out.find('\n') + 1) == kNasty + "|-n|--|x=y||");
  // The allowed twin of "nothing is run": an argument that is a command stays an argument.
  run.argv = {"printf", "%s", "; touch /tmp/cordon-ssh-quoting-pwned"};
  run_locally(remote_line(run, {}));
  CHECK(::access("/tmp/cordon-ssh-quoting-pwned", F_OK) != 0);
}

TEST_CASE("ssh quoting: a program name that starts with '-' is refused, a path to it is not",
          "[ssh]") {
  RemoteRun run;
  run.workspace = "/";
  run.env = {{"PATH", "/usr/bin:/bin"}};
  run.argv = {"-l"};
  try {
    remote_line(run, {});
    FAIL("a program named -l was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.code()) == code::kFlagInjection);
  }
  run.argv = {"/usr/bin/printf", "-l"};
  CHECK(run_locally(remote_line(run, {})).find("-l") != std::string::npos);
}

TEST_CASE("ssh quoting: the environment is exactly the granted one", "[ssh]") {
  RemoteRun run;
  run.workspace = "/";
  run.env = {{"PATH", "/usr/bin:/bin"}, {"ONLY", "this"}};
  run.home_from_login = false;
  run.argv = {"env"};
  ::setenv("CORDON_SSH_LEAK", "1", 1);
  std::string out = run_locally(remote_line(run, {}));
  std::string env = out.substr(out.find('\n') + 1);
  CHECK(env.size() == std::string("ONLY=this\nPATH=/usr/bin:/bin\n").size());
  CHECK(env.find("ONLY=this\n") != std::string::npos);
  CHECK(env.find("PATH=/usr/bin:/bin\n") != std::string::npos);
}

TEST_CASE("ssh script: a workspace that does not exist fails before the command (125)", "[ssh]") {
  RemoteRun run;
  run.workspace = "/nonexistent/cordon-ssh";
  run.argv = {"true"};
  int status = std::system(("sh -c " + sh_quote(remote_line(run, {})) + " 2>/dev/null").c_str());
  CHECK(WEXITSTATUS(status) == kSetupFailed);
  run.workspace = "/";
  status = std::system(("sh -c " + sh_quote(remote_line(run, {})) + " >/dev/null").c_str());
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("ssh settings: every mistake is named, a valid table passes", "[ssh]") {
  boost::json::object good{{"host", "h"}, {"identity", "/k"}, {"port", 2222}};
  CHECK(validate(good).empty());
  boost::json::object bad{{"hots", "h"},
                          {"port", 70000},
                          {"identity", "key"},
                          {"known_hosts", "rel"},
                          {"workspace", "w"}};
  auto errors = validate(bad);
  std::string all;
  for (const auto& e : errors) all += e.message() + "\n";
  CHECK(all.find("unknown setting 'backends.ssh.hots' (did you mean 'hosts'?)") !=
        std::string::npos);
  CHECK(all.find("backends.ssh.host' is missing") != std::string::npos);
  CHECK(all.find("backends.ssh.port") != std::string::npos);
  CHECK(all.find("backends.ssh.identity") != std::string::npos);
  CHECK(all.find("backends.ssh.known_hosts") != std::string::npos);
  CHECK(all.find("backends.ssh.workspace") != std::string::npos);
  Target t = target_of(good, "me", "/home/me");
  CHECK(t.user == "me");
  CHECK(t.known_hosts == "/home/me/.ssh/known_hosts");
  CHECK(t.port == 2222);
}

TEST_CASE("ssh settings: a fleet is hosts = [...], each host with its own port or the shared one",
          "[ssh]") {
  boost::json::object fleet{{"hosts", boost::json::array{"a", "b:2200", "[fe80::1]:22", "a"}},
                            {"identity", "/k"},
                            {"port", 2222},
                            {"cordon", "off"}};
  CHECK(validate(fleet).empty());
  auto ts = targets_of(fleet, "me", "/home/me");
  REQUIRE(ts.size() == 3);  // the repeated "a" once
  CHECK(ts[0].host == "a");
  CHECK(ts[0].port == 2222);
  CHECK(ts[1].port == 2200);
  CHECK(ts[2].host == "fe80::1");
  CHECK(ts[2].port == 22);
  CHECK(ts[1].cordon == "off");

  auto errors_of = [](boost::json::object s) {
    std::string all;
    for (const auto& e : validate(s)) all += e.message() + "\n";
    return all;
  };
  CHECK(errors_of({{"hosts", boost::json::array{}}, {"identity", "/k"}}).find("non-empty") !=
        std::string::npos);
  CHECK(errors_of({{"hosts", boost::json::array{"a:0", "b:x", "", 3}}, {"identity", "/k"}})
            .find("entry 4") != std::string::npos);
  CHECK(errors_of({{"hosts", boost::json::array{"a:70000"}}, {"identity", "/k"}}).find("entry 1") !=
        std::string::npos);
  CHECK(errors_of({{"host", "a"}, {"hosts", boost::json::array{"b"}}, {"identity", "/k"}})
            .find("both set") != std::string::npos);
  CHECK(errors_of({{"host", "a"}, {"identity", "/k"}, {"cordon", "bin/cordon"}})
            .find("backends.ssh.cordon") != std::string::npos);
  CHECK(targets_of({{"host", "h"}, {"identity", "/k"}}, "me", "/home/me").size() == 1);
}
