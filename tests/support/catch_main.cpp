// The standard Catch2 main, for every suite without a main of its own.
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return cordon::test::run_catch(argc, argv); }
