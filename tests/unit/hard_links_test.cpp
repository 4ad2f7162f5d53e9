// Tests of other_names_to_mask: a blocked file's other names (hard links) are found and given to
// mask, or the run is refused; a file with one name costs nothing.
#include <catch2/catch.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "error_code.hpp"

using namespace cordon;
using cordon::testing::error_of;
namespace fs = std::filesystem;

namespace {

// A scratch tree under /tmp: `ro` stands for a directory the command cannot write, `ws` for
// its workspace.
struct Tree {
  std::string root, ro, ws;
  Tree() {
    char tmpl[] = "/tmp/cordon-links-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = fs::canonical(tmpl).string();
    ro = root + "/ro";
    ws = root + "/ws";
    fs::create_directories(ro + "/secret/deeper");
    fs::create_directories(ws);
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string file(const std::string& path, const std::string& text = "x") const {
    std::ofstream(path) << text;
    return path;
  }
};

}  // namespace

TEST_CASE("hard links: a blocked file with one name has nothing else to mask") {
  Tree t;
  auto key = t.file(t.ro + "/key");
  auto out = other_names_to_mask(key, {t.ws});
  CHECK(out.names.empty());
  CHECK(out.walked_all);
  CHECK(other_names_to_mask(t.ro + "/missing", {t.ws}).names.empty());
}

TEST_CASE("hard links: another name beside a blocked file is given to mask") {
  Tree t;
  auto key = t.file(t.ro + "/key");
  fs::create_hard_link(key, t.ro + "/key-again");
  auto out = other_names_to_mask(key, {t.ws});
  CHECK(out.names == std::vector<std::string>{t.ro + "/key-again"});
}

TEST_CASE("hard links: a blocked file linked into the workspace is refused, naming the link") {
  Tree t;
  auto key = t.file(t.ro + "/key");
  fs::create_hard_link(key, t.ws + "/innocent");
  auto why = error_of([&] { other_names_to_mask(key, {t.ws}); });
  CHECK(why.rfind("CRD1007", 0) == 0);
  CHECK(why.find(t.ws + "/innocent") != std::string::npos);
  // The same file outside any writable directory's listing: its name cannot be found.
  fs::create_directories(t.root + "/elsewhere");
  fs::rename(t.ws + "/innocent", t.root + "/elsewhere/innocent");
  why = error_of([&] { other_names_to_mask(key, {t.ws}); });
  CHECK(why.find("has 2 names (hard links) and cordon found 1") != std::string::npos);
}

TEST_CASE("hard links: a file of a blocked directory linked out of it is found or refused") {
  Tree t;
  auto inner = t.file(t.ro + "/secret/deeper/token");
  // Two names inside the blocked directory: the mask on the directory covers both.
  fs::create_hard_link(inner, t.ro + "/secret/token-again");
  CHECK(other_names_to_mask(t.ro + "/secret", {t.ws}).names.empty());
  // A third in the workspace: refused.
  fs::create_hard_link(inner, t.ws + "/copy");
  auto why = error_of([&] { other_names_to_mask(t.ro + "/secret", {t.ws}); });
  CHECK(why.rfind("CRD1007", 0) == 0);
  CHECK(why.find(t.ws + "/copy") != std::string::npos);
  fs::remove(t.ws + "/copy");
  // A third nowhere cordon looks: refused, since it cannot be masked.
  fs::create_hard_link(inner, t.root + "/hidden");
  why = error_of([&] { other_names_to_mask(t.ro + "/secret", {t.ws}); });
  CHECK(why.find("has 3 names") != std::string::npos);
}

TEST_CASE("hard links: a blocked directory too large to walk says so") {
  Tree t;
  for (int i = 0; i < 5; ++i) t.file(t.ro + "/secret/f" + std::to_string(i));
  CHECK_FALSE(other_names_to_mask(t.ro + "/secret", {t.ws}, 3).walked_all);
  CHECK(other_names_to_mask(t.ro + "/secret", {t.ws}, 100).walked_all);
}
