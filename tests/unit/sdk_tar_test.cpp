// The SDK's tar archives: what the writer makes, tar(1) reads back; what tar(1) makes in pax
// format (as the docker daemon's archive endpoint sends it), the reader reads; links and
// malformed archives are never taken for files.
#include <cordon/sdk/tar.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

using namespace cordon;
using namespace cordon::sdk;

namespace {

// A scratch directory, removed with everything in it.
struct Scratch {
  std::filesystem::path path;
  Scratch() {
    char name[] = "/tmp/cordon-tar-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spill(const std::string& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("tar: tar(1) reads back files, modes, long names and symlinks") {
  Scratch dir;
  std::string long_name = "d/" + std::string(150, 'n');
  TarWriter t;
  t.directory("d", 0755);
  t.file("d/x.sh", 0750, "#!/bin/sh\necho ok\n", 1000000000);
  t.file(long_name, 0640, std::string(70000, 'z'), 0);
  t.symlink("d/link", "/etc/" + std::string(120, 'l'));
  std::string archive = t.finish();
  CHECK(archive.size() % 512 == 0);
  std::ofstream(dir / "a.tar", std::ios::binary) << archive;
  REQUIRE(std::system(
              ("tar -t -v -f " + (dir / "a.tar") + " > " + (dir / "listing") + " 2>&1").c_str()) ==
          0);
  std::string listing = slurp(dir / "listing");
  CHECK(listing.find("rwxr-x---") != std::string::npos);
  CHECK(listing.find(std::string(150, 'n')) != std::string::npos);
  REQUIRE(std::system(("tar -x -f " + (dir / "a.tar") + " -C " + dir.path.string()).c_str()) == 0);
  CHECK(slurp(dir / "d/x.sh") == "#!/bin/sh\necho ok\n");
  CHECK(slurp(dir / long_name).size() == 70000);
  CHECK(std::filesystem::read_symlink(dir / "d/link").string().size() == 125);
}

TEST_CASE("tar: an archive tar(1) makes in pax format reads back, long names included") {
  Scratch dir;
  std::string deep = "a/" + std::string(120, 'b');
  std::filesystem::create_directories(dir.path / "a");
  spill(dir / deep, "deep");
  spill(dir / "a/small", "small");
  std::string list = dir / "list";
  std::string cmd = "cd " + dir.path.string() + " && tar -c -f archive.tar --format=pax a";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto files = read_tar(slurp(dir / "archive.tar"));
  REQUIRE(files.size() == 2);
  bool found_deep = false, found_small = false;
  for (const auto& f : files) {
    found_deep = found_deep || (f.path == deep && f.content == "deep");
    found_small = found_small || (f.path == "a/small" && f.content == "small");
  }
  CHECK(found_deep);
  CHECK(found_small);
  CHECK_THROWS(read_tar(std::string(512, 'x')));
}

TEST_CASE("tar: a link is no file, and a broken archive is refused") {
  TarWriter t;
  t.symlink("passwd", "/elsewhere/passwd");
  CHECK(read_tar(t.finish()).empty());
  TarWriter f;
  f.file("passwd", 0644, "root:x:0:0::/root:/bin/sh\n", 0);
  std::string whole = f.finish();
  REQUIRE(read_tar(whole).size() == 1);
  CHECK(read_tar(whole)[0].content == "root:x:0:0::/root:/bin/sh\n");
  CHECK_THROWS(read_tar(whole.substr(0, 512 + 10)));  // cut inside the file
  std::string bad = whole;
  bad[124] = 'z';  // a size that is no octal number
  CHECK_THROWS(read_tar(bad));
  CHECK(read_tar("").empty());
}
