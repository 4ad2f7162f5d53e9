// The scan container of the image's multi-call programs, and its output.
#include "multicall.hpp"

#include <cordon/sdk/error.hpp>

#include <boost/json/array.hpp>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "container.hpp"
#include "frames.hpp"
#include "host_side.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

constexpr auto kScanTimeout = std::chrono::seconds(120);

[[noreturn]] void scan_failed(const std::string& why) {
  throw Error(code::kIsolationFailed,
              "process.blocked_commands cannot be enforced: the image's multi-call programs "
              "cannot be listed: " +
                  why,
              "the image must let nobody (65534) run its programs; or remove the name from "
              "process.blocked_commands");
}

json::object scan_body(const std::string& image_id, const std::string& waiter_path,
                       const std::shared_ptr<const SeccompProfile>& seccomp,
                       const std::vector<std::string>& command) {
  json::array cmd;
  for (const auto& c : command) cmd.emplace_back(c);
  json::array security{"no-new-privileges"};
  if (seccomp) security.emplace_back(seccomp->security_opt());
  json::object labels{{kRunLabel, "multicall-scan"}};
  for (const auto& l : owner_labels()) labels[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
  json::object hc{{"Mounts", json::array{json::object{{"Type", "bind"},
                                                      {"Source", waiter_path},
                                                      {"Target", kWaiterTarget},
                                                      {"ReadOnly", true}}}},
                  {"ReadonlyRootfs", true},
                  {"NetworkMode", "none"},
                  {"CapDrop", json::array{"ALL"}},
                  {"SecurityOpt", std::move(security)},
                  {"PidsLimit", 64},
                  {"Memory", std::int64_t{512} << 20},
                  {"MemorySwap", std::int64_t{512} << 20},
                  {"Init", false},
                  {"LogConfig", json::object{{"Type", "json-file"}, {"Config", json::object{}}}}};
  return json::object{{"Image", image_id},          {"Entrypoint", json::array{}},
                      {"Cmd", std::move(cmd)},      {"User", "65534:65534"},
                      {"NetworkDisabled", true},    {"Labels", std::move(labels)},
                      {"HostConfig", std::move(hc)}};
}

}  // namespace

std::vector<std::string> multicall_command(const std::vector<std::string>& names,
                                           const std::vector<std::string>& dirs) {
  std::vector<std::string> out{kWaiterTarget, "--multicall"};
  out.insert(out.end(), names.begin(), names.end());
  out.emplace_back("--");
  out.insert(out.end(), dirs.begin(), dirs.end());
  return out;
}

Multicall multicall_paths(const std::string& output) {
  Multicall out;
  auto add = [](std::vector<std::string>& list, const std::string& path) {
    if (!path.empty() && path.front() == '/' &&
        std::find(list.begin(), list.end(), path) == list.end())
      list.push_back(path);
  };
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("=", 0) == 0)
      add(out.aliases, line.substr(1));
    else
      add(out.files, line);
  return out;
}

Multicall multicall_programs(const Daemon& daemon, const std::string& image_id,
                             const std::string& waiter_path,
                             const std::shared_ptr<const SeccompProfile>& seccomp,
                             const std::vector<std::string>& names,
                             const std::vector<std::string>& dirs) {
  Container scan(daemon, "cordon-multicall-" + new_run_id(),
                 scan_body(image_id, waiter_path, seccomp, multicall_command(names, dirs)));
  ExitWaiter exit(daemon, scan.id());
  scan.start();
  auto started = std::chrono::steady_clock::now();
  while (!exit.wait_for(500))
    if (std::chrono::steady_clock::now() - started > kScanTimeout) {
      scan.kill("SIGKILL");
      scan_failed("it did not end within 120 s");
    }
  if (exit.status() != 0)
    scan_failed(exit.status() ? "it ended with status " + std::to_string(*exit.status())
                              : exit.failure());
  Response logs = daemon.call("GET", "/containers/" + scan.id() + "/logs?stdout=1&stderr=0");
  if (logs.status != 200) scan_failed("its output cannot be read: " + daemon_message(logs));
  std::string out;
  FrameDecoder decoder([&out](FrameStream s, std::string_view data) {
    if (s == FrameStream::out) out.append(data);
  });
  if (!decoder.feed(logs.body)) scan_failed("its output is malformed: " + decoder.error());
  return multicall_paths(out);
}

}  // namespace cordon::docker
