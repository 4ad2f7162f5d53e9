// A fake docker daemon on a unix socket, for what a real one cannot be made to do on demand:
// answer just enough of the Engine API to start a run, then go away, or hold one answer (attach,
// wait, start) until the test is over. Records every request line.
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cordon::docker::test {

/// One request per connection; answers as a daemon at API 1.41 would.
class FakeDaemon {
 public:
  /// What the daemon does with a run.
  enum class Mode {
    vanish_after_start,  ///< answers /start, then drops every connection and stops listening
    hold_attach,         ///< never answers the attach
    hold_wait,           ///< never sends the head of /wait
    hold_start,          ///< never answers /start
  };

  /// What /info reports: every limit (a daemon on a full cgroup setup), or none of them.
  enum class Limits { all, none };

  FakeDaemon(std::string path, Mode mode, Limits limits = Limits::all);
  ~FakeDaemon();
  FakeDaemon(const FakeDaemon&) = delete;
  FakeDaemon& operator=(const FakeDaemon&) = delete;

  /// The request lines so far ("DELETE /v1.41/containers/fakeid?force=1&v=1 HTTP/1.1").
  std::vector<std::string> requests();
  /// Whether some request line contains both `method` and `fragment`.
  bool saw(const std::string& method, const std::string& fragment);

 private:
  void die();
  void accept_loop();
  void serve(int fd);
  enum class After { close, hold, closed };
  After answer(int fd, const std::string& line);

  std::string path_;
  Mode mode_;
  Limits limits_;
  int listener_ = -1;
  std::thread accept_thread_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<int> held_;
  std::vector<std::string> requests_;
  bool dead_ = false;
};

}  // namespace cordon::docker::test
