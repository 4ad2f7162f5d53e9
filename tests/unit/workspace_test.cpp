// Tests of the workspace file API: kept beneath the workspace by the kernel, atomic writes.
#include <catch2/catch.hpp>
#include <cordon/workspace.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "error_code.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
namespace fs = std::filesystem;

namespace {

// A fresh directory holding `ws/` (the workspace) and `outside/`, removed afterwards.
struct Scratch {
  fs::path base;
  Scratch() {
    char tmpl[] = "/tmp/cordon-ws-XXXXXX";
    base = ::mkdtemp(tmpl);
    fs::create_directories(base / "ws" / "sub");
    fs::create_directories(base / "outside");
    std::ofstream(base / "outside" / "secret") << "top secret";
    std::ofstream(base / "ws" / "hello.txt") << "hello";
  }
  ~Scratch() { fs::remove_all(base); }
  fs::path ws() const { return base / "ws"; }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("workspace: reads and writes inside the workspace", "[workspace]") {
  Scratch s;
  Workspace w(s.ws());
  CHECK(w.read("hello.txt") == "hello");
  w.write("sub/new.txt", "data");
  CHECK(slurp(s.ws() / "sub" / "new.txt") == "data");
  w.write("hello.txt", "replaced");
  CHECK(w.read("./hello.txt") == "replaced");
  auto entries = w.list("");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "hello.txt");
  CHECK(entries[0].kind == WorkspaceEntry::Kind::file);
  CHECK(entries[1].name == "sub");
  CHECK(entries[1].kind == WorkspaceEntry::Kind::directory);
  w.remove("sub/new.txt");
  CHECK_FALSE(fs::exists(s.ws() / "sub" / "new.txt"));
  // No temporary file is left behind.
  CHECK(w.list("sub").empty());
}

TEST_CASE("workspace: paths that leave the workspace are refused", "[workspace]") {
  Scratch s;
  Workspace w(s.ws());
  fs::create_symlink(s.base / "outside", s.ws() / "link-out");
  fs::create_symlink("../outside/secret", s.ws() / "rel-out");
  fs::create_symlink("/proc/self/root/etc/passwd", s.ws() / "magic");
  for (const char* p : {"../outside/secret", "/etc/passwd", "sub/../../outside/secret",
                        "link-out/secret", "rel-out", "magic"}) {
    INFO(p);
    CHECK(error_code_of([&] { w.read(p); }) == "CRD4004");
  }
  CHECK(error_code_of([&] { w.write("../outside/new", "x"); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("link-out/new", "x"); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("/tmp/x", "x"); }) == "CRD4004");
  CHECK(error_code_of([&] { w.list("link-out"); }) == "CRD4004");
  CHECK(error_code_of([&] { w.remove("link-out/secret"); }) == "CRD4004");
  CHECK(error_code_of([&] { w.remove(".."); }) == "CRD4004");
  CHECK_FALSE(fs::exists(s.base / "outside" / "new"));
  CHECK(slurp(s.base / "outside" / "secret") == "top secret");
}

TEST_CASE("workspace: a symlink inside that stays inside is followed", "[workspace]") {
  Scratch s;
  fs::create_symlink("hello.txt", s.ws() / "alias");
  Workspace w(s.ws());
  CHECK(w.read("alias") == "hello");
}

TEST_CASE("workspace: writing over a symlink replaces the link, not its target", "[workspace]") {
  Scratch s;
  fs::create_symlink(s.base / "outside" / "secret", s.ws() / "trap");
  Workspace w(s.ws());
  w.write("trap", "mine");
  CHECK(slurp(s.base / "outside" / "secret") == "top secret");
  CHECK_FALSE(fs::is_symlink(s.ws() / "trap"));
  CHECK(slurp(s.ws() / "trap") == "mine");
}

TEST_CASE("workspace: size caps and blocked paths", "[workspace]") {
  Scratch s;
  WorkspaceRules rules;
  rules.max_read_bytes = 4;
  rules.max_write_bytes = 3;
  fs::create_directories(s.ws() / "private");
  std::ofstream(s.ws() / "private" / "key") << "k";
  rules.blocked = {fs::canonical(s.ws()) / "private"};
  Workspace w(s.ws(), rules);
  CHECK(error_code_of([&] { w.read("hello.txt"); }) == "CRD4009");
  CHECK(error_code_of([&] { w.write("a", "abcd"); }) == "CRD4009");
  CHECK(error_code_of([] {}) == "");
  w.write("a", "abc");
  CHECK(w.read("a") == "abc");
  CHECK(error_code_of([&] { w.read("private/key"); }) == "CRD4008");
  CHECK(error_code_of([&] { w.write("private/key", "x"); }) == "CRD4008");
  CHECK(error_code_of([&] { w.list("private"); }) == "CRD4008");
  CHECK(slurp(s.ws() / "private" / "key") == "k");
}

TEST_CASE("workspace: a blocked file is refused itself, not only through its directory",
          "[workspace]") {
  Scratch s;
  std::ofstream(s.ws() / ".env") << "SECRET=1";
  std::ofstream(s.ws() / "notes") << "n";
  WorkspaceRules rules;
  rules.blocked = {fs::canonical(s.ws()) / ".env"};
  Workspace w(s.ws(), rules);
  CHECK(error_code_of([&] { w.write(".env", "SECRET=planted"); }) == "CRD4008");
  CHECK(error_code_of([&] { w.remove(".env"); }) == "CRD4008");
  CHECK(error_code_of([&] { w.read(".env"); }) == "CRD4008");
  CHECK(slurp(s.ws() / ".env") == "SECRET=1");
  // Its neighbours are ordinary files.
  w.write("notes", "changed");
  CHECK(w.read("notes") == "changed");
  w.remove("notes");
  CHECK_FALSE(fs::exists(s.ws() / "notes"));
}

TEST_CASE("workspace: a missing workspace or file is a clear error", "[workspace]") {
  CHECK(error_code_of([] { Workspace w("/nonexistent/cordon-ws"); }) == "CRD4004");
  Scratch s;
  Workspace w(s.ws());
  CHECK(error_code_of([&] { w.read("nope"); }) == "CRD4009");
  CHECK(error_code_of([&] { w.write("nodir/x", "1"); }) == "CRD4009");
  CHECK(error_code_of([&] { w.read("sub"); }) == "CRD4009");
}

TEST_CASE("workspace: a symlink swapped in mid-operation never lets a write out",
          "[workspace][race]") {
  Scratch s;
  Workspace w(s.ws());
  fs::path flip = s.ws() / "flip";
  fs::path target = s.base / "outside";
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    std::error_code ec;
    while (!stop) {
      fs::remove_all(flip, ec);
      fs::create_directory(flip, ec);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      fs::remove_all(flip, ec);
      fs::create_symlink(target, flip, ec);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  int written = 0, refused = 0;
  int attempts = 0;
  // 10,000 writes at least; more, for up to 60 s, until both sides of the race were hit (on a
  // loaded machine the flipper thread may get little time).
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (; attempts < 10000 ||
         ((written == 0 || refused == 0) && std::chrono::steady_clock::now() < give_up);
       ++attempts) {
    try {
      w.write("flip/payload", "x");
      ++written;
    } catch (const Error& e) {
      ++refused;
    }
  }
  stop = true;
  flipper.join();
  INFO("written " << written << ", refused " << refused);
  CHECK(written + refused == attempts);
  CHECK(refused > 0);  // the symlink was seen
  CHECK(written > 0);  // and so was the directory: the race really ran both ways
  CHECK_FALSE(fs::exists(target / "payload"));
  for (auto& e : fs::directory_iterator(target)) CHECK(e.path().filename() == "secret");
}
