// The Catch2 runner of the integration tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
