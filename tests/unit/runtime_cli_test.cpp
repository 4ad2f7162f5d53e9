// The runtime verbs of the real `cordon` binary: run, backends, explain.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <boost/json/parse.hpp>
#include <fstream>

#include "runtime_test_support.hpp"

using cordon::test::capture;
using cordon::test::fixture_dir;
using cordon::test::has;

namespace {

const std::string kCli = CORDON_CLI;

std::string good_dir() { return "--plugin-dir '" + fixture_dir("good").string() + "' "; }

// "--config FILE" allowing only the fixture and none, so that no backend of the build tree
// (landlock, when it works here) can take an unnamed run: the refusal is deterministic.
struct OnlyFixtures {
  std::string path = "/tmp/cordon-cli-config-" + std::to_string(::getpid()) + ".toml";
  OnlyFixtures() { std::ofstream(path) << "[plugins]\nallow = [\"good\", \"none\"]\n"; }
  ~OnlyFixtures() { std::filesystem::remove(path); }
  std::string option() const { return "--config " + path + " "; }
};

}  // namespace

TEST_CASE("cli run: a named backend runs the command and its status is cordon's",
          "[cli][runtime]") {
  auto ok = capture(kCli + " run --backend good " + good_dir() + "-- hello world");
  CHECK(ok.status == 0);
  CHECK(has(ok.out, "argv: hello world\n"));
  auto failing = capture(kCli + " run --backend good " + good_dir() + "-- x fail");
  CHECK(failing.status == 3);
}

TEST_CASE("cli run: --json prints one object and nothing else", "[cli][runtime]") {
  auto r = capture(kCli + " run --json --backend good " + good_dir() + "-- $(printf 'a\\377b')");
  CHECK(r.status == 0);
  auto v = boost::json::parse(r.out).as_object();
  CHECK(v.at("exit_code").as_int64() == 0);
  CHECK(v.at("signal").is_null());
  CHECK(v.at("timed_out").as_bool() == false);
  CHECK(v.at("backend").as_string() == "good");
  CHECK(v.at("stdout_base64").as_bool());  // the output is not UTF-8
  CHECK(v.at("stderr").as_string() == "");
  CHECK(v.at("error").is_null());
  CHECK(v.at("report").as_array().size() > 5);
  for (auto key : {"stdout", "stdout_truncated", "stderr_truncated", "duration_ms", "notes"})
    CHECK(v.contains(key));
  // The fixture measures nothing: every figure is absent, none is a made-up 0.
  CHECK(v.at("resources").as_object().empty());
}

TEST_CASE("cli run: refusals exit 125 with the code on stderr, and in --json", "[cli][runtime]") {
  auto plain = capture(kCli + " run --backend none -- /bin/echo ran 2>&1");
  CHECK(plain.status == 125);
  CHECK_FALSE(has(plain.out, "ran\n"));
  CHECK(has(plain.out, "error[CRD1001]: backend 'none' cannot prove "));
  auto json = capture(kCli + " run --json --backend nope -- /bin/echo ran");
  CHECK(json.status == 125);
  auto v = boost::json::parse(json.out).as_object();
  CHECK(v.at("error").as_object().at("code").as_string() == "CRD3010");
  CHECK(v.at("exit_code").is_null());
  auto timeout = capture(kCli + " run --timeout soon -- /bin/true 2>&1");
  CHECK(timeout.status == 125);
  CHECK(has(timeout.out, "error[CRD4007]: bad --timeout 'soon'"));
  OnlyFixtures only;
  auto unnamed = capture(kCli + " run " + only.option() + "-- /bin/true 2>&1");
  CHECK(unnamed.status == 125);
  CHECK(has(unnamed.out, "error[CRD1001]: no backend proves every requirement"));
}

TEST_CASE("cli run: the configuration's allow list and a bad configuration", "[cli][runtime]") {
  char dir[] = "/tmp/cordon-cli-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  std::string cfg = std::string(dir) + "/config.toml";
  std::ofstream(cfg) << "[plugins]\nallow = [\"landlock\"]\n";
  auto refused =
      capture(kCli + " run --config " + cfg + " --backend good " + good_dir() + "-- hi 2>&1");
  CHECK(refused.status == 125);
  CHECK(has(refused.out, "error[CRD3008]: plugin '"));
  std::ofstream(cfg) << "[plugins]\nallow = \"landlock\"\n";
  auto bad = capture(kCli + " run --config " + cfg + " --backend good -- hi 2>&1");
  CHECK(bad.status == 125);
  CHECK(has(bad.out, "error[CRD2004]: " + cfg + ":2:9: 'plugins.allow' must be"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli backends: lists plugins, proofs and diagnostics", "[cli][runtime]") {
  auto r = capture(kCli + " backends --json " + good_dir() + "--plugin-dir '" +
                   fixture_dir("badabi").string() + "'");
  CHECK(r.status == 0);
  auto v = boost::json::parse(r.out).as_object();
  std::map<std::string, boost::json::object> by_name;
  for (const auto& b : v.at("backends").as_array())
    by_name[std::string(b.at("name").as_string())] = b.as_object();
  REQUIRE(by_name.count("good"));
  REQUIRE(by_name.count("none"));
  REQUIRE(by_name.count("badabi"));
  CHECK(by_name["good"].at("available").as_bool());
  CHECK(by_name["good"].at("version").as_string() == "1.0");
  CHECK(by_name["none"].at("builtin").as_bool());
  CHECK(by_name["badabi"].at("error").as_object().at("code").as_string() == "CRD3003");
  bool net_deny_listed = false;
  for (const auto& p : by_name["none"].at("proofs").as_array())
    if (p.at("capability").as_string() == "net.deny")
      net_deny_listed = !p.at("proven").as_bool() && !p.at("evidence").as_string().empty();
  CHECK(net_deny_listed);
  REQUIRE(v.at("diagnostics").as_array().size() == 1);
  CHECK(v.at("diagnostics").as_array()[0].at("code").as_string() == "CRD3003");
  auto text = capture(kCli + " backends " + good_dir());
  CHECK(has(text.out, "good 1.0  " + fixture_dir("good").string() + "/cordon-backend-good.so\n"));
  CHECK(has(text.out, "  [ ] net.deny"));
}

TEST_CASE("cli explain: the backend that would run, and why the others would not",
          "[cli][runtime]") {
  auto named = capture(kCli + " explain --backend good " + good_dir());
  CHECK(named.status == 0);
  CHECK(has(named.out, "would run on: good\n"));
  CHECK(has(named.out, "  net.deny               network.allow = false\n"));
  OnlyFixtures only;
  auto refused = capture(kCli + " explain --json " + only.option() + good_dir());
  CHECK(refused.status == 125);
  auto v = boost::json::parse(refused.out).as_object();
  CHECK(v.at("backend").is_null());
  CHECK(v.at("refusal").as_object().at("code").as_string() == "CRD1001");
  CHECK(v.at("candidates").as_array().size() == 2);  // Linux: landlock, docker
  CHECK(v.at("policy").as_string() == "standard");
}

TEST_CASE("cli gc: every backend's collection, or the one named", "[cli][runtime][gc]") {
  // The built-in none and the fixture leave nothing behind: nothing to remove, status 0.
  OnlyFixtures only;
  auto all = capture(kCli + " gc " + good_dir() + only.option() + "2>&1");
  CHECK(all.status == 0);
  CHECK(all.out == "nothing to remove\n");
  auto named = capture(kCli + " gc --backend good " + good_dir() + only.option() + "2>&1");
  CHECK(named.status == 0);
  CHECK(named.out == "nothing to remove\n");
  // A backend that does not exist is an error, and nothing is collected.
  auto absent = capture(kCli + " gc --backend nope 2>&1");
  CHECK(absent.status == 125);
  CHECK(has(absent.out, "error[CRD3010]: no backend named 'nope'"));
  CHECK_FALSE(has(absent.out, "nothing to remove"));
}
