// A minimal MCP client for the benchmarks: one `cordon mcp` server on two pipes, initialized,
// and tools/call of execute_command sent in batches. Exits the benchmark on a failed call.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cordon::bench {

class McpServer {
 public:
  /// Starts `cordon` with `args` (after "mcp").
  McpServer(const char* cordon, const std::vector<std::string>& args) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) std::exit(1);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::close(in[1]);
      ::close(out[0]);
      std::vector<char*> argv{const_cast<char*>(cordon), const_cast<char*>("mcp")};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(cordon, argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = ::fdopen(in[1], "w");
    from_ = ::fdopen(out[0], "r");
    send(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
    receive();
  }
  ~McpServer() {
    std::fclose(to_);
    ::waitpid(pid_, nullptr, 0);
    std::fclose(from_);
  }
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  /// `count` calls of `argv_json` (a JSON array) sent at once; returns the last result's
  /// structuredContent once every answer is read.
  boost::json::object calls(int count, const std::string& argv_json = R"(["/bin/true"])") {
    for (int i = 0; i < count; ++i)
      send(R"({"jsonrpc":"2.0","id":)" + std::to_string(++id_) +
           R"(,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":)" +
           argv_json + "}}}");
    boost::json::object last;
    for (int i = 0; i < count; ++i) {
      auto r = receive();
      const auto& result = r.as_object().at("result").as_object();
      if (result.at("isError").as_bool()) {
        std::fprintf(stderr, "bench: a call failed: %s\n", boost::json::serialize(r).c_str());
        std::exit(1);
      }
      last = result.at("structuredContent").as_object();
    }
    return last;
  }

 private:
  void send(const std::string& line) {
    std::fputs((line + "\n").c_str(), to_);
    std::fflush(to_);
  }
  boost::json::value receive() {
    std::string line;
    for (int c; (c = std::fgetc(from_)) != EOF && c != '\n';) line += static_cast<char>(c);
    return boost::json::parse(line);
  }

  pid_t pid_ = 0;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  int id_ = 0;
};

}  // namespace cordon::bench
