// The workspace file API on the remote host over SFTP, against the fixture's sshd: what works,
// and each way out of the workspace refused (`..`, absolute paths, symlinks), both ways.
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support.hpp"

using namespace cordon;
using namespace cordon::ssh;
using namespace cordon::ssh::test;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<WorkspaceFiles> open_remote(const RemoteWorkspace& ws, WorkspaceRules rules = {}) {
  auto files = backend().open_workspace(settings(0), ws.dir, rules);
  REQUIRE(files);
  return files;
}

std::string code_thrown(const std::function<void()>& op) {
  try {
    op();
  } catch (const Error& e) {
    return e.code();
  }
  return "";
}

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("ssh sftp: write, read, list and remove in the remote workspace", "[ssh][sftp]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  auto files = open_remote(ws);
  std::string bytes("bin\0ary\xff\n", 9);
  files->write("a.txt", bytes);
  CHECK(contents(ws.dir / "a.txt") == bytes);
  CHECK(files->read("a.txt") == bytes);
  files->write("deep/er/b.txt", "b", {.parents = true});
  CHECK(contents(ws.dir / "deep/er/b.txt") == "b");
  CHECK(code_thrown([&] { files->write("missing/c.txt", "c"); }) == code::kWorkspaceIo);

  auto entries = files->list("");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "a.txt");
  CHECK(entries[0].kind == WorkspaceEntry::Kind::file);
  CHECK(entries[0].size == bytes.size());
  CHECK(entries[1].name == "deep");
  CHECK(entries[1].kind == WorkspaceEntry::Kind::directory);

  // A replaced file keeps its permission bits, less set-user-ID.
  ::chmod((ws.dir / "a.txt").c_str(), 04750);
  files->write("a.txt", "new");
  struct stat st {};
  REQUIRE(::stat((ws.dir / "a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(contents(ws.dir / "a.txt") == "new");
  // No temporary file is left beside it.
  CHECK(files->list("").size() == 2);

  files->remove("deep/er/b.txt");
  files->remove("deep/er");
  CHECK_FALSE(fs::exists(ws.dir / "deep/er"));
}

TEST_CASE("ssh sftp: `..`, absolute paths and symlinks out are refused (CRD4004)", "[ssh][sftp]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  RemoteWorkspace outside;
  outside.put("target.txt", "outside");
  fs::create_directory_symlink(outside.dir, ws.dir / "out");
  fs::create_symlink(outside.dir / "target.txt", ws.dir / "link.txt");
  ws.put("inside.txt", "inside");
  auto files = open_remote(ws);

  CHECK(code_thrown([&] {
          files->read("../" + outside.dir.filename().string() + "/target.txt");
        }) == code::kPathEscape);
  CHECK(code_thrown([&] { files->read((outside.dir / "target.txt").string()); }) ==
        code::kPathEscape);
  CHECK(code_thrown([&] { files->read("out/target.txt"); }) == code::kPathEscape);
  CHECK(code_thrown([&] { files->read("link.txt"); }) == code::kPathEscape);
  CHECK(code_thrown([&] { files->write("out/target.txt", "pwned"); }) == code::kPathEscape);
  CHECK(code_thrown([&] { files->write("link.txt", "pwned"); }) == code::kPathEscape);
  CHECK(code_thrown([&] { files->write("out/new.txt", "x", {.parents = true}); }) ==
        code::kPathEscape);
  CHECK(code_thrown([&] { files->list("out"); }) == code::kPathEscape);
  CHECK(contents(outside.dir / "target.txt") == "outside");
  CHECK_FALSE(fs::exists(outside.dir / "new.txt"));
  // The allowed twins: the file inside reads, and removing the link removes only the link.
  CHECK(files->read("inside.txt") == "inside");
  CHECK(files->read("./inside.txt") == "inside");
  files->remove("link.txt");
  CHECK(fs::exists(outside.dir / "target.txt"));

  // A workspace root that is itself a symlink is refused.
  fs::create_directory_symlink(ws.dir, outside.dir / "ws-link");
  CHECK(code_thrown([&] { backend().open_workspace(settings(0), outside.dir / "ws-link", {}); }) ==
        code::kPathEscape);
}

TEST_CASE("ssh sftp: blocked paths and the size caps hold", "[ssh][sftp]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  ws.put("secret.txt", "hidden");
  ws.put("big.txt", std::string(100, 'x'));
  WorkspaceRules rules;
  rules.blocked = {ws.dir / "secret.txt"};
  rules.max_read_bytes = 50;
  rules.max_write_bytes = 50;
  auto files = open_remote(ws, rules);
  CHECK(code_thrown([&] { files->read("secret.txt"); }) == code::kBlockedPath);
  CHECK(code_thrown([&] { files->write("secret.txt", "x"); }) == code::kBlockedPath);
  CHECK(code_thrown([&] { files->read("big.txt"); }) == code::kWorkspaceIo);
  CHECK(code_thrown([&] { files->write("new.txt", std::string(51, 'y')); }) == code::kWorkspaceIo);
  files->write("new.txt", std::string(50, 'y'));
  CHECK(files->read("new.txt") == std::string(50, 'y'));
}

TEST_CASE("ssh sftp: `cordon fs --backend ssh` reads and writes the remote workspace",
          "[ssh][sftp]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  std::string config = ws.dir.string() + "-config.toml";
  {
    std::ofstream c(config);
    c << "[backends.ssh]\nhost = \"127.0.0.1\"\nport = " << fixture().ports[0] << "\nuser = \""
      << fixture().user << "\"\nidentity = \"" << fixture().dir << "/client_key\"\n"
      << "known_hosts = \"" << fixture().dir << "/known_hosts\"\n";
  }
  std::string base = std::string(CORDON_CLI) + " fs %s --backend ssh --config " + config +
                     " --workspace " + ws.dir.string() + " %s 2>&1";
  auto run = [&](const char* verb, const char* rest) {
    char line[4096];
    std::snprintf(line, sizeof line, base.c_str(), verb, rest);
    std::string out;
    FILE* p = ::popen(line, "r");
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    int status = ::pclose(p);
    return std::pair{WEXITSTATUS(status), out};
  };
  auto w = run("write", "note.txt < /etc/hostname");
  INFO(w.second);
  CHECK(w.first == 0);
  CHECK(contents(ws.dir / "note.txt") == contents("/etc/hostname"));
  auto r = run("read", "note.txt");
  CHECK(r.second == contents("/etc/hostname"));
  auto bad = run("read", "../etc/passwd");
  CHECK(bad.first == 2);
  CHECK(bad.second.find("CRD4004") != std::string::npos);
  fs::remove(config);
}
