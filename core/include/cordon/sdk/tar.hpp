// POSIX tar archives (ustar, with pax headers for long names) of directories, regular files and
// symlinks, written and read: what a remote backend's files travel in (a workspace uploaded into
// a sandbox and unpacked by `tar -x`; a file read out of a container through the docker
// daemon's archive endpoint). Pure.
#pragma once

#include <cordon/sdk/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sdk {

/// Builds an archive entry by entry; every entry is owned by uid and gid 0.
class CORDON_API TarWriter {
 public:
  void directory(std::string_view path, unsigned mode);
  void file(std::string_view path, unsigned mode, std::string_view content, std::int64_t mtime);
  void symlink(std::string_view path, std::string_view target);
  /// The archive, closed with its two zero blocks.
  std::string finish();

 private:
  void entry(char type, std::string_view path, unsigned mode, std::string_view link,
             std::uint64_t size, std::int64_t mtime);
  std::string out_;
};

/// One regular file of an archive.
struct TarFile {
  std::string path;  ///< as the archive names it (pax `path` when given)
  std::string content;
};

/// The regular files of a ustar or pax archive, in order; other entries (directories, links,
/// devices) are skipped. Throws std::runtime_error on a malformed archive.
CORDON_API std::vector<TarFile> read_tar(std::string_view archive);

}  // namespace cordon::sdk
