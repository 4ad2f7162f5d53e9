// process.blocked_commands in a container: the image's files at each blocked name (through the
// granted PATH and the usual system directories) are found once per image, by asking the daemon
// to stat them in a container that is created and never started, and masked by an empty
// mode-000 file at create time, and so is every multi-call program (busybox) that provides a
// blocked name as an applet (multicall.hpp). The copies that host mounts put in the container are
// found on the host (mounted_programs.hpp).
#pragma once

#include <cordon/sdk/private_dir.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api.hpp"
#include "multicall.hpp"

namespace cordon::docker {

/// What the daemon said about one path of the image (archive stat).
struct PathStat {
  bool exists = false;
  bool symlink = false;
  std::string link_target;  ///< resolved, absolute, when a symlink
};

/// The masks for one image and list of blocked names, or why there can be none.
struct ExecMasks {
  std::vector<std::string> files;  ///< container paths to cover with the mask file
  /// Link targets the image does not have: a host mount may provide them (mounted_programs.hpp).
  std::vector<std::string> dangling;
  /// Multi-call programs of the image that provide a blocked name (multicall.hpp): their real
  /// paths, masked (also in `files`).
  std::vector<std::string> multicall;
  /// Other paths that lead to them: a blocked name that links to one reaches its mask.
  std::vector<std::string> multicall_aliases;
  std::string refusal;  ///< non-empty: the run must be refused, this says why
};

/// Asks the image which multi-call programs among the executables of `dirs` provide one of
/// `names` (multicall_programs() bound to a daemon and an image).
using MulticallScan = std::function<Multicall(const std::vector<std::string>& names,
                                              const std::vector<std::string>& dirs)>;

/// The last component of `path` (the whole of it without a '/'). Pure.
std::string base_name(const std::string& path);

/// The directories a name is looked up in: each absolute one of `path_env`, then the system
/// directories, each once. Pure.
std::vector<std::string> exec_dirs(const std::string& path_env);

/// Paths to look at for `names`: each directory of exec_dirs() joined with each name; a name
/// with a '/' is itself. Pure.
std::vector<std::string> exec_candidates(const std::vector<std::string>& names,
                                         const std::string& path_env);

/// The masks from the stats of `candidates` and the image's multi-call programs that provide a
/// blocked name (masked too; a link to one is no refusal). A link to a program of another name
/// that is none of them is refused. Pure.
ExecMasks decide_masks(const std::vector<std::string>& candidates,
                       const std::map<std::string, PathStat>& stats,
                       const Multicall& multicall = {});

/// Finds and caches (in memory and in a verified directory of cordon's) the masks for an image.
class ExecBlockCache {
 public:
  /// The masks for `names` in the image, and for `extra` (image paths that links on a host
  /// mount lead to); asks the daemon only when not cached in memory or in `dir`.
  /// `scan` lists the image's multi-call programs (asked only when not cached either).
  ExecMasks masks(const Daemon& daemon, const PrivateDir& dir, const std::string& image_id,
                  const std::vector<std::string>& names, const std::string& path_env,
                  const MulticallScan& scan, const std::vector<std::string>& extra = {});

 private:
  std::mutex mutex_;
  std::map<std::string, ExecMasks> memory_;
};

}  // namespace cordon::docker
