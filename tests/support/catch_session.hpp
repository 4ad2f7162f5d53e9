// The Catch2 session, for a suite's main: Catch2's implementation (and its Session class) is
// compiled once per build tree, in catch_runner.cpp, so a main calls it through this.
#pragma once

#include <string>
#include <vector>

namespace cordon::test {

/// Runs the tests the command line selects, narrowed by `also` (each a Catch test spec such
/// as "~[userns]", added after the command line's). Returns the process's exit status.
int run_catch(int argc, char** argv, const std::vector<std::string>& also = {});

}  // namespace cordon::test
