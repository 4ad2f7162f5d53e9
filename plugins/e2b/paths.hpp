// Path arithmetic shared by the upload, the download and the backend: pure, no file system.
#pragma once

#include <string>

namespace cordon::e2b {

/// True when the absolute, lexically normal `path` is `dir` or lies beneath it.
inline bool within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

}  // namespace cordon::e2b
