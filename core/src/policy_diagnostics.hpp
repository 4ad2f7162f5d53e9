// Collects every problem of a policy so that one check reports them all, up to a cap.
#pragma once

#include <cordon/sdk/error.hpp>

#include "policy_node.hpp"

#include <string>
#include <vector>

namespace cordon::detail {

/// The errors found while loading one policy (with everything it extends).
class Diagnostics {
 public:
  /// Records an error. Past kMaxReportedErrors errors are only counted.
  void add(Error error);
  /// Records an error located at `where`.
  void add(const char* code, std::string message, const Mark& where, std::string hint = {});

  bool empty() const { return total_ == 0; }
  std::size_t total() const { return total_; }

  /// The errors kept, followed by one CRD2013 summary when some were dropped.
  std::vector<Error> errors() const;
  /// Throws ErrorList with errors() when anything was recorded.
  void throw_if_any() const;

 private:
  std::vector<Error> errors_;
  std::size_t total_ = 0;
};

}  // namespace cordon::detail
