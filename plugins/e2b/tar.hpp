// A POSIX tar archive (ustar, with pax headers for long names) of directories, regular files and
// symlinks: the workspace travels into a sandbox as one upload and one `tar -x`. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::e2b {

/// Builds an archive entry by entry; every entry is owned by uid and gid 0.
class TarWriter {
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
std::vector<TarFile> read_tar(std::string_view archive);

}  // namespace cordon::e2b
