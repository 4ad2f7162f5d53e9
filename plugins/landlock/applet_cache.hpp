// busybox's applet names, kept between cordon processes and within one: reading them from the
// program file means reading its whole .rodata (about 250 KB, a millisecond of a run's few), and
// every run with a blocked command needs them. Kept in the backend's state directory (cordon's own,
// masked in every sandbox) under the file's identity — device, inode, size, modification and
// change times — so that a replaced or rewritten program is read again.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cordon::landlock {

/// The applet names of the multi-call program `file` (empty: none).
using AppletLookup = std::function<std::vector<std::string>(const std::string& file)>;

/// busybox_applets() through a cache in `state_dir` (without a state directory, or when it
/// cannot be used, busybox_applets() itself), and in the lookup's own memory for the last few
/// identities read (keep one lookup for many runs).
AppletLookup cached_applets(std::filesystem::path state_dir);

/// What the cache keys `file` by ("" when it cannot be stat'ed). Reads the host.
std::string applet_key(const std::string& file);

}  // namespace cordon::landlock
