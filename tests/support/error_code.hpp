// The stable error code an action fails with, for tests that check refusals.
#pragma once

#include <cordon/sdk/error.hpp>

#include <functional>
#include <string>

namespace cordon::testing {

/// The code of the cordon::Error that `action` throws, or "" when it throws none.
inline std::string error_code_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.code();
  }
  return "";
}

/// The code and message ("CRD1007 blocked file ...") of the cordon::Error that `action` throws,
/// or "" when it throws none.
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.code() + " " + e.message();
  }
  return "";
}

}  // namespace cordon::testing
