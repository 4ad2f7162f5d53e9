// Helpers of the policy tests: a scratch directory, and loading that expects errors.
#pragma once

#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace cordon::test {

/// A fresh directory under the system temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("cordon-policy-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  /// Writes `text` to `name` (subdirectories created) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

/// The errors load() throws; fails the test when it throws none.
template <class F>
std::vector<Error> errors_of(F&& load) {
  try {
    load();
  } catch (const ErrorList& list) {
    return list.errors();
  }
  FAIL("expected the policy to be refused");
  return {};
}

/// The errors of loading `text` under `name` (its extension picks the format).
inline std::vector<Error> text_errors(const std::string& text, const std::string& name,
                                      const std::filesystem::path& base = {}) {
  return errors_of([&] { load_policy_text(text, name, base); });
}

/// True when `errors` holds one with this code at this line and column.
inline bool has_error_at(const std::vector<Error>& errors, const std::string& code, int line,
                         int column) {
  for (const auto& e : errors)
    if (e.code() == code && e.where() && e.where()->line == line && e.where()->column == column)
      return true;
  return false;
}

/// Every error on one line each, for a failure message.
inline std::string render(const std::vector<Error>& errors) {
  std::string out;
  for (const auto& e : errors) out += e.render() + "\n";
  return out;
}

/// The text of a file of the source tree (a preset, an example).
inline std::string source_file(const std::string& relative) {
  std::ifstream in(std::filesystem::path(CORDON_SOURCE_DIR) / relative, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace cordon::test

/// Asserts that `errors` (a vector<Error>) holds `code` at `line`:`column`, printing them all
/// when it does not.
#define CHECK_ERROR_AT(errors, code, line, column)                           \
  do {                                                                       \
    INFO(::cordon::test::render(errors));                                    \
    CHECK(::cordon::test::has_error_at((errors), (code), (line), (column))); \
  } while (0)
