// The warm pool: a run takes a started container whose waiter execs the argv, each container
// is used once, and none is left when the backend goes away.
#include <thread>

#include "pool.hpp"
#include "support.hpp"
#include "waiter_blob.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace {

bool pooled(const RunResult& r) {
  for (const auto& n : r.notes)
    if (n == "ran in a warm pool container") return true;
  return false;
}

// Runs until a run lands in a pool container (the pool fills in the background).
RunResult run_pooled(DockerBackend& b, const Plan& plan, CaptureSink& sink) {
  for (int i = 0; i < 40; ++i) {
    sink = CaptureSink();
    auto r = b.run(plan, sink);
    if (pooled(r) || r.error) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return {};
}

}  // namespace

TEST_CASE("pool: the waiter header carries the nonce, flags, deadline, checks and argv exactly",
          "[unit]") {
  std::string nonce(kNonceSize, 'n');
  auto h = waiter_header({nonce, false, 0, std::nullopt, {}, {"a", "", "b c"}});
  CHECK(h == nonce + std::string("\0\0\0\0"
                                 "\0\0\0\0\0\0\0\0"
                                 "\0\0\0\0\0\0\0\x03\0\0\0\x01"
                                 "a\0\0\0\0\0\0\0\x03"
                                 "b c",
                                 36));
  auto c = waiter_header(
      {nonce, true, 0x0a0b0c0d0e0fULL, std::nullopt, {{"/w", 0x0102030405060708ULL, 9}}, {"x"}});
  CHECK(c == nonce + std::string("\0\0\0\x01"
                                 "\0\0\x0a\x0b\x0c\x0d\x0e\x0f"
                                 "\0\0\0\x01\0\0\0\x02/w"
                                 "\x01\x02\x03\x04\x05\x06\x07\x08\0\0\0\0\0\0\0\x09"
                                 "\0\0\0\x01\0\0\0\x01x",
                                 47));
  // A uid to expect (a user the image names): flag bit 1, the uid after the deadline.
  auto u = waiter_header({nonce, false, 0, 0x01020304u, {}, {"x"}});
  CHECK(u == nonce + std::string("\0\0\0\x02"
                                 "\0\0\0\0\0\0\0\0"
                                 "\x01\x02\x03\x04"
                                 "\0\0\0\0"
                                 "\0\0\0\x01\0\0\0\x01x",
                                 29));
  CHECK(waiter_program().size() > 1000);
  CHECK(waiter_program().substr(1, 3) == "ELF");
}

TEST_CASE("pool: only the waiter's trailer with the run's nonce gives the status", "[unit]") {
  std::string nonce(kNonceSize, 'k');
  CHECK(trailer_status(nonce + std::string("\0\0\0\x05", 4), nonce) == 5);
  CHECK(trailer_status(nonce + std::string("\0\0\x01\x00", 4), nonce) == 256);
  CHECK_FALSE(trailer_status(std::string(kNonceSize, 'x') + std::string(4, '\0'), nonce));
  CHECK_FALSE(trailer_status(nonce, nonce));
}

TEST_CASE("pool: runs with the same policy share a key, the command is not part of it", "[unit]") {
  boost::json::object a{{"Image", "x"},
                        {"Cmd", boost::json::array{"a"}},
                        {"Labels", boost::json::object{{"cordon.run", "1"}}}};
  auto b = a;
  b["Cmd"] = boost::json::array{"b"};
  b["Labels"].as_object()["cordon.run"] = "2";
  CHECK(pool_key(a) == pool_key(b));
  b["Image"] = "y";
  CHECK(pool_key(a) != pool_key(b));
  auto pooled = waiter_body(a, "/host/waiter", "pool-1");
  CHECK(pooled.at("Cmd") == boost::json::array{kWaiterTarget});
  CHECK(pooled.at("OpenStdin") == true);
}

TEST_CASE("pool: a pooled run streams, reads stdin, reports exits like a one-shot run",
          "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  {
    DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
    auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "cat; echo err >&2; exit 5"});
    plan.settings["pool"] = 1;
    plan.stdin_data = "from stdin\n";
    CaptureSink sink;
    auto r = run_pooled(b, plan, sink);
    REQUIRE(pooled(r));
    CHECK(r.exit_code == 5);
    CHECK(sink.out == "from stdin\n");
    CHECK(sink.err == "err\n");
    auto missing = make_plan(policy, ws.path(), {"no-such-program-xyz"});
    missing.settings["pool"] = 1;
    CaptureSink none;
    auto m = run_pooled(b, missing, none);
    REQUIRE(m.error);
    CHECK(m.error->code() == "CRD5004");
    CHECK(none.err.empty());
    // A background process does not keep a pooled run alive: the waiter kills it.
    auto lingering = make_plan(policy, ws.path(), {"/bin/sh", "-c", "sleep 60 & echo bg"});
    lingering.settings["pool"] = 1;
    CaptureSink bg;
    auto start = std::chrono::steady_clock::now();
    auto l = run_pooled(b, lingering, bg);
    REQUIRE(pooled(l));
    CHECK(l.exit_code == 0);
    CHECK(bg.out == "bg\n");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  }
  CHECK(our_containers().empty());
}

TEST_CASE("pool: a pooled run is confined like a one-shot run and times out", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  policy.limits.timeout = std::chrono::seconds(2);
  {
    DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
    auto plan = make_plan(policy, ws.path(),
                          {"/bin/sh", "-c", "ls /sys/class/net; id -u; echo x > out; sleep 60"});
    plan.settings["pool"] = 1;
    CaptureSink sink;
    RunResult r;
    for (int i = 0; i < 40 && !pooled(r); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      sink = CaptureSink();
      r = b.run(plan, sink);
    }
    REQUIRE(pooled(r));
    CHECK(r.timed_out);
    CHECK(sink.out == "lo\n65534\n");
    CHECK(read_file(ws / "out") == "x\n");
  }
  CHECK(our_containers().empty());
}
