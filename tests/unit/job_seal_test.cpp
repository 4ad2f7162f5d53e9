// The seal of job records: HMAC-SHA256 as RFC 4231 gives it, over the job's id, the record's
// name and its text, so that a record cannot be moved to another job or another name.
#include <catch2/catch.hpp>

#include <string>

#include "job_seal.hpp"

using cordon::detail::hmac_sha256_hex;
using cordon::detail::record_seal;

TEST_CASE("job seal: HMAC-SHA256 gives RFC 4231's values") {
  CHECK(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than SHA-256's block is hashed first.
  CHECK(hmac_sha256_hex(std::string(131, '\xaa'),
                        "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("job seal: bound to the key, the job, the record's name and every byte") {
  const std::string key(32, 'k'), text = R"({"pid":42,"start_ticks":7,"session":42})";
  const std::string seal = record_seal(key, "j0123", "supervisor.json", text);
  CHECK(seal.size() == 64);
  CHECK(record_seal(key, "j0123", "supervisor.json", text) == seal);
  CHECK(record_seal(std::string(32, 'K'), "j0123", "supervisor.json", text) != seal);
  CHECK(record_seal(key, "j0124", "supervisor.json", text) != seal);
  CHECK(record_seal(key, "j0123", "result.json", text) != seal);
  CHECK(record_seal(key, "j0123", "supervisor.json", text + " ") != seal);
  // The separators keep the fields apart: moving a byte from the id to the name changes it.
  CHECK(record_seal(key, "j012", "3supervisor.json", text) != seal);
}
