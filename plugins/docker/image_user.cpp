// The uid an image gives a user name (image_user.hpp).
#include "image_user.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>

#include "api.hpp"
#include "container.hpp"
#include "host_side.hpp"

namespace cordon::docker {

namespace {

constexpr std::size_t kBlock = 512;

// An octal number field of a tar header (NUL- or space-terminated); nullopt if it is not one.
std::optional<std::uint64_t> octal(std::string_view field) {
  std::uint64_t v = 0;
  bool digits = false;
  for (char c : field) {
    if (c == '\0' || c == ' ') {
      if (digits) break;
      continue;
    }
    if (c < '0' || c > '7' || v > (UINT64_MAX >> 3)) return std::nullopt;
    v = (v << 3) | static_cast<std::uint64_t>(c - '0');
    digits = true;
  }
  if (!digits) return std::nullopt;
  return v;
}

// The "size" record of a PAX extended header ("LEN size=N\n" records), if any.
std::optional<std::uint64_t> pax_size(std::string_view records) {
  while (!records.empty()) {
    auto space = records.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    std::uint64_t len = 0;
    for (char c : records.substr(0, space)) {
      if (c < '0' || c > '9' || len > 1u << 20) return std::nullopt;
      len = len * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (len <= space + 1 || len > records.size()) return std::nullopt;
    std::string_view record = records.substr(space + 1, len - space - 2);  // without the '\n'
    if (record.substr(0, 5) == "size=") {
      std::uint64_t v = 0;
      for (char c : record.substr(5)) {
        if (c < '0' || c > '9' || v > (UINT64_MAX / 10)) return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      return v;
    }
    records.remove_prefix(len);
  }
  return std::nullopt;
}

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

std::optional<std::string> tar_first_file(std::string_view tar) {
  std::optional<std::uint64_t> pax;
  while (tar.size() >= kBlock) {
    std::string_view header = tar.substr(0, kBlock);
    if (std::all_of(header.begin(), header.end(), [](char c) { return c == '\0'; }))
      return std::nullopt;  // the end of the archive
    auto size = octal(header.substr(124, 12));
    if (!size || *size > tar.size() - kBlock) return std::nullopt;
    char type = header[156];
    std::string_view data = tar.substr(kBlock, static_cast<std::size_t>(*size));
    std::size_t padded = static_cast<std::size_t>((*size + kBlock - 1) / kBlock * kBlock);
    if (type == 'x') {  // a PAX header for the next entry
      pax = pax_size(data);
    } else if (type == 'g' || type == 'L' || type == 'K') {
      // global PAX records, GNU long names: nothing this reads
    } else if (type == '0' || type == '\0' || type == '7') {
      std::uint64_t real = pax.value_or(*size);
      if (real > tar.size() - kBlock) return std::nullopt;
      return std::string(tar.substr(kBlock, static_cast<std::size_t>(real)));
    } else {
      return std::nullopt;  // a link, a directory, a device
    }
    if (padded > tar.size() - kBlock) return std::nullopt;
    tar.remove_prefix(kBlock + padded);
  }
  return std::nullopt;
}

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
    boost::json::object body{{"Image", image_id},
                             {"Cmd", boost::json::array{"/"}},
                             {"Labels", boost::json::object{{kRunLabel, "user-probe"}}}};
    for (const auto& l : owner_labels())
      body["Labels"].as_object()[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
    Container probe(daemon, "cordon-user-probe-" + new_run_id(), body);
    Response r = daemon.call(
        "GET", "/containers/" + probe.id() + "/archive?path=" + url_encode("/etc/passwd"));
    if (r.status == 404) throw bad_user(name, "the image has no /etc/passwd to name its uid");
    if (r.status != 200)
      throw Error(code::kIsolationFailed,
                  "cannot read the image's /etc/passwd (HTTP " + std::to_string(r.status) + ")");
    auto passwd = tar_first_file(r.body);
    if (!passwd)
      throw bad_user(name,
                     "the image's /etc/passwd is not a file (a link?): cordon cannot tell which "
                     "host uid the name is");
    for (const auto& e : passwd_entries(*passwd))
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
