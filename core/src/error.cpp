// cordon::Error and ErrorList.
#include <cordon/sdk/error.hpp>

namespace cordon {

std::string Location::str() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

Error::Error(std::string code, std::string message, std::string hint, std::optional<Location> where)
    : code_(std::move(code)),
      message_(std::move(message)),
      hint_(std::move(hint)),
      where_(std::move(where)) {
  text_ = where_ && !where_->file.empty() ? where_->str() + ": " + message_ : message_;
}

std::string Error::render() const {
  std::string out = "error[" + code_ + "]: " + text_;
  if (!hint_.empty()) out += "\n  hint: " + hint_;
  return out;
}

Error Error::wrap(const std::string& outer) const {
  return Error(code_, outer + ": " + message_, hint_, where_);
}

ErrorList::ErrorList(std::vector<Error> errors) : errors_(std::move(errors)) {
  for (const auto& e : errors_) {
    if (!text_.empty()) text_ += "\n";
    text_ += e.code() + ": " + e.what();
  }
}

}  // namespace cordon
