// `cordon fs write` through the real CLI: --parents, and what a replaced file keeps.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli.hpp"

using namespace itest;
namespace fs = std::filesystem;

namespace {

// `printf DATA | cordon fs write ARGS...` (the verb reads standard input), with HOME = `home`
// and no XDG base directories when `home` is given.
escape::Exit fs_write(const std::string& data, const std::vector<std::string>& args,
                      const std::string& home = {}) {
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "d=$1; shift; printf %s \"$d\" | \"$0\" fs write \"$@\"", CORDON_CLI,
            data};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  if (!home.empty()) {
    o.set_env = {{"HOME", home}};
    o.unset_env = {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"};
  }
  return escape::run_process(o);
}

}  // namespace

TEST_CASE("fs: write --parents creates missing directories, which are CRD4009 without it", "[fs]") {
  Scratch s;
  std::string ws = (s / "ws").string();
  fs::create_directories(ws);
  auto refused = fs_write("note", {"--workspace", ws, "notes/a.txt"});
  CHECK(refused.status == 2);
  CHECK(refused.err.find("CRD4009") != std::string::npos);
  CHECK_FALSE(fs::exists(s / "ws" / "notes"));
  auto made = fs_write("note", {"--workspace", ws, "--parents", "notes/deeper/a.txt"});
  INFO(made.err);
  CHECK(made.status == 0);
  CHECK(slurp(s / "ws" / "notes" / "deeper" / "a.txt") == "note");
  fs::create_symlink(s / "ws" / "notes", s / "ws" / "link");
  auto linked = fs_write("x", {"--workspace", ws, "--parents", "link/b/c.txt"});
  CHECK(linked.status == 2);
  CHECK(linked.err.find("CRD4004") != std::string::npos);
  CHECK_FALSE(fs::exists(s / "ws" / "notes" / "b"));
}

TEST_CASE("fs: write cannot rewrite the policy file it is given, nor one it extends", "[fs]") {
  Scratch s;
  std::string ws = (s / "ws").string();
  fs::create_directories(s / "ws" / "conf");
  std::ofstream(s / "ws" / "conf" / "base.toml") << "version = 1\n[policy]\nname = \"base\"\n";
  std::ofstream(s / "ws" / "conf" / "policy.toml")
      << "version = 1\n[policy]\nextends = \"./base.toml\"\n";
  const std::string policy = (s / "ws" / "conf" / "policy.toml").string();
  const std::string base = slurp(s / "ws" / "conf" / "base.toml"), top = slurp(policy);
  auto other = fs_write("note", {"--workspace", ws, "--policy", policy, "conf/notes.txt"});
  INFO(other.err);
  CHECK(other.status == 0);  // the rest of the workspace is writable
  for (const char* name : {"conf/policy.toml", "conf/base.toml"}) {
    auto r = fs_write("[network]\nallow = true\n", {"--workspace", ws, "--policy", policy, name});
    INFO(name << ": " << r.err);
    CHECK(r.status != 0);
  }
  CHECK(slurp(policy) == top);
  CHECK(slurp(s / "ws" / "conf" / "base.toml") == base);
}

TEST_CASE("fs: write keeps the mode of the file it replaces", "[fs]") {
  Scratch s;
  std::string ws = (s / "ws").string();
  fs::create_directories(ws);
  std::ofstream(s / "ws" / "run.sh") << "#!/bin/sh\n";
  fs::permissions(s / "ws" / "run.sh", fs::perms(0755));
  auto r = fs_write("#!/bin/sh\necho hi\n", {"--workspace", ws, "run.sh"});
  INFO(r.err);
  CHECK(r.status == 0);
  struct stat st {};
  REQUIRE(::stat((s / "ws" / "run.sh").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(slurp(s / "ws" / "run.sh") == "#!/bin/sh\necho hi\n");
}

TEST_CASE("fs: under root, a file the command made stays the command's to append to after a write",
          "[fs][root][userns]") {
  if (::geteuid() != 0) {
    WARN("skipping: needs root (the command runs as the workspace's owner)");
    return;
  }
  Scratch s;
  std::string ws = (s / "ws").string(), policy = (s / "policy.toml").string();
  fs::create_directories(ws);
  REQUIRE(::chown(ws.c_str(), 4242, 4242) == 0);
  std::ofstream(policy) << "version = 1\n[policy]\nname = \"fs-owner\"\n";
  if (!landlock_usable(policy)) return;
  auto run = [&](const std::string& script) {
    return run_cli({"run", "--backend", "landlock", "--policy", policy, "--workspace", ws, "--",
                    "sh", "-c", script});
  };
  REQUIRE(run("echo made > log").status == 0);
  auto w = fs_write("replaced\n", {"--workspace", ws, "log"});
  INFO(w.err);
  REQUIRE(w.status == 0);
  auto append = run("echo appended >> log");
  INFO(append.err);
  CHECK(append.status == 0);
  CHECK(slurp(s / "ws" / "log") == "replaced\nappended\n");
}

TEST_CASE("fs: the file API keeps cordon's own state out of reach, as a run does", "[fs]") {
  Scratch s;
  const std::string home = (s / "home").string();
  fs::create_directories(home);
  // What a job left in its directory, which a later cordon reads back.
  fs::path job = s / "home" / ".local" / "state" / "cordon" / "jobs" / "j1";
  fs::create_directories(job);
  std::ofstream(job / "output.log") << "another job's output\n";
  auto fs_read = [&](const std::string& path) {
    escape::SpawnOptions o;
    o.argv = {CORDON_CLI, "fs", "read", "--workspace", home, path};
    o.set_env = {{"HOME", home}};
    o.unset_env = {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"};
    return escape::run_process(o);
  };
  // The rest of the home is the workspace's, both ways.
  auto wrote = fs_write("mine", {"--workspace", home, "notes.txt"}, home);
  INFO(wrote.err);
  CHECK(wrote.status == 0);
  CHECK(fs_read("notes.txt").out == "mine");
  auto read = fs_read(".local/state/cordon/jobs/j1/output.log");
  CHECK(read.status == 2);
  CHECK(read.err.find("CRD") != std::string::npos);
  CHECK(read.out.find("another job") == std::string::npos);
  for (const char* path : {".config/cordon/config.toml", ".local/state/cordon/jobs/j2/job.json",
                           ".local/state/cordon/jobs/j1/output.log"}) {
    auto r = fs_write("[dispatch]\norder = [\"none\"]\n", {"--workspace", home, "--parents", path},
                      home);
    INFO(path << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("blocked") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(s / "home" / ".config" / "cordon" / "config.toml"));
  CHECK_FALSE(fs::exists(job.parent_path() / "j2"));
  CHECK(slurp(job / "output.log") == "another job's output\n");
}

TEST_CASE("fs: with the XDG bases elsewhere, the home's default state stays out of reach too",
          "[fs]") {
  Scratch s;
  const std::string home = (s / "home").string(), xdg = (s / "xdg").string();
  fs::create_directories(home);
  fs::create_directories(xdg);
  fs::path job = s / "home" / ".local" / "state" / "cordon" / "jobs" / "j1";
  fs::create_directories(job);
  std::ofstream(job / "output.log") << "another job's output\n";
  auto call = [&](const std::vector<std::string>& args, const std::string& input = {}) {
    escape::SpawnOptions o;
    o.argv = {"/bin/sh", "-c", "d=$1; shift; printf %s \"$d\" | \"$0\" fs \"$@\"", CORDON_CLI,
              input};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.set_env = {
        {"HOME", home}, {"XDG_STATE_HOME", xdg}, {"XDG_CONFIG_HOME", xdg}, {"XDG_CACHE_HOME", xdg}};
    o.unset_env = {"XDG_RUNTIME_DIR"};
    return escape::run_process(o);
  };
  auto read = call({"read", "--workspace", home, ".local/state/cordon/jobs/j1/output.log"});
  CHECK(read.status == 2);
  CHECK(read.out.find("another job") == std::string::npos);
  for (const char* path : {".config/cordon/config.toml", ".local/state/cordon/jobs/j2/job.json"}) {
    auto r = call({"write", "--workspace", home, "--parents", path}, "[dispatch]\n");
    INFO(path << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("blocked") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(s / "home" / ".config" / "cordon" / "config.toml"));
  // The state in use (the XDG one) too; and beside both, the workspace is written and read.
  auto in_xdg = call({"write", "--workspace", xdg, "--parents", "cordon/config.toml"}, "x");
  CHECK(in_xdg.status == 2);
  auto ok = call({"write", "--workspace", home, "--parents", ".config/other/ok"}, "mine");
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(call({"read", "--workspace", home, ".config/other/ok"}).out == "mine");
}

TEST_CASE("fs: as root, the workspace owner's own cordon state is out of the file API's reach",
          "[fs][root]") {
  const char* name = std::getenv("CORDON_TEST_USER");
  passwd* pw = ::getpwnam(name && *name ? name : "cordon-test");
  if (::geteuid() != 0 || pw == nullptr || !fs::is_directory(pw->pw_dir)) {
    std::string why = "needs root and the test user with a home (scripts/test-user)";
    if (in_ci()) FAIL(why << " (CI=true)");
    WARN("skipped: " << why);
    return;
  }
  // Root's file API writes in this workspace for its owner, whose later cordon reads this.
  const std::string home = pw->pw_dir;
  for (const char* dir : {"/.config", "/.config/cordon"}) {
    std::string p = home + dir;
    if (::mkdir(p.c_str(), 0700) == 0) REQUIRE(::chown(p.c_str(), pw->pw_uid, pw->pw_gid) == 0);
  }
  const std::string marker = "cordon-fs-theirs-" + std::to_string(::getpid());
  const fs::path config = fs::path(home) / ".config" / "cordon" / (marker + ".toml"),
                 ok = fs::path(home) / ("." + marker);
  struct Remove {
    std::vector<fs::path> paths;
    ~Remove() {
      std::error_code ec;
      for (const auto& p : paths) fs::remove(p, ec);
    }
  } remove{{config, ok}};
  auto theirs =
      fs_write("[dispatch]\n", {"--workspace", home, ".config/cordon/" + marker + ".toml"});
  INFO(theirs.err);
  CHECK(theirs.status == 2);
  CHECK(theirs.err.find("blocked") != std::string::npos);
  CHECK_FALSE(fs::exists(config));
  auto mine = fs_write("fine\n", {"--workspace", home, "." + marker});
  INFO(mine.err);
  CHECK(mine.status == 0);
  CHECK(slurp(ok) == "fine\n");
  // A workspace of root's that holds the home (/home): root writes there as itself.
  const fs::path parent = fs::path(home).parent_path();
  const std::string rel = fs::path(home).filename().string();
  auto above = fs_write("[dispatch]\n", {"--workspace", parent.string(),
                                         rel + "/.config/cordon/" + marker + ".toml"});
  INFO(above.err);
  CHECK(above.status == 2);
  CHECK_FALSE(fs::exists(config));
  fs::remove(ok);
  auto beside = fs_write("fine\n", {"--workspace", parent.string(), rel + "/." + marker});
  INFO(beside.err);
  CHECK(beside.status == 0);
  CHECK(slurp(ok) == "fine\n");
}

TEST_CASE("fs: cordon's state behind a symlinked directory of the home is out of reach", "[fs]") {
  Scratch s;
  // A dotfiles home: ~/.config -> the workspace's config directory.
  const std::string home = (s / "home").string(), ws = (s / "dots").string();
  fs::create_directories(s / "dots" / "config");
  fs::create_directories(home);
  fs::create_symlink(s / "dots" / "config", s / "home" / ".config");
  auto missing =
      fs_write("[dispatch]\n", {"--workspace", ws, "--parents", "config/cordon/c.toml"}, home);
  INFO(missing.err);
  CHECK(missing.status == 2);
  CHECK(missing.err.find("blocked") != std::string::npos);
  fs::create_directory(s / "dots" / "config" / "cordon");
  auto existing = fs_write("[dispatch]\n", {"--workspace", ws, "config/cordon/config.toml"}, home);
  INFO(existing.err);
  CHECK(existing.status == 2);
  CHECK_FALSE(fs::exists(s / "dots" / "config" / "cordon" / "config.toml"));
  auto mine = fs_write("mine", {"--workspace", ws, "config/other.toml"}, home);
  INFO(mine.err);
  CHECK(mine.status == 0);
  CHECK(slurp(s / "dots" / "config" / "other.toml") == "mine");
}

TEST_CASE("fs: read refuses a hard link to a blocked file, as a run does", "[fs]") {
  Scratch s;
  fs::create_directories(s / "ws");
  fs::create_directories(s / "secrets" / "deeper");
  std::ofstream(s / "secrets" / "deeper" / "key") << "the blocked key\n";
  std::ofstream(s / "secrets" / "token") << "the blocked token\n";
  std::ofstream(s / "ws" / "mine.txt") << "mine\n";
  fs::create_hard_link(s / "secrets" / "deeper" / "key", s / "ws" / "key-link");
  fs::create_hard_link(s / "secrets" / "token", s / "ws" / "token-link");
  fs::create_hard_link(s / "ws" / "mine.txt", s / "ws" / "mine-link");
  const std::string ws = (s / "ws").string(), policy = (s / "policy.toml").string();
  std::ofstream(policy) << "version = 1\n[policy]\nname = \"links\"\n[filesystem]\nblocked = [\""
                        << (s / "secrets" / "deeper").string() << "\", \""
                        << (s / "secrets" / "token").string() << "\"]\n";
  auto fs_read = [&](const std::string& path) {
    return run_cli({"fs", "read", "--workspace", ws, "--policy", policy, path});
  };
  // A file of the workspace with two names of its own reads.
  auto mine = fs_read("mine-link");
  INFO(mine.err);
  CHECK(mine.status == 0);
  CHECK(mine.out == "mine\n");
  // A link to a blocked file, or to one in a blocked directory, does not.
  for (const char* link : {"key-link", "token-link"}) {
    auto r = fs_read(link);
    INFO(link << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("CRD4008") != std::string::npos);
    CHECK(r.err.find("hard link") != std::string::npos);
    CHECK(r.out.find("blocked") == std::string::npos);
  }
}

TEST_CASE("fs: a blocked path that is a symlink blocks what it leads to, as in a run", "[fs]") {
  Scratch s;
  fs::create_directories(s / "ws" / "real");
  std::ofstream(s / "ws" / "real" / "secret") << "blocked through the link\n";
  std::ofstream(s / "ws" / "open.txt") << "open\n";
  fs::create_directory_symlink(s / "ws" / "real", s / "alias");
  const std::string ws = (s / "ws").string(), policy = (s / "policy.toml").string();
  std::ofstream(policy) << "version = 1\n[policy]\nname = \"alias\"\n[filesystem]\nblocked = [\""
                        << (s / "alias").string() << "\"]\n";
  auto open = run_cli({"fs", "read", "--workspace", ws, "--policy", policy, "open.txt"});
  INFO(open.err);
  CHECK(open.out == "open\n");
  auto r = run_cli({"fs", "read", "--workspace", ws, "--policy", policy, "real/secret"});
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find("CRD4008") != std::string::npos);
  CHECK(r.out.empty());
  auto w = fs_write("x", {"--workspace", ws, "--policy", policy, "real/secret"});
  CHECK(w.status == 2);
  CHECK(slurp(s / "ws" / "real" / "secret") == "blocked through the link\n");
}
