// Nothing is lost: a foreground command's whole output is kept in a file of the server's own
// state (out of every sandbox's reach: each run of the server protects the directory), while
// the call's result carries head and tail under the policy's cap, and says how to read the rest
// (get_command_output with the spill's id and `since`). The directory goes with the server.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::cli::mcp {

/// The most one command's spill keeps; beyond it the file stops growing and says so.
inline constexpr std::uint64_t kSpillMax = 256ull << 20;

/// A spill file's output is held in memory up to this much (or the policy's cap, if smaller)
/// before the file is made: a short output, most of them, costs no file.
inline constexpr std::uint64_t kSpillHoldMax = 64u << 10;

/// One foreground run's spill: everything written goes on to `inner`, and into the spill file,
/// in the order it comes. The file is made, with what was held first, once the output passes
/// what is held in memory (`hold`, at most kSpillHoldMax): an output no longer than that never
/// makes a file.
class SpillSink final : public OutputSink {
 public:
  SpillSink(const PrivateDir& dir, std::string id, std::uint64_t hold, OutputSink& inner);
  void write(Stream stream, std::string_view chunk) override;

  /// The spill's id ("out-3").
  const std::string& id() const { return id_; }
  /// Whether the file was made (and so holds the output, up to kSpillMax).
  bool made() const { return static_cast<bool>(fd_); }
  /// Whether the file was needed and could not be made.
  bool failed() const { return failed_; }

 private:
  bool put(std::string_view part);

  const PrivateDir& dir_;
  std::string id_;
  std::uint64_t hold_;
  OutputSink& inner_;
  std::string held_;
  OwnedFd fd_;
  bool failed_ = false;
  std::uint64_t written_ = 0;
};

class Spill {
 public:
  /// A directory of this server under `state` (cordon's own), made now. nullopt dir (spilling
  /// off) when `state` is empty or cannot be made: results then only carry head and tail.
  explicit Spill(const std::filesystem::path& state);
  ~Spill();
  Spill(const Spill&) = delete;
  Spill& operator=(const Spill&) = delete;

  /// The directory every run must keep out of the sandbox's reach; empty when off.
  std::filesystem::path dir() const;

  /// A new spill for one run, under a new id, holding up to `hold` bytes before its file is
  /// made (pass the policy's cap); nullptr when spilling is off.
  std::unique_ptr<SpillSink> sink(OutputSink& inner, std::uint64_t hold);

  /// Whether `id` names a spill of this server.
  bool owns(const std::string& id) const;
  /// get_command_output for a spill: the bytes from `since` on (at most 1 MiB), the next
  /// offset and the total. Throws Error CRD6001 for an unknown id.
  boost::json::object read(const std::string& id, std::uint64_t since);

  /// Forgets a spill that was not needed (the output fitted under the cap).
  void drop(const std::string& id);

 private:
  std::optional<PrivateDir> dir_;
  std::mutex mutex_;
  std::uint64_t next_ = 0;
};

}  // namespace cordon::cli::mcp
