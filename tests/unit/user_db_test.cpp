// The user database: /etc/passwd parsing, and the files-first lookup of cordon's front end,
// which calls the load hook before it would ask NSS.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cordon/load_hook.hpp>
#include <cordon/user_db.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace cordon;

namespace {

std::vector<std::string> g_loads;

void record(const std::filesystem::path& file) { g_loads.push_back(file.string()); }

// Files-first lookups with a recording hook, undone however the test ends.
struct FilesFirst {
  FilesFirst() {
    g_loads.clear();
    set_load_hook(record);
    set_user_lookup_files_first(true);
  }
  ~FilesFirst() {
    set_user_lookup_files_first(false);
    set_load_hook(nullptr);
  }
};

// A uid no sane host has an account for.
constexpr uid_t kStranger = 3987654321u;

}  // namespace

TEST_CASE("user_db: passwd lines give uid, gid, name and home", "[user_db]") {
  const char* text =
      "root:x:0:0:root:/root:/bin/bash\n"
      "# not an entry\n"
      "broken:x:12\n"
      "+::::::\n"
      "odd:x:7x:7:odd:/odd:/bin/sh\n"
      "dev:x:1000:1001:Dev,,,:/home/dev:/bin/bash\n"
      "dup:x:1000:5:second:/nowhere:/bin/sh\n"
      "last:x:2000:2000::/home/last:";
  auto dev = passwd_entry(text, 1000);
  REQUIRE(dev);
  CHECK(dev->name == "dev");
  CHECK(dev->gid == 1001);
  CHECK(dev->home == "/home/dev");  // the first entry of the uid wins
  auto last = passwd_entry(text, 2000);
  REQUIRE(last);
  CHECK(last->home == "/home/last");
  CHECK(passwd_entry(text, 0)->name == "root");
  CHECK_FALSE(passwd_entry(text, 7));   // not a number
  CHECK_FALSE(passwd_entry(text, 12));  // too few fields
  CHECK_FALSE(passwd_entry(text, 3));
  CHECK_FALSE(passwd_entry("", 0));
  CHECK_FALSE(passwd_entry("a:x:1:1:a:/a:/bin/sh:extra\n", 1));
}

TEST_CASE("user_db: files first answers from /etc/passwd and asks the hook before NSS",
          "[user_db]") {
  FilesFirst guard;
  // root is in /etc/passwd on every host cordon supports.
  auto root = find_user(0);
  REQUIRE(root);
  CHECK(root->home == "/root");
  CHECK(g_loads.empty());
  // A uid that no file holds: the hook hears of NSS first (the front end hands off there).
  auto stranger = find_user(kStranger);
  CHECK_FALSE(stranger);
  REQUIRE(g_loads.size() == 1);
  CHECK(g_loads[0].find("libnss") != std::string::npos);
  CHECK(g_loads[0].find(std::to_string(kStranger)) != std::string::npos);
}

TEST_CASE("user_db: by default NSS answers and no hook runs", "[user_db]") {
  g_loads.clear();
  set_load_hook(record);
  auto root = find_user(0);
  CHECK_FALSE(find_user(kStranger));
  set_load_hook(nullptr);
  REQUIRE(root);
  CHECK(root->uid == 0);
  CHECK(g_loads.empty());
}
