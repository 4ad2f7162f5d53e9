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

namespace cordon::cli::mcp {

/// The most one command's spill keeps; beyond it the file stops growing and says so.
inline constexpr std::uint64_t kSpillMax = 256ull << 20;

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

  /// A sink that writes everything to a new spill file, in the order it comes, and passes it
  /// on to `inner`. `id` gets the spill's id ("out-3"); nullptr when spilling is off.
  std::unique_ptr<OutputSink> sink(OutputSink& inner, std::string& id);

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
