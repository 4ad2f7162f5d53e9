// Shared helpers of the backends' test suites.
#include "backend_test_util.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cordon::testing {

TempDir::TempDir(const std::string& prefix, uid_t owner, const std::string& base) {
  std::string pattern = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
  ::chmod(path_.c_str(), 0755);
  if (::geteuid() == 0) (void)!::chown(path_.c_str(), owner, owner);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void CaptureSink::write(Stream stream, std::string_view chunk) {
  (stream == Stream::out ? out : err).append(chunk);
  ++chunks;
}

void CueSink::write(Stream stream, std::string_view chunk) {
  std::lock_guard lock(mutex_);
  (stream == Stream::out ? out : err).append(chunk);
  if (!cued_ && (out.find(cue_) != std::string::npos || err.find(cue_) != std::string::npos)) {
    cued_ = true;
    seen_.notify_all();
  }
}

bool CueSink::wait(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return seen_.wait_for(lock, limit, [this] { return cued_; });
}

void write_file(const std::string& file, const std::string& text, mode_t mode) {
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
  }
  ::chmod(file.c_str(), mode);
  struct stat st {};
  if (::geteuid() == 0 && ::stat(std::filesystem::path(file).parent_path().c_str(), &st) == 0)
    (void)!::chown(file.c_str(), st.st_uid, st.st_gid);
}

std::string read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace cordon::testing
