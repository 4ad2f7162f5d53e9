// The Catch2 runner of the seatbelt backend's tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
