// Policy paths beneath writable directories, for backends that resolve them on the host.
//
// In the workspace or a write path the command (or an agent before it) may have planted a
// symlink. A grant there must not follow one out: `{workspace}/out -> ~/.ssh` granted for writing
// would hand the command the caller's keys. Backends call this before they resolve a policy path.
#pragma once

#include <sys/stat.h>

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// Throws Error CRD4004 when `path` (absolute, lexically normal) lies strictly beneath one of
/// `bases` and reaches its target through a symlink below that base (checked with openat2
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). A path that does not exist, or is not beneath any base,
/// passes.
CORDON_API void refuse_planted_symlink(const std::string& path,
                                       const std::vector<std::string>& bases);

/// An O_PATH descriptor (close-on-exec) of the absolute `path`, opened only if no component is a
/// symlink (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): what it names is then exactly
/// the path as written. -1 with errno otherwise (ELOOP for a symlink on the way).
CORDON_API int open_without_symlinks(const std::string& path) noexcept;

/// A symlink met while resolving a path: where it lies (canonical) and its text.
struct LinkStep {
  std::string path;
  std::string target;
  bool operator==(const LinkStep&) const = default;
};

/// Which symlinks a resolution may follow.
enum class LinkRule {
  any,            ///< every symlink
  outside_bases,  ///< none that lies beneath one of the writable bases (a sandbox could plant it)
  trusted_only,   ///< only root's, in a directory only root can write (/bin -> usr/bin, /var/run)
};

/// One path resolved once, component by component, and what it named at that moment.
struct ResolvedPath {
  std::string path;  ///< canonical (no symlink, ".", ".."); as far as resolved when missing
  bool exists = false;
  bool dir = false;
  dev_t dev = 0;  ///< with `ino`: the identity of what was found, to check it again later
  ino_t ino = 0;
  std::vector<LinkStep> links;      ///< the symlinks followed, in order
  std::optional<LinkStep> refused;  ///< the symlink the rule refused; resolution stopped there
};

/// Resolves the absolute `path` under `rule`. `bases` (absolute, canonical) are the writable
/// directories of LinkRule::outside_bases. A path without a symlink costs one openat2 and one
/// fstat; otherwise each component is opened from its parent's descriptor (O_PATH|O_NOFOLLOW),
/// so that what is followed is exactly what was checked. A missing path, or one that cannot be
/// searched, is returned with exists = false. Never throws for a path on the host.
CORDON_API ResolvedPath resolve_path(const std::string& path, LinkRule rule,
                                     const std::vector<std::string>& bases = {});

/// What a backend masks: a blocked path, or cordon's own state (Plan::protected_paths).
enum class MaskedKind { blocked, own_state };

/// The refusal, with `code`, of a masked `path` that passes through the symlink `link` in a
/// writable directory (resolve_path()'s `refused`): the command could swap the link, so no mask
/// can be bound to what it names. Names the link, and says what to name instead.
CORDON_API Error masked_link_refusal(const char* code, MaskedKind kind, const std::string& path,
                                     const LinkStep& link);

/// The workspace `path` (absolute) as a command will get it: an existing directory reached
/// through no symlink but root's system links (LinkRule::trusted_only), so that a link a sandbox
/// planted cannot silently widen a later run's workspace. Returns the canonical path. Throws
/// Error CRD4004 naming the symlink on the way and its target, CRD4007 when it is not an
/// existing directory.
CORDON_API ResolvedPath resolve_workspace(const std::string& path);

/// The names a blocked path's files have besides those beneath the path (hard links, made on
/// the host beforehand): a mask on one name hides only that name.
struct OtherNames {
  std::vector<std::string> names;  ///< to mask besides the path, all outside the writable dirs
  bool walked_all = true;          ///< false: a directory had more entries than were looked at
};

/// How many entries of a blocked directory other_names_to_mask() looks at: each costs a stat on
/// every run (about 4 us here), and a directory such as ~/.kube can hold thousands.
inline constexpr std::size_t kOtherNamesWalk = 64;

/// The other names of the blocked `path` (absolute; a regular file, or each regular file beneath
/// a directory, at most `limit` entries looked at). They are looked for in a file's own
/// directory, and directly in each of `writable` (the workspace and the write paths, where a
/// command or an agent could have planted one), not beneath them. A file with one link costs one
/// stat. Throws Error CRD1007 when a name lies in a writable directory (a mask there could be
/// raced) or when a file's link count says it has names that were not found: the run is
/// refused, never half-blocked.
CORDON_API OtherNames other_names_to_mask(const std::string& path,
                                          const std::vector<std::string>& writable,
                                          std::size_t limit = kOtherNamesWalk);

/// What a file read through the workspace file API is, of the blocked paths: the blocked path
/// that is the file `st` describes (by device and inode) under another name, or the blocked
/// directory that holds it, looked for only when it has more than one name (hard links);
/// at most `limit` entries of each blocked directory are looked at. Empty when none is.
struct BlockedName {
  std::string path;        ///< the blocked path the file is, or lies in; empty: none
  bool looked_all = true;  ///< false: a blocked directory had more entries than were looked at
};
CORDON_API BlockedName blocked_name_of(const struct stat& st,
                                       const std::vector<std::string>& blocked,
                                       std::size_t limit = 4096);

/// The run's note for a blocked directory `path` whose entries other_names_to_mask() did not
/// all look at (OtherNames::walked_all false).
CORDON_API std::string unwalked_note(const std::string& path);

}  // namespace cordon
