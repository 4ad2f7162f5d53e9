// Catch2's implementation, compiled once for every suite of a build tree (cmake/CordonTests.cmake).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.hpp"

namespace cordon::test {

int run_catch(int argc, char** argv, const std::vector<std::string>& also) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  for (const auto& spec : also) session.configData().testsOrTags.push_back(spec);
  return session.run();
}

}  // namespace cordon::test
