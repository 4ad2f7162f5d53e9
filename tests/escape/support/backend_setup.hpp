// What a run needs beyond the policy on the backend under test. Landlock needs nothing: the probes
// run from the build tree, which the policy lets it read. A docker container sees only the image,
// the workspace, the write paths and the operator's mounts, so on docker each scratch tree gets a
// cordon config (the image, the daemon's socket, listed/ and ro/ mounted read-only, as a policy's
// read list would expose them) and a copy of the probes in its workspace.
#pragma once

#include <string>
#include <vector>

#include "scratch.hpp"

namespace escape {

/// Whether the suite targets the docker backend (CORDON_ESCAPE_BACKEND=docker).
bool on_docker();

/// The image docker runs: CORDON_TEST_IMAGE, else cordon-test/busybox:2.
std::string docker_image();

/// The cordon flags a run in `scratch` needs: on docker `--config` with a [backends.docker] table
/// written into the scratch tree (image; socket from CORDON_TEST_DOCKER_SOCKET; listed/ and ro/
/// mounted read-only at their own paths); nothing on landlock.
std::vector<std::string> backend_flags(const Scratch& scratch);

/// Where the sandbox finds the probes: probe_dir() on landlock; on docker `<ws>/.probes`, a copy
/// made on first use (the workspace is mounted at its own path).
std::string sandbox_probe_dir(const Scratch& scratch);

/// `command` with every probe path (under probe_dir()) pointing into sandbox_probe_dir().
std::vector<std::string> sandbox_command(const Scratch& scratch, std::vector<std::string> command);

/// A program that exits 0 when run without arguments, to copy where a test needs "a program":
/// /bin/true on landlock; on docker a static probe, since the image has no host libraries.
std::string true_program();

}  // namespace escape
