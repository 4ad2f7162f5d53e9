// process.blocked_commands and multi-call programs: `busybox unshare` runs the unshare applet
// whatever the image's /bin/unshare is. A multi-call program (busybox, toybox) that provides a
// blocked applet is masked like a blocked program, as the landlock backend masks it. Which ones
// do is asked of the programs themselves (`busybox --list`), inside a container of the image
// that runs nothing else: the waiter's scan mode (waiter.c), as nobody, without network, under
// cordon's seccomp profile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api.hpp"
#include "seccomp_profile.hpp"

namespace cordon::docker {

/// The scan mode's command line: the waiter, `--multicall`, the blocked names, `--` and the
/// directories to look in. Pure.
std::vector<std::string> multicall_command(const std::vector<std::string>& names,
                                           const std::vector<std::string>& dirs);

/// The multi-call programs of an image that provide a blocked name.
struct Multicall {
  std::vector<std::string> files;    ///< their real paths (every hard link), to mask
  std::vector<std::string> aliases;  ///< other paths that lead to them (links), for matching
};

/// The scan's output: a real path per line ("/…"), each possibly followed by a name it was
/// found by ("=/…"); each kept once, in order. Pure.
Multicall multicall_paths(const std::string& output);

/// The image's multi-call programs among the executables of `dirs` that provide one of `names`,
/// from the waiter's scan in a container of `image_id` with the waiter bound from
/// `waiter_path`. Throws CRD1003 when the scan fails.
Multicall multicall_programs(const Daemon& daemon, const std::string& image_id,
                             const std::string& waiter_path,
                             const std::shared_ptr<const SeccompProfile>& seccomp,
                             const std::vector<std::string>& names,
                             const std::vector<std::string>& dirs);

}  // namespace cordon::docker
