// The host uid of a container user given by name (`backends.docker.user = "app"`): the image's
// own /etc/passwd says it, read from a container that is created and never started. The daemon
// shares the host's uids (no user-namespace remap), so that uid's state on the host (its cordon
// configuration, say) must be hidden from the command as any other command user's is; and the
// waiter checks before the command that it runs with that very uid (a runtime that resolved the
// name otherwise would run another).
#pragma once

#include <sys/types.h>

#include <cordon/sdk/private_dir.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::docker {

class Daemon;

/// The name of `user` (a `backends.docker.user` value, `uid[:gid]` or `name[:group]`) when its
/// user part is a name, else nullopt. Pure.
std::optional<std::string> user_name_of(const std::string& user);

/// Finds and caches (in memory and in a verified directory of cordon's: an image id names its
/// contents) the uid an image's /etc/passwd gives a name.
class ImageUsers {
 public:
  /// The uid of `name` in the image. Throws CRD2015 naming the setting when the image has no
  /// /etc/passwd as a file, or no such user in it (the daemon could not run it either).
  uid_t uid_of(const Daemon& daemon, const PrivateDir& dir, const std::string& image_id,
               const std::string& name);

 private:
  std::mutex mutex_;
  std::map<std::string, uid_t> memory_;
};

}  // namespace cordon::docker
