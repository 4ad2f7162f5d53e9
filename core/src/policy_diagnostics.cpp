// Diagnostics: every error of a policy, capped.
#include "policy_diagnostics.hpp"

#include <cordon/policy_loader.hpp>

namespace cordon::detail {

void Diagnostics::add(Error error) {
  ++total_;
  if (errors_.size() < kMaxReportedErrors) errors_.push_back(std::move(error));
}

void Diagnostics::add(const char* code, std::string message, const Mark& where, std::string hint) {
  add(Error(code, std::move(message), std::move(hint), where.location()));
}

std::vector<Error> Diagnostics::errors() const {
  std::vector<Error> out = errors_;
  if (total_ > errors_.size()) {
    std::size_t more = total_ - errors_.size();
    std::optional<Location> where;
    if (!errors_.empty() && errors_.back().where()) where = Location{errors_.back().where()->file};
    out.emplace_back(code::kTooManyErrors,
                     std::to_string(more) + " more error" + (more == 1 ? "" : "s") +
                         " not shown (" + std::to_string(total_) + " in all)",
                     "fix the errors shown and check again", where);
  }
  return out;
}

void Diagnostics::throw_if_any() const {
  if (total_ > 0) throw ErrorList(errors());
}

}  // namespace cordon::detail
