// Dispatch: named and unnamed, satisfied and refused, with the refusal text asserted.
#include <catch2/catch.hpp>
#include <cordon/dispatch.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>

#include "runtime_test_support.hpp"

using namespace cordon;

namespace {

Requirements reqs() {
  return {{"env.grant", "the environment is granted, never inherited"},
          {"limit.memory", "limits.memory_mb = 512"},
          {"net.deny", "network.allow = false"}};
}

ProbeResult proving(std::vector<std::string> proven) {
  ProbeResult p;
  p.available = true;
  for (auto id : {"env.grant", "limit.memory", "net.deny"}) {
    bool yes = std::find(proven.begin(), proven.end(), id) != proven.end();
    p.proofs.push_back({id, yes, yes ? std::string("proof of ") + id : std::string("no ") + id});
  }
  return p;
}

Candidate probed(const std::string& name, std::vector<std::string> proven) {
  return Candidate{name, true, std::nullopt, proving(std::move(proven))};
}

Candidate remote(const std::string& name, std::vector<std::string> proven) {
  Candidate c = probed(name, std::move(proven));
  c.locality = Locality::remote;
  return c;
}

Candidate unavailable(const std::string& name, const std::string& reason) {
  ProbeResult p;
  p.reason = reason;
  return Candidate{name, true, std::nullopt, p};
}

const std::vector<std::string> kAll = {"env.grant", "limit.memory", "net.deny"};
const std::vector<std::string> kOrder = {"landlock", "docker"};  // as the shipped file has it

}  // namespace

TEST_CASE("dispatch: the order is prefer, then the configured order", "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {"docker", "ssh", "none", "docker"}, "p", kOrder};
  auto order = dispatch_order(req);
  CHECK(order.order == std::vector<std::string>{"docker", "ssh", "landlock"});
  REQUIRE(order.skipped.size() == 1);
  CHECK(order.skipped[0].first == "none");
  req.named = "e2b";
  CHECK(dispatch_order(req).order == std::vector<std::string>{"e2b"});
  // Dispatch names no backend of its own: without a configured order only prefer is tried.
  DispatchRequest bare{reqs(), std::nullopt, {"docker"}, "p"};
  CHECK(dispatch_order(bare).order == std::vector<std::string>{"docker"});
  CHECK(asked_for(req, "e2b"));
  CHECK(asked_for(req, "ssh"));
  CHECK_FALSE(asked_for(req, "landlock"));
}

TEST_CASE("dispatch: a configured order is honoured, whatever names it holds", "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {}, "p", {"mine", "docker", "landlock"}};
  CHECK(dispatch_order(req).order == std::vector<std::string>{"mine", "docker", "landlock"});
  auto d =
      decide(req, {probed("mine", kAll), probed("docker", kAll), probed("landlock", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "mine");
  d = decide(req, {probed("mine", {"env.grant"}), probed("docker", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "docker");
  // An empty order and no prefer: nothing to try, and the refusal says where to look.
  DispatchRequest empty{reqs(), std::nullopt, {}, "p"};
  d = decide(empty, {}, {});
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD1001");
  CHECK(d.refusal->message() ==
        "no backend to try for policy 'p': the policy prefers none and the configuration's "
        "[dispatch] order is empty");
}

TEST_CASE("dispatch: a local plugin of the order is chosen, a remote one only when asked for",
          "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {}, "p", {"faraway", "good"}};
  // The local one of the order is chosen; the remote one before it is passed over, unjudged.
  auto d = decide(req, {remote("faraway", kAll), probed("good", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "good");
  REQUIRE(d.passed_over.size() == 1);
  CHECK(describe(d.passed_over[0], 2) ==
        "  faraway: a remote backend, chosen only when named (--backend) or preferred "
        "(backend.prefer)");
  // Alone in the order, it is never chosen.
  req.order = {"faraway"};
  d = decide(req, {remote("faraway", kAll)}, {});
  CHECK_FALSE(d.chosen);
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD1001");
  // Preferred by the policy, or named, it is.
  req.prefer = {"faraway"};
  d = decide(req, {remote("faraway", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "faraway");
  req.prefer = {};
  req.named = "faraway";
  d = decide(req, {remote("faraway", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "faraway");
}

TEST_CASE("dispatch: unnamed, the first candidate that proves everything wins", "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {}, "standard", kOrder};
  auto d = decide(req, {probed("landlock", {"env.grant", "net.deny"}), probed("docker", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "docker");
  REQUIRE(d.passed_over.size() == 1);
  CHECK(d.passed_over[0].name == "landlock");
  CHECK(d.passed_over[0].reason == "cannot prove 1 requirement");
}

TEST_CASE("dispatch: remote and none backends are never chosen unasked", "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {}, "p", {"ssh", "none", "e2b"}};
  auto d = decide(req, {remote("ssh", kAll), probed("none", kAll), remote("e2b", kAll)}, {});
  CHECK_FALSE(d.chosen);
  REQUIRE(d.refusal);
  CHECK(dispatch_order(req).skipped.size() == 1);  // none, even from the order
  req.prefer = {"ssh"};
  d = decide(req, {remote("ssh", kAll)}, {});
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "ssh");
}

TEST_CASE("dispatch: unnamed refusal says why each candidate was passed over", "[dispatch]") {
  DispatchRequest req{reqs(), std::nullopt, {"none"}, "standard", kOrder};
  auto d = decide(
      req,
      {probed("landlock", {"env.grant", "net.deny"}),
       Candidate{"docker", true, Error(code::kPluginAbi, "plugin 'x' is old"), std::nullopt}},
      {});
  CHECK_FALSE(d.chosen);
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD1001");
  CHECK(d.refusal->message() ==
        "no backend proves every requirement of policy 'standard':\n"
        "  none: 'none' isolates nothing and runs only when named (--backend none)\n"
        "  landlock cannot prove:\n"
        "    limit.memory (limits.memory_mb = 512): no limit.memory\n"
        "  docker: unusable: plugin 'x' is old [CRD3003]");
}

TEST_CASE("dispatch: a backend that is not installed is named as such", "[dispatch]") {
  Candidate absent{"seatbelt", false, std::nullopt, std::nullopt};
  CHECK(judge(reqs(), absent).reason ==
        "not installed (no cordon-backend-seatbelt.so on the plugin path)");
  // Preferred by a policy shared with hosts that have it, it is passed over with that reason.
  DispatchRequest req{reqs(), std::nullopt, {"seatbelt"}, "p", kOrder};
  auto d = decide(req, {probed("landlock", kAll)}, {});
  REQUIRE(d.chosen);
  REQUIRE(d.passed_over.size() == 1);
  CHECK(describe(d.passed_over[0], 2) ==
        "  seatbelt: not installed (no cordon-backend-seatbelt.so on the plugin path)");
  req.named = "seatbelt";
  d = decide(req, {}, {"landlock"});
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD3010");
  CHECK(d.refusal->hint() == "cordon backends lists every backend found and where it searched");
}

TEST_CASE("dispatch: short of limits alone, the refusal shows the policy that drops them",
          "[dispatch][limits]") {
  DispatchRequest req{reqs(), std::nullopt, {}, "standard", kOrder};
  auto d = decide(req, {probed("landlock", {"env.grant", "net.deny"})}, {});
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD1001");
  CHECK(d.refusal->hint() ==
        "backend 'landlock' proves everything else; to run without the limit, write this to a "
        ".toml file and pass it with --policy:\n"
        "      version = 1\n"
        "      [policy]\n"
        "      extends = \"standard\"\n"
        "      [limits]\n"
        "      memory_mb = \"unlimited\"\n"
        "    or keep the limit: on a cgroup v2 host, run cordon in a delegated scope that it may "
        "divide (systemd-run --user --scope -p Delegate=yes cordon run ...)");
  // Named, the same; a policy of the user's own gets the line to add to it.
  req.named = "landlock";
  req.policy_name = "mine";
  d = decide(req, {probed("landlock", {"env.grant", "net.deny"})}, {});
  REQUIRE(d.refusal);
  CHECK(d.refusal->hint().rfind(
            "backend 'landlock' proves everything else; to run without the limit, write in the "
            "policy's [limits]:\n      memory_mb = \"unlimited\"\n",
            0) == 0);
  // Anything else missing too: dropping limits would not help, so no such hint.
  d = decide(req, {probed("landlock", {"env.grant"})}, {});
  REQUIRE(d.refusal);
  CHECK(d.refusal->hint() ==
        "cordon explain without --backend shows whether another backend proves them; otherwise "
        "relax the policy");
  // A limit no cgroup gives: no word of delegation.
  DispatchRequest files{
      {{"limit.files", "limits.max_open_files = 64"}}, std::nullopt, {}, "minimal", kOrder};
  ProbeResult none;
  none.available = true;
  none.proofs.push_back({"limit.files", false, "no"});
  d = decide(files, {Candidate{"landlock", true, std::nullopt, none}}, {});
  REQUIRE(d.refusal);
  CHECK(d.refusal->hint().find("max_open_files = \"unlimited\"") != std::string::npos);
  CHECK(d.refusal->hint().find("extends = \"minimal\"") != std::string::npos);
  CHECK(d.refusal->hint().find("systemd-run") == std::string::npos);
}

TEST_CASE("dispatch: a named backend must prove everything or is refused", "[dispatch]") {
  DispatchRequest req{reqs(), std::string("landlock"), {"docker"}, "standard"};
  SECTION("satisfied") {
    auto d = decide(req, {probed("landlock", kAll)}, {});
    REQUIRE(d.chosen);
    CHECK(*d.chosen == "landlock");
  }
  SECTION("unproven capabilities, each with its evidence") {
    auto d = decide(req, {probed("landlock", {"env.grant"})}, {});
    CHECK_FALSE(d.chosen);
    REQUIRE(d.refusal);
    CHECK(d.refusal->code() == "CRD1001");
    CHECK(d.refusal->message() ==
          "backend 'landlock' cannot prove 2 requirements of policy 'standard':\n"
          "  limit.memory (limits.memory_mb = 512): no limit.memory\n"
          "  net.deny (network.allow = false): no net.deny");
  }
  SECTION("not available here") {
    auto d = decide(req, {unavailable("landlock", "kernel without Landlock")}, {});
    REQUIRE(d.refusal);
    CHECK(d.refusal->code() == "CRD1004");
    CHECK(d.refusal->message() ==
          "backend 'landlock' is not available here: kernel without Landlock");
  }
  SECTION("its plugin was refused: that error, code kept") {
    auto d = decide(
        req, {Candidate{"landlock", true, Error(code::kPluginToolchain, "t"), std::nullopt}}, {});
    REQUIRE(d.refusal);
    CHECK(d.refusal->code() == "CRD3004");
  }
  SECTION("no such backend") {
    auto d =
        decide(req, {Candidate{"landlock", false, std::nullopt, std::nullopt}}, {"docker", "none"});
    REQUIRE(d.refusal);
    CHECK(d.refusal->code() == "CRD3010");
    CHECK(d.refusal->message() == "no backend named 'landlock' (known: docker, none)");
  }
}

TEST_CASE("dispatch: the standard policy is refused on none with the none backend's evidence",
          "[dispatch][none]") {
  Registry r(cordon::test::isolated({}));
  auto requirements = derive_requirements(load_preset("standard"));
  DispatchRequest req{requirements, std::string("none"), {}, "standard"};
  auto d = choose_backend(r, req);
  CHECK_FALSE(d.chosen);
  REQUIRE(d.refusal);
  CHECK(d.refusal->code() == "CRD1001");
  const std::string& m = d.refusal->message();
  CHECK(cordon::test::has(m, "backend 'none' cannot prove "));
  CHECK(cordon::test::has(m,
                          "\n  net.deny (network.allow = false): a plain child process "
                          "shares the host's network"));
  CHECK(cordon::test::has(m,
                          "\n  fs.write.confine (filesystem.write (1 path)): a plain child "
                          "process writes wherever the invoking user can"));
  CHECK(cordon::test::has(m,
                          "\n  limit.memory (limits.memory_mb = 512): RLIMIT_AS bounds each "
                          "process, not the sandbox's total"));
  // What none does prove is not listed as missing.
  CHECK_FALSE(cordon::test::has(m, "env.grant"));
  CHECK_FALSE(cordon::test::has(m, "limit.files"));
}

TEST_CASE("dispatch: a policy the fixture backend satisfies is dispatched to it, unnamed",
          "[dispatch][plugin]") {
  Registry r(cordon::test::isolated({cordon::test::fixture_dir("good")}));
  auto requirements = derive_requirements(load_preset("standard"));
  DispatchRequest req{requirements, std::nullopt, {"good"}, "standard"};
  std::vector<Candidate> seen;
  auto d = choose_backend(r, req, false, &seen);
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "good");
  REQUIRE(seen.size() == 1);  // stopped at the first that proves everything
  req.prefer = {};
  d = choose_backend(r, req, true, &seen);
  CHECK_FALSE(d.chosen);  // "good" is not in the (empty) configured order
  CHECK(seen.empty());
  req.order = {"good"};  // a configured order is honoured
  d = choose_backend(r, req, true, &seen);
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "good");
}

TEST_CASE("dispatch: a remote fixture plugin of the order is probed only when asked for",
          "[dispatch][plugin]") {
  Registry r(cordon::test::isolated(
      {cordon::test::fixture_dir("remote"), cordon::test::fixture_dir("good")}));
  auto requirements = derive_requirements(load_preset("standard"));
  DispatchRequest req{requirements, std::nullopt, {}, "standard", {"faraway", "good"}};
  std::vector<Candidate> seen;
  auto d = choose_backend(r, req, false, &seen);
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "good");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].locality == Locality::remote);  // from its info record
  CHECK_FALSE(seen[0].probe);                   // not contacted
  CHECK(seen[1].locality == Locality::local);
  req.order = {"faraway"};
  d = choose_backend(r, req, false, &seen);
  CHECK_FALSE(d.chosen);
  req.prefer = {"faraway"};
  d = choose_backend(r, req, false, &seen);
  REQUIRE(d.chosen);
  CHECK(*d.chosen == "faraway");
}
