// The stop token's wake-up descriptor: readable once per raise of the level, until drained.
#include <cordon/sdk/stop_token.hpp>

#include <poll.h>
#include <catch2/catch.hpp>

using cordon::StopToken;

TEST_CASE("stop token: its descriptor wakes a waiter once per raise", "[stop]") {
  StopToken token;
  REQUIRE(token.wake_fd() >= 0);
  pollfd p{token.wake_fd(), POLLIN, 0};
  CHECK(::poll(&p, 1, 0) == 0);
  token.request(StopToken::Level::terminate);
  CHECK(::poll(&p, 1, 0) == 1);
  token.drain_wake();
  CHECK(::poll(&p, 1, 0) == 0);
  token.request(StopToken::Level::terminate);  // not a raise
  CHECK(::poll(&p, 1, 0) == 0);
  token.request(StopToken::Level::kill);
  CHECK(::poll(&p, 1, 0) == 1);
  CHECK(token.requested() == StopToken::Level::kill);
}
