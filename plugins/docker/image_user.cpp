// The uid an image gives a user name (image_user.hpp).
#include "image_user.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/tar.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <functional>
#include <sstream>
#include <vector>

#include "api.hpp"
#include "container.hpp"
#include "host_side.hpp"

namespace cordon::docker {

namespace {

std::string cache_name(const std::string& image_id, const std::string& name) {
  std::ostringstream key;
  key << std::hex << std::hash<std::string>{}(image_id + "\n" + name);
  std::string id = image_id.substr(image_id.find(':') + 1).substr(0, 24);
  return "user-" + id + "-" + key.str();
}

Error bad_user(const std::string& name, const std::string& why) {
  return Error(code::kBadSettings, "'backends.docker.user' ('" + name + "'): " + why,
               "give 'backends.docker.user' as 'uid:gid'");
}

}  // namespace

std::optional<std::string> user_name_of(const std::string& user) {
  std::string name = user.substr(0, user.find(':'));
  if (name.empty() || std::all_of(name.begin(), name.end(), ::isdigit)) return std::nullopt;
  return name;
}

uid_t ImageUsers::uid_of(const Daemon& daemon, const PrivateDir& dir, const std::string& image_id,
                         const std::string& name) {
  const std::string key = cache_name(image_id, name);
  {
    std::lock_guard lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) return it->second;
  }
  std::optional<uid_t> uid;
  // An image id names its contents: the answer for one never changes. Without one, nothing is
  // kept.
  const bool keep = !image_id.empty();
  if (auto text = keep ? dir.read_file(key, 64) : std::nullopt;
      text && !text->empty() && text->size() <= 10 &&
      std::all_of(text->begin(), text->end(), ::isdigit) && std::stoull(*text) < 0xffffffffULL)
    uid = static_cast<uid_t>(std::stoull(*text));
  if (!uid) {
    // A container that is created and never started: the daemon reads a file of its root.
    Container probe(daemon, "cordon-user-probe-" + new_run_id(),
                    probe_body(image_id, "user-probe"));
    Response r = daemon.call(
        "GET", "/containers/" + probe.id() + "/archive?path=" + url_encode("/etc/passwd"));
    if (r.status == 404) throw bad_user(name, "the image has no /etc/passwd to name its uid");
    if (r.status != 200)
      throw Error(code::kIsolationFailed,
                  "cannot read the image's /etc/passwd (HTTP " + std::to_string(r.status) + ")");
    std::vector<sdk::TarFile> files;
    try {
      files = sdk::read_tar(r.body);
    } catch (const std::exception& e) {
      throw Error(
          code::kIsolationFailed,
          std::string("cannot read the daemon's archive of the image's /etc/passwd: ") + e.what());
    }
    // The archive of a link holds the link alone: no regular file.
    if (files.empty())
      throw bad_user(name,
                     "the image's /etc/passwd is not a file (a link?): cordon cannot tell which "
                     "host uid the name is");
    const std::string& passwd = files.front().content;
    for (const auto& e : passwd_entries(passwd))
      if (e.name == name) {
        uid = e.uid;
        break;
      }
    if (!uid) throw bad_user(name, "no such user in the image's /etc/passwd");
    try {
      if (keep) dir.write_file(key, std::to_string(*uid), 0600);
    } catch (const Error&) {
      // A cache that cannot be written costs the next run a lookup, nothing else.
    }
  }
  if (!keep) return *uid;
  std::lock_guard lock(mutex_);
  memory_[key] = *uid;
  return *uid;
}

}  // namespace cordon::docker
