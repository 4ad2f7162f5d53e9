// run_invocation end to end through the real registry: environment, settings, deadline,
// refusals — with the fixture plugin (which executes nothing) and the none backend.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>

#include "runtime_test_support.hpp"

using namespace cordon;
using cordon::test::Collect;
using cordon::test::fixture_dir;
using cordon::test::has;
using cordon::test::isolated;

namespace {

Invocation invocation(std::vector<std::string> argv, std::optional<std::string> backend) {
  Invocation inv;
  inv.policy = load_preset("standard");
  inv.argv = std::move(argv);
  inv.workspace = "/tmp";
  inv.backend = std::move(backend);
  inv.caller_env = {{"CI", "true"}, {"SECRET", "x"}, {"HOME", "/root"}};
  inv.host_home = "/root";
  return inv;
}

}  // namespace

TEST_CASE("runner: the granted environment is baseline, then pass, then set", "[runner]") {
  Policy p;
  p.env.pass = {"CI", "MISSING", "LANG"};
  p.env.set = {{"TZ", "Europe/Paris"}, {"HOME", "/evil"}};
  auto env = granted_environment(p, {{"CI", "1"}, {"LANG", "de_DE.UTF-8"}, {"SECRET", "s"}});
  CHECK(env == std::map<std::string, std::string>{{"CI", "1"},
                                                  {"LANG", "de_DE.UTF-8"},
                                                  {"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                                  {"TZ", "Europe/Paris"}});
}

TEST_CASE("runner: backend settings merge the configuration and the policy", "[runner]") {
  Policy p;
  p.backends["docker"] = boost::json::object{{"image", "from-policy"}};
  boost::json::object config{{"docker", boost::json::object{{"image", "cfg"}, {"socket", "/s"}}}};
  auto s = backend_settings(p, config, "docker");
  CHECK(s.at("image").as_string() == "from-policy");
  CHECK(s.at("socket").as_string() == "/s");
  CHECK(backend_settings(p, config, "landlock").empty());
}

TEST_CASE("runner: a named backend that proves the policy runs the plan", "[runner][plugin]") {
  Registry r(isolated({fixture_dir("good")}));
  auto inv = invocation({"hello", "world"}, "good");
  inv.policy.env.pass = {"CI"};
  inv.timeout = std::chrono::seconds(5);
  Collect out;
  auto o = run_invocation(r, inv, out);
  REQUIRE_FALSE(o.result.error);
  CHECK(o.backend == "good");
  CHECK(o.result.exit_code == 0);
  CHECK(
      out.out.starts_with("argv: hello world\n"
                          "env: CI=true LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin TZ=UTC\n"
                          "settings: 0\n"
                          "deadline: yes\n"
                          "protected: "));
  CHECK(o.result.report.size() == o.requirements.size());
  CHECK(requires_capability(o.requirements, "limit.timeout"));
}

TEST_CASE("runner: invalid backend settings are refused with CRD2015", "[runner][plugin]") {
  Registry r(isolated({fixture_dir("good")}));
  auto inv = invocation({"x"}, "good");
  inv.policy.backends["good"] = boost::json::object{{"greeting", "hi"}, {"colour", 1}};
  Collect out;
  auto o = run_invocation(r, inv, out);
  REQUIRE(o.result.error);
  CHECK(o.result.error->code() == "CRD2015");
  CHECK(o.result.error->message() ==
        "backends.good.colour: expected 'greeting' or 'target' as a string");
  CHECK(o.result.cli_status() == 125);
  CHECK(out.out.empty());
  inv.policy.backends["good"] = boost::json::object{{"greeting", "hi"}};
  o = run_invocation(r, inv, out);
  CHECK_FALSE(o.result.error);
  CHECK(has(out.out, "settings: 1\n"));
}

TEST_CASE("runner: a backend proves the target its settings choose, not its default one",
          "[runner][plugin]") {
  Registry r(isolated({fixture_dir("good")}));
  auto inv = invocation({"x"}, "good");
  Collect out;
  SECTION("no target: the default probe proves the standard policy") {
    auto o = run_invocation(r, inv, out);
    CHECK_FALSE(o.result.error);
    CHECK(has(out.out, "argv: x\n"));
  }
  SECTION("a target without memory limits: refused, with that target's evidence") {
    inv.policy.backends["good"] = boost::json::object{{"target", "weak"}};
    auto o = run_invocation(r, inv, out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD1001");
    CHECK(has(o.result.error->message(),
              "limit.memory (limits.memory_mb = 512): fixture target 'weak': no memory limit"));
    CHECK(out.out.empty());
  }
  SECTION("a target named by the configuration counts the same") {
    inv.config_backends = boost::json::object{{"good", boost::json::object{{"target", "weak"}}}};
    auto o = run_invocation(r, inv, out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD1001");
    CHECK(out.out.empty());
  }
  SECTION("a target that does not answer: refused in the backend's own words") {
    inv.policy.backends["good"] = boost::json::object{{"target", "down"}};
    auto o = run_invocation(r, inv, out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD1005");
    CHECK(o.result.error->message() == "nothing answered at fixture target 'down'");
    CHECK(o.result.error->hint() == "start it");
    CHECK(out.out.empty());
  }
  SECTION("Backend::run checks the plan's own settings, whoever dispatched it") {
    Plan plan;
    plan.argv = {"x"};
    plan.policy = inv.policy;
    plan.requirements = derive_requirements(inv.policy);
    plan.settings = boost::json::object{{"target", "weak"}};
    auto result = r.backend("good")->run(plan, out);
    REQUIRE(result.error);
    CHECK(result.error->code() == "CRD1001");
    plan.settings = boost::json::object{{"target", "down"}};
    result = r.backend("good")->run(plan, out);
    REQUIRE(result.error);
    CHECK(result.error->code() == "CRD1005");
    plan.settings = {};
    CHECK_FALSE(r.backend("good")->run(plan, out).error);
  }
}

TEST_CASE("runner: a named backend's settings are checked before it is probed for them",
          "[runner][plugin]") {
  // The throwprobe fixture's probe fails (CRD3006): its settings mistake is reported first.
  Registry r(isolated({fixture_dir("throwprobe")}));
  auto inv = invocation({"x"}, "throwprobe");
  inv.policy.backends["throwprobe"] = boost::json::object{{"colour", "red"}};
  Collect out;
  auto o = run_invocation(r, inv, out);
  REQUIRE(o.result.error);
  CHECK(o.result.error->code() == "CRD2015");
  inv.policy.backends["throwprobe"] = boost::json::object{{"greeting", "hi"}};
  o = run_invocation(r, inv, out);
  REQUIRE(o.result.error);
  CHECK(o.result.error->code() == "CRD3006");
  CHECK(out.out.empty());
}

TEST_CASE("runner: refusals run nothing and exit 125", "[runner]") {
  Registry r(isolated({fixture_dir("good")}));
  Collect out;
  SECTION("the none backend cannot prove the standard policy") {
    auto o = run_invocation(r, invocation({"/bin/echo", "ran"}, "none"), out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD1001");
    CHECK(o.result.cli_status() == 125);
  }
  SECTION("an unknown backend lists the known ones") {
    auto o = run_invocation(r, invocation({"/bin/echo"}, "nope"), out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD3010");
    CHECK(o.result.error->message() == "no backend named 'nope' (known: good, none)");
  }
  SECTION("a workspace that does not exist") {
    auto inv = invocation({"x"}, "good");
    inv.workspace = "/nonexistent/ws";
    auto o = run_invocation(r, inv, out);
    REQUIRE(o.result.error);
    CHECK(o.result.error->code() == "CRD4007");
  }
  CHECK(out.out.empty());
}

TEST_CASE("runner: every derived policy is refused on none (writes are always confined)",
          "[runner][none]") {
  Registry r(isolated({}));
  auto inv = invocation({"/bin/sh", "-c", "echo $CI; ulimit -n"}, "none");
  Collect out;
  // derive_requirements always asks for fs.write.confine, which none cannot prove: refused.
  auto refused = run_invocation(r, inv, out);
  REQUIRE(refused.result.error);
  CHECK(has(refused.result.error->message(), "fs.write.confine"));
  CHECK(out.out.empty());
}

TEST_CASE("runner: the caller's timeout shortens the policy's, a longer one is refused",
          "[runner][plugin][timeout]") {
  Registry r(isolated({fixture_dir("good")}));
  auto inv = invocation({"x"}, "good");
  inv.policy = load_preset("strict");  // limits.timeout = 30s
  inv.timeout = std::chrono::seconds(40);
  Collect out;
  auto o = run_invocation(r, inv, out);
  REQUIRE(o.result.error);
  CHECK(o.result.error->code() == "CRD4007");
  CHECK(has(o.result.error->message(), "'40s' is longer than limits.timeout (30s)"));
  CHECK(out.out.empty());  // nothing ran
  inv.timeout = std::chrono::seconds(10);
  o = run_invocation(r, inv, out);
  CHECK_FALSE(o.result.error);
  CHECK(has(out.out, "deadline: yes\n"));
}

TEST_CASE("runner: an advisory clause is noted in the result, never refused",
          "[runner][plugin][imports]") {
  Registry r(isolated({fixture_dir("good")}));
  auto inv = invocation({"x"}, "good");
  Collect out;
  auto plain = run_invocation(r, inv, out);
  REQUIRE_FALSE(plain.result.error);
  for (const auto& n : plain.result.notes) CHECK_FALSE(has(n, "blocked_imports"));
  inv.policy.process.blocked_imports = {"subprocess"};
  auto o = run_invocation(r, inv, out);
  REQUIRE_FALSE(o.result.error);
  CHECK(o.requirements == plain.requirements);
  bool noted = false;
  for (const auto& n : o.result.notes)
    noted = noted || n == "process.blocked_imports (1 module) is advisory, not enforced: no "
                          "kernel can stop an import; cordon scan --policy reports them in a "
                          "script";
  CHECK(noted);
}
