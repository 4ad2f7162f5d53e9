// Whether the command's identity can write the workspace it is granted: the pure judgement, and
// a run as root in a workspace that belongs to root.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "support.hpp"
#include "workspace_access.hpp"

using namespace cordon;
using namespace cordon::landlock;
using namespace cordon::landlock::test;

namespace {

Identity as_root_for(uid_t uid, gid_t gid) {
  Identity id;
  id.uid = uid;
  id.gid = gid;
  id.parent_writes_maps = true;
  return id;
}

}  // namespace

TEST_CASE("workspace access: the permission class that applies decides", "[identity]") {
  DirAccess root_dir{0, 0, S_IFDIR | 0755, false};
  CHECK(may_write(0, 0, root_dir));
  CHECK_FALSE(may_write(65534, 65534, root_dir));
  // The group's bits for a member, even when the others' would allow it (as the kernel does).
  CHECK(may_write(65534, 0, DirAccess{0, 0, S_IFDIR | 0775, false}));
  CHECK_FALSE(may_write(65534, 0, DirAccess{0, 0, S_IFDIR | 0757, false}));
  CHECK(may_write(65534, 65534, DirAccess{0, 0, S_IFDIR | 0757, false}));
  // Writing into a directory takes search too.
  CHECK_FALSE(may_write(65534, 65534, DirAccess{0, 0, S_IFDIR | 0776, false}));
  CHECK(may_write(1000, 1000, DirAccess{1000, 1000, S_IFDIR | 0700, false}));
}

TEST_CASE("workspace access: a workspace the command cannot write is noted, with the way out",
          "[identity]") {
  DirAccess root_dir{0, 0, S_IFDIR | 0755, false};
  auto note = unwritable_workspace_note(as_root_for(65534, 65534), root_dir, "/w");
  REQUIRE(note);
  CHECK(*note ==
        "the command runs as uid 65534 and cannot write its workspace '/w' (owner uid 0, gid 0, "
        "mode 0755): set backends.landlock.uid (and gid) to a user that may write it, or give "
        "the workspace to uid 65534");
  // Nothing to say: writable, judged by an ACL, or cordon is not root.
  CHECK_FALSE(unwritable_workspace_note(as_root_for(65534, 65534),
                                        DirAccess{65534, 65534, S_IFDIR | 0755, false}, "/w"));
  CHECK_FALSE(unwritable_workspace_note(as_root_for(65534, 65534),
                                        DirAccess{0, 0, S_IFDIR | 0755, true}, "/w"));
  Identity caller = as_root_for(1000, 1000);
  caller.parent_writes_maps = false;
  CHECK_FALSE(unwritable_workspace_note(caller, root_dir, "/w"));
}

TEST_CASE("workspace access: as root, a root-owned workspace is noted in the run",
          "[userns][identity]") {
  if (!needs_root() || !sandbox_available()) return;
  TempDir ws("cordon-ll-", 0);  // root's, mode 0755
  CaptureSink sink;
  auto r = run_sh(base_policy(ws.path(), ""), ws.path(), "touch made", sink);
  for (const auto& n : r.notes) UNSCOPED_INFO("note: " << n);
  CHECK(r.exit_code != 0);
  auto noted = std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.starts_with("the command runs as uid 65534 and cannot write its workspace '") &&
           n.find("backends.landlock.uid") != std::string::npos;
  });
  CHECK(noted);
  // The same as the workspace's owner: nothing to note.
  TempDir owned;  // nobody's
  auto fine = run_sh(base_policy(owned.path(), ""), owned.path(), "touch made", sink);
  CHECK(fine.exit_code == 0);
  CHECK(std::none_of(fine.notes.begin(), fine.notes.end(), [](const std::string& n) {
    return n.find("cannot write its workspace") != std::string::npos;
  }));
}
