// The user database: an account's primary group and home, for the identity a sandbox takes and
// for the caller's HOME when the environment has none.
//
// Normally this is getpwuid_r, that is NSS (files, systemd, LDAP, ... as nsswitch.conf says).
// cordon's static front end cannot use NSS, whose modules are shared objects: there the lookup
// reads /etc/passwd itself (NSS's `files` source) and, when the account is not in it, calls the
// load hook (cordon/load_hook.hpp) so that the full executable answers instead.
#pragma once

#include <cordon/sdk/export.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// One account.
struct UserEntry {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
  std::string home;
};

/// The account of `uid` from getpwuid_r; with files first set, from /etc/passwd when it is
/// there, else from getpwuid_r after the load hook. nullopt when no source knows it.
CORDON_API std::optional<UserEntry> find_user(uid_t uid);

/// Looks in /etc/passwd before NSS, and calls the load hook before NSS is asked (cordon's front
/// end). Not thread-safe: set it at start.
CORDON_API void set_user_lookup_files_first(bool on);

/// The entry of `uid` in passwd(5) text, the first one when there are several. Lines that are
/// not seven fields with numeric ids are skipped. Pure.
CORDON_API std::optional<UserEntry> passwd_entry(std::string_view text, uid_t uid);

/// Every entry of passwd(5) text, in order; lines that are not seven fields with numeric ids are
/// skipped. Pure.
CORDON_API std::vector<UserEntry> passwd_entries(std::string_view text);

/// The accounts of /etc/passwd (not of other NSS sources: they cannot be listed cheaply).
CORDON_API std::vector<UserEntry> local_users();

}  // namespace cordon
