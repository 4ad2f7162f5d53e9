// Pure parts of the remote-cordon path: the request, the framed channel output, the result.
#include <cordon/policy_loader.hpp>
#include <cordon/request.hpp>
#include <cordon/sdk/frames.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "backend_test_util.hpp"
#include "remote_cordon.hpp"

using namespace cordon;
using namespace cordon::ssh;
namespace json = boost::json;

namespace {

Plan plan_for(const std::string& workspace, const std::string& home) {
  Policy p = load_preset("standard");
  p.filesystem.read.push_back("{workspace}/data");
  p.filesystem.blocked.push_back("/etc/hosts");
  p.env.pass = {"CI", "TOKEN"};
  p = resolve_paths(std::move(p), PathContext{workspace, home});
  Plan plan;
  plan.policy = p;
  plan.requirements = derive_requirements(p);
  plan.workspace = workspace;
  plan.argv = {"printf", "%s", std::string("\xff\xfe", 2)};
  plan.env = {{"PATH", "/usr/bin:/bin"}, {"CI", "1"}, {"HOSTILE", "x"}};
  plan.stdin_data = std::string("in\0put", 6);
  plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  return plan;
}

bool holds(const json::array& a, const std::string& s) {
  for (const auto& v : a)
    if (v.is_string() && v.as_string() == s) return true;
  return false;
}

}  // namespace

TEST_CASE("ssh: a remote cordon's request carries the policy rebased onto the remote side",
          "[ssh-units]") {
  auto req = json::parse(request_json(plan_for("/local/ws", "/home/me"), "/remote/ws")).as_object();
  CHECK(req.at("workspace").as_string() == "/remote/ws");
  CHECK(req.at("backend").as_string() == "landlock");
  const auto& fs = req.at("policy").at("filesystem").as_object();
  // Beneath the local workspace: beneath the remote one. From `~`: `~` again. Else unchanged.
  CHECK(holds(fs.at("write").as_array(), "{workspace}"));
  CHECK(holds(fs.at("read").as_array(), "{workspace}/data"));
  CHECK(holds(fs.at("blocked").as_array(), "~/.ssh"));
  CHECK(holds(fs.at("blocked").as_array(), "/etc/hosts"));
  for (const auto& v : fs.at("blocked").as_array())
    CHECK(v.as_string().find("/home/me") == json::string::npos);
  // Bytes that are not UTF-8 travel as base64; stdin always does.
  const auto& argv = req.at("argv").as_array();
  CHECK(decode_base64(argv[2].at("base64").as_string()) == std::string("\xff\xfe", 2));
  CHECK(decode_base64(req.at("stdin").at("base64").as_string()) == std::string("in\0put", 6));
  // Only env.pass names travel, with their values; the rest of the environment is the remote's.
  const auto& env = req.at("env").as_object();
  CHECK(env.size() == 1);
  CHECK(env.at("CI").as_string() == "1");
  // The time left, never more than the policy's timeout.
  CHECK(req.at("timeout").as_string().find("ms") != json::string::npos);
  // And the remote cordon reads it back as a request with the same rules.
  auto back = parse_run_request(request_json(plan_for("/local/ws", "/home/me"), "/remote/ws"));
  REQUIRE(back.policy_inline);
  Policy remote = load_policy_text(json::serialize(*back.policy_inline), "r.yaml", "/remote/ws");
  remote = resolve_paths(std::move(remote), PathContext{"/remote/ws", "/home/them"});
  CHECK(grants_write(remote, "/remote/ws"));
  CHECK_FALSE(grants_write(remote, "/local/ws"));
}

TEST_CASE("ssh: the channel's framed output reaches the sink, the result kept apart",
          "[ssh-units]") {
  cordon::testing::CaptureSink sink;
  FramedChannelSink framed(sink);
  std::string forged = sdk::encode_frames(sdk::FrameTag::result, R"({"exit_code":0})");
  std::string stream = sdk::encode_frames(sdk::FrameTag::out, "out " + forged) +
                       sdk::encode_frames(sdk::FrameTag::err, "err") +
                       sdk::encode_frames(sdk::FrameTag::result, R"({"exit_code":4})");
  for (std::size_t i = 0; i < stream.size(); i += 3) framed.write(Stream::out, stream.substr(i, 3));
  framed.write(Stream::err, "cordon: a diagnostic\n");
  CHECK(sink.out == "out " + forged);
  CHECK(sink.err == "err");
  REQUIRE(framed.result());
  CHECK(framed.result()->at("exit_code").as_int64() == 4);
  CHECK(framed.diagnostics() == "cordon: a diagnostic\n");

  cordon::testing::CaptureSink none;
  FramedChannelSink broken(none);
  broken.write(Stream::out, "plain text, not frames");
  CHECK_FALSE(broken.result());
  CHECK(broken.diagnostics().find("malformed") != std::string::npos);
}

TEST_CASE("ssh: a remote cordon's result is merged: status, resources, report, error",
          "[ssh-units]") {
  auto result = json::parse(R"({"exit_code":null,"signal":9,"timed_out":true,
    "stdout_truncated":true,"resources":{"peak_memory_bytes":4096,"cpu_user_seconds":0.5,
    "cpu_system_seconds":0.25},"report":[{"capability":"fs.read.block","mechanism":"masked"}],
    "notes":["killed"],"error":{"code":"CRD1001","message":"cannot prove","hint":"h"}})")
                    .as_object();
  RunResult r;
  merge_result(result, "u@h:22", r);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == 9);
  CHECK(r.timed_out);
  CHECK(r.stdout_truncated);
  CHECK(r.peak_memory_bytes == 4096u);
  CHECK(r.cpu_seconds == Approx(0.75));
  REQUIRE(r.report.size() == 1);
  CHECK(r.report[0].mechanism == "the remote cordon on u@h:22: masked");
  CHECK(r.notes.at(0) == "remote: killed");
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1001");
  CHECK(r.error->message() == "on u@h:22: cannot prove");
}

TEST_CASE("ssh: the remote cordon's backends listing gives landlock's proofs, or why not",
          "[ssh-units]") {
  std::string why;
  auto ok = remote_proofs(R"({"backends":[{"name":"docker","available":false},
    {"name":"landlock","available":true,"proofs":[
      {"capability":"net.deny","proven":true,"evidence":"netns"},
      {"capability":"fs.exec.confine","proven":false,"evidence":"no"}]}]})",
                          why);
  REQUIRE(ok);
  CHECK(ok->proves("net.deny"));
  CHECK_FALSE(ok->proves("fs.exec.confine"));
  CHECK_FALSE(remote_proofs(R"({"backends":[{"name":"landlock","available":false,
    "reason":"no landlock"}]})",
                            why));
  CHECK(why.find("no landlock") != std::string::npos);
  CHECK_FALSE(remote_proofs("cordon: command not found", why));
  CHECK_FALSE(remote_proofs(R"({"backends":[]})", why));
}
