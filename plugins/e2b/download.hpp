// What comes back from a sandbox when `download = true`: the regular files under the write paths
// that the run wrote, each put in place here through cordon's workspace file API (no symlink
// followed, blocked paths refused), and only beneath a local write path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <cordon/sdk/tar.hpp>

namespace cordon::e2b {

using sdk::TarFile;

struct DownloadSpec {
  std::string local_ws;                        ///< the workspace here (absolute)
  std::string remote_ws;                       ///< and in the sandbox
  std::vector<std::string> writes;             ///< the local write paths (absolute)
  std::vector<std::filesystem::path> blocked;  ///< blocked paths and cordon's own state
  std::uint64_t max_file_bytes = 64u << 20;
};

struct Downloaded {
  std::uint64_t files = 0, bytes = 0;
  std::vector<std::string> skipped;  ///< "PATH: why"
};

/// Puts `files` (paths as the sandbox's tar names them, without the leading '/') in place.
/// Never throws for one file: what cannot be written is listed in `skipped`.
Downloaded apply_download(const std::vector<TarFile>& files, const DownloadSpec& spec);

}  // namespace cordon::e2b
