// Per-backend setup of a run: the docker config and the probes' copy in the workspace.
#include "backend_setup.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "policy_spec.hpp"
#include "probes.hpp"

namespace escape {
namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

/// The [backends.docker] table for runs in `scratch`.
std::string docker_config(const Scratch& scratch) {
  std::string text = "# written by the cordon escape suite\n[backends.docker]\nimage = " +
                     toml_string(docker_image()) + "\n";
  if (auto socket = env_or("CORDON_TEST_DOCKER_SOCKET", ""); !socket.empty())
    text += "socket = " + toml_string(socket) + "\n";
  // Docker mounts no filesystem.read path (the image provides the system): these operator
  // mounts stand for the read list every test policy has, so that the allowed side of a read
  // and blocked paths inside a readable directory (masked within mounts) are tested too.
  text += "mounts = [" + toml_string(scratch.listed() + ":" + scratch.listed() + ":ro") + ", " +
          toml_string(scratch.ro() + ":" + scratch.ro() + ":ro") + "]\n";
  return text;
}

}  // namespace

bool on_docker() { return backend_name() == "docker"; }

std::string docker_image() { return env_or("CORDON_TEST_IMAGE", "cordon-test/busybox:2"); }

std::vector<std::string> backend_flags(const Scratch& scratch) {
  if (!on_docker()) return {};
  std::string file = scratch.path("cordon-config.toml");
  if (!exists(file)) scratch.write(file, docker_config(scratch));
  return {"--config", file};
}

std::string sandbox_probe_dir(const Scratch& scratch) {
  if (!on_docker()) return probe_dir();
  std::string dir = scratch.ws() + "/.probes";
  if (!exists(dir)) {
    // Owned by the suite's user and not writable by the sandbox's: a test cannot alter them.
    fs::create_directories(dir);
    fs::copy(probe_dir(), dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::permissions(dir, fs::perms(0755));
  }
  return dir;
}

std::vector<std::string> sandbox_command(const Scratch& scratch, std::vector<std::string> command) {
  if (!on_docker()) return command;
  std::string from = probe_dir() + "/";
  for (auto& arg : command)
    if (arg.rfind(from, 0) == 0) arg = sandbox_probe_dir(scratch) + "/" + arg.substr(from.size());
  return command;
}

std::string true_program() { return on_docker() ? probe("netprobe") : "/bin/true"; }

}  // namespace escape
