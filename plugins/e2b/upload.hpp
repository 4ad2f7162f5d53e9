// What of the local workspace is copied into a sandbox: its directories, regular files and
// symlinks, as one tar archive — never a blocked path, a hard link to a blocked file, cordon's
// own state, a file the workspace's owner could not read, or a special file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::e2b {

struct UploadSpec {
  std::string local_root;             ///< the workspace here (absolute, canonical)
  std::string remote_root;            ///< where it lands in the sandbox (absolute)
  std::vector<std::string> excluded;  ///< absolute paths left out, with all beneath them
  std::vector<std::string> blocked;   ///< the policy's blocked paths (for their hard links)
  uid_t owner_uid = 0;                ///< whose read permission a file needs to be copied
  gid_t owner_gid = 0;
  std::uint64_t limit_bytes = 100u << 20;
};

struct Upload {
  std::string archive;  ///< extract with `tar -x -C /`
  std::uint64_t files = 0, bytes = 0;
  std::vector<std::string> skipped;  ///< "special file x", "unreadable by its owner: y"
};

/// Walks `spec.local_root` without following a symlink (each directory opened from its
/// parent's descriptor). Throws cordon::Error: CRD4009 when the files exceed the limit (naming
/// it), CRD1007 when a file has another name that a blocked file may share and that could not be
/// ruled out.
Upload make_upload(const UploadSpec& spec);

}  // namespace cordon::e2b
