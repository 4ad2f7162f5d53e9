// SHA-256 against the FIPS 180-4 example vectors and against sha256sum(1).
#include <fcntl.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <fstream>

#include "runtime_test_support.hpp"
#include "sha256.hpp"

using cordon::detail::sha256_fd;
using cordon::detail::sha256_hex;

TEST_CASE("sha256: the standard example vectors", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: padding boundaries agree with sha256sum", "[sha256]") {
  for (std::size_t len : {1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000}) {
    std::string data;
    for (std::size_t i = 0; i < len; ++i) data += static_cast<char>('A' + i * 7 % 50);
    auto oracle = cordon::test::capture("printf '%s' '" + data + "' | sha256sum");
    REQUIRE(oracle.status == 0);
    INFO("length " << len);
    CHECK(sha256_hex(data) == oracle.out.substr(0, 64));
  }
}

TEST_CASE("sha256: incremental updates equal one update, and a file hashes by descriptor",
          "[sha256]") {
  std::string data(70000, 'x');
  for (std::size_t i = 0; i < data.size(); i += 13) data[i] = static_cast<char>(i);
  cordon::detail::Sha256 s;
  for (std::size_t at = 0; at < data.size(); at += 777)
    s.update(std::string_view(data).substr(at, 777));
  std::string whole = sha256_hex(data);
  CHECK(s.hex() == whole);
  char path[] = "/tmp/cordon-sha-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
  ::lseek(fd, 0, SEEK_SET);
  std::string error;
  CHECK(sha256_fd(fd, error) == whole);
  ::close(fd);
  ::unlink(path);
}
