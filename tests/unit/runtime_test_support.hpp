// Helpers for the plugin runtime tests: fixture plugin directories, isolated registries, a
// collecting sink and a way to run a program and capture its output.
#pragma once

#include <sys/wait.h>
#include <cordon/registry.hpp>
#include <cordon/sdk/backend.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace cordon::test {

/// <build>/test-plugins/<case>: where tests/fixtures/plugins puts each fixture.
inline std::filesystem::path fixture_dir(const std::string& fixture_case) {
  return std::filesystem::path(CORDON_BINARY_DIR) / "test-plugins" / fixture_case;
}

/// A registry that searches only `dirs`: no environment, no install or build-tree directory.
inline RegistryOptions isolated(std::vector<std::filesystem::path> dirs, PluginPins pins = {}) {
  RegistryOptions o;
  o.plugin_dirs = std::move(dirs);
  o.use_environment = false;
  o.use_default_dirs = false;
  o.pins = std::move(pins);
  return o;
}

/// Keeps everything written to it.
struct Collect : OutputSink {
  std::string out, err;
  void write(Stream s, std::string_view chunk) override { (s == Stream::out ? out : err) += chunk; }
};

/// What a shell command printed on stdout (stderr goes to the test's stderr) and its status.
struct Captured {
  std::string out;
  int status = -1;
};

/// Runs `command` with /bin/sh (test code only) and captures its stdout.
inline Captured capture(const std::string& command) {
  Captured c;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return c;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
    c.out.append(buf.data(), n);
  int st = ::pclose(p);
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return c;
}

/// True when `text` contains `part`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace cordon::test
