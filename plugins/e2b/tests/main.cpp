// The Catch2 runner of the e2b backend's tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
