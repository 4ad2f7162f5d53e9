// What `cordon certify` sets up on the host for the corpus's attacks to aim at: a directory of
// its own (workspaces, files outside them), a TCP listener on a non-loopback address, an
// abstract unix socket and a SysV shared-memory segment. Everything is removed on destruction.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace cordon::cli {

/// The host side of one certification.
class HostFixtures {
 public:
  /// Makes the directory (under $TMPDIR or /tmp) and the targets. Throws cordon::Error
  /// (CRD7001) when the directory cannot be made; a target that cannot be made is left out,
  /// and the cases that need it are skipped with the reason.
  explicit HostFixtures(const std::filesystem::path& probe);
  ~HostFixtures();
  HostFixtures(const HostFixtures&) = delete;
  HostFixtures& operator=(const HostFixtures&) = delete;

  /// A fresh, empty workspace holding a copy of the probe as `cordon-probe`.
  std::filesystem::path new_workspace();

  /// The placeholders of docs/certify.md, without {workspace}: {outside}, {host_ip},
  /// {open_port}, {abstract}, {sysv_key}, {host_pid}, {home}.
  const std::map<std::string, std::string>& values() const { return values_; }

  /// Why `need` ("host_ip", "abstract", "sysv") is missing here; empty when it is there.
  std::string missing(const std::string& need) const;

 private:
  std::filesystem::path dir_, probe_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> missing_;
  int listener_ = -1, abstract_ = -1, shm_id_ = -1, workspaces_ = 0;
};

}  // namespace cordon::cli
