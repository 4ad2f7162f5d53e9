// Files in and out of a sandbox: the opt-in copy back (only what the run wrote, only beneath a
// write path, never through a symlink here), and what travels in which request's headers.
#include <unistd.h>

#include <filesystem>

#include "download.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::e2b::test;
using cordon::testing::TempDir;
namespace json = boost::json;

TEST_CASE("copy back: only beneath a write path, never through a symlink or a blocked path") {
  TempDir ws("cordon-e2b-back-", ::geteuid());
  std::filesystem::create_directories(ws.path() / "out");
  std::filesystem::create_directories(ws.path() / "kept");
  std::filesystem::create_directories(ws.path() / "out/secret");
  TempDir elsewhere("cordon-e2b-elsewhere-", ::geteuid());
  std::filesystem::create_directory_symlink(elsewhere.path(), ws.path() / "out/link");
  std::string remote = "/remote/ws";
  std::vector<sdk::TarFile> files = {
      {"remote/ws/out/new.txt", "made in the sandbox"},
      {"remote/ws/out/sub/deeper.txt", "deeper"},
      {"remote/ws/kept/not-a-write-path", "x"},
      {"remote/ws/out/../kept/escape", "x"},
      {"remote/ws/out/link/planted", "x"},
      {"remote/ws/out/secret/key", "x"},
      {"etc/passwd", "x"},
  };
  e2b::DownloadSpec spec{ws.path().string(), remote, {ws / "out"}, {ws.path() / "out/secret"}};
  e2b::Downloaded d = e2b::apply_download(files, spec);
  CHECK(d.files == 2);
  CHECK(cordon::testing::read_file(ws / "out/new.txt") == "made in the sandbox");
  CHECK(cordon::testing::read_file(ws / "out/sub/deeper.txt") == "deeper");
  CHECK_FALSE(std::filesystem::exists(ws.path() / "kept/not-a-write-path"));
  CHECK_FALSE(std::filesystem::exists(ws.path() / "kept/escape"));
  CHECK_FALSE(std::filesystem::exists(elsewhere.path() / "planted"));
  CHECK_FALSE(std::filesystem::exists(ws.path() / "out/secret/key"));
  CHECK(d.skipped.size() == 5);
}

TEST_CASE(
    "e2b copy back: a run's new files come back when asked, even after a timeout, and "
    "only then") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  std::filesystem::create_directories(ws.path() / "out");
  cordon::testing::write_file(ws / "out/old.txt", "old");
  Policy p = basic_policy(std::chrono::seconds(3));
  p.filesystem.write = {ws / "out"};
  auto backend = make_backend();
  std::string script =
      "echo new > out/new.txt; ln -s /etc/passwd out/link; echo tmp > /tmp/not-back; "
      "setsid sh -c 'while :; do echo beat >> out/heartbeat; sleep 0.2; done' & sleep 300";
  CaptureSink sink;
  RunResult r = backend->run(
      make_plan(p, {"sh", "-c", script}, ws.path().string(), json::object{{"download", true}}),
      sink);
  std::string notes;
  for (const auto& n : r.notes) notes += n + "\n";
  INFO(notes << sink.err);
  CHECK(r.timed_out);
  CHECK(cordon::testing::read_file(ws / "out/new.txt") == "new\n");
  CHECK(cordon::testing::read_file(ws / "out/old.txt") == "old");
  CHECK(cordon::testing::read_file(ws / "out/heartbeat").find("beat") == 0);
  CHECK_FALSE(std::filesystem::exists(ws.path() / "out/link"));
  CHECK(no_sandbox_within(std::chrono::seconds(5)));
  CHECK(processes_alive() == 0);
  std::filesystem::remove(ws.path() / "out/new.txt");
  CaptureSink again;
  backend->run(
      make_plan(basic_policy(), {"sh", "-c", "echo new > out/new.txt"}, ws.path().string()), again);
  CHECK_FALSE(std::filesystem::exists(ws.path() / "out/new.txt"));  // download is off
}

TEST_CASE("headers: the API key goes to the control plane only, envd gets its token") {
  if (!ready()) return;
  reset();
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  CaptureSink sink;
  make_backend()->run(make_plan(basic_policy(), {"true"}, ws.path().string()), sink);
  int control = 0, envd = 0, starts = 0;
  json::object st = state();
  for (const auto& item : st["requests"].as_array()) {
    const auto& req = item.as_object();
    const auto& headers = req.at("headers").as_object();
    std::string path(req.at("path").as_string());
    bool has_key = headers.contains("X-API-Key");
    if (path.rfind("/sandboxes", 0) == 0 || path == "/templates") {
      ++control;
      CHECK(has_key);
    } else {
      ++envd;
      CHECK_FALSE(has_key);
      CHECK(headers.contains("X-Access-Token"));
    }
    if (path == "/process.Process/Start") {
      ++starts;
      CHECK(headers.contains("Keepalive-Ping-Interval"));
      CHECK(headers.contains("Connect-Timeout-Ms"));
    }
  }
  CHECK(control >= 2);  // create, delete
  CHECK(envd >= 2);
  CHECK(starts >= 2);  // the copy-in and the command
}
