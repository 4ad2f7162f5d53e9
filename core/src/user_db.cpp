// The user database (cordon/user_db.hpp).
#include <cordon/load_hook.hpp>
#include <cordon/user_db.hpp>

#include <pwd.h>

#include <charconv>
#include <fstream>
#include <vector>

namespace cordon {

namespace {

bool g_files_first = false;

// /etc/passwd is small; anything past this is not read.
constexpr std::size_t kPasswdCap = 16u << 20;

template <class T>
std::optional<T> number(std::string_view s) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// name:password:uid:gid:gecos:home:shell
std::optional<UserEntry> parse_line(std::string_view line) {
  std::string_view field[7];
  for (std::size_t n = 0; n < 7; ++n) {
    auto colon = line.find(':');
    // Seven fields exactly: the last one ends the line, every other one ends at a colon.
    if ((colon == std::string_view::npos) != (n == 6)) return std::nullopt;
    field[n] = line.substr(0, colon);
    if (colon != std::string_view::npos) line.remove_prefix(colon + 1);
  }
  auto uid = number<uid_t>(field[2]);
  auto gid = number<gid_t>(field[3]);
  if (!uid || !gid || field[0].empty()) return std::nullopt;
  return UserEntry{*uid, *gid, std::string(field[0]), std::string(field[5])};
}

std::string passwd_text() {
  std::ifstream in("/etc/passwd", std::ios::binary);
  if (!in) return {};
  std::string text;
  char chunk[8192];
  while (text.size() < kPasswdCap && (in.read(chunk, sizeof chunk) || in.gcount() > 0))
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  return text;
}

std::optional<UserEntry> from_files(uid_t uid) { return passwd_entry(passwd_text(), uid); }

std::optional<UserEntry> from_nss(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::nullopt;
  return UserEntry{found->pw_uid, found->pw_gid, found->pw_name ? found->pw_name : "",
                   found->pw_dir ? found->pw_dir : ""};
}

}  // namespace

std::optional<UserEntry> passwd_entry(std::string_view text, uid_t uid) {
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (auto entry = parse_line(line); entry && entry->uid == uid) return entry;
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return std::nullopt;
}

std::vector<UserEntry> passwd_entries(std::string_view text) {
  std::vector<UserEntry> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    if (auto entry = parse_line(text.substr(0, nl))) out.push_back(std::move(*entry));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<UserEntry> local_users() { return passwd_entries(passwd_text()); }

void set_user_lookup_files_first(bool on) { g_files_first = on; }

std::optional<UserEntry> find_user(uid_t uid) {
  if (g_files_first) {
    if (auto entry = from_files(uid)) return entry;
    // NSS would load its modules (nsswitch.conf): the load hook decides.
    detail::before_load("libnss (the user database, for uid " + std::to_string(uid) + ")");
  }
  return from_nss(uid);
}

}  // namespace cordon
