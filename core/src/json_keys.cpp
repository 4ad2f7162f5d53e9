// first_duplicate_key: a second pass over the text with Boost.JSON's SAX parser, keeping the keys
// of each open object.
#include "json_keys.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <set>
#include <vector>

namespace cordon::detail {

namespace {

namespace json = boost::json;
using ec_t = boost::system::error_code;

struct Frame {
  bool object = false;
  std::set<std::string> keys;
  std::string key;        // the member being read (objects)
  std::size_t index = 0;  // the element being read (arrays)
};

// The handler stops the parse at the first duplicate; `found` is its pointer.
struct Handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<Frame> frames;
  std::string partial;
  std::optional<std::string> found;

  std::string pointer() const {
    std::string out;
    for (const auto& f : frames) {
      out += "/";
      out += f.object ? f.key : std::to_string(f.index);
    }
    return out;
  }
  // A value ended: the enclosing array moves to its next element.
  bool value() {
    if (!frames.empty() && !frames.back().object) ++frames.back().index;
    return true;
  }
  bool open(bool object) {
    frames.push_back({object, {}, {}, 0});
    return true;
  }
  bool close() {
    frames.pop_back();
    return value();
  }

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_array_begin(ec_t&) { return open(false); }
  bool on_array_end(std::size_t, ec_t&) { return close(); }
  bool on_object_begin(ec_t&) { return open(true); }
  bool on_object_end(std::size_t, ec_t&) { return close(); }
  bool on_string_part(std::string_view, std::size_t, ec_t&) { return true; }
  bool on_string(std::string_view, std::size_t, ec_t&) { return value(); }
  bool on_key_part(std::string_view s, std::size_t, ec_t&) {
    partial.append(s);
    return true;
  }
  bool on_key(std::string_view s, std::size_t, ec_t& ec) {
    partial.append(s);
    Frame& f = frames.back();
    f.key = std::move(partial);
    partial.clear();
    if (f.keys.insert(f.key).second) return true;
    found = pointer();
    ec = json::error::syntax;  // any error: it only stops the parse
    return false;
  }
  bool on_number_part(std::string_view, ec_t&) { return true; }
  bool on_int64(std::int64_t, std::string_view, ec_t&) { return value(); }
  bool on_uint64(std::uint64_t, std::string_view, ec_t&) { return value(); }
  bool on_double(double, std::string_view, ec_t&) { return value(); }
  bool on_bool(bool, ec_t&) { return value(); }
  bool on_null(ec_t&) { return value(); }
  bool on_comment_part(std::string_view, ec_t&) { return true; }
  bool on_comment(std::string_view, ec_t&) { return true; }
};

}  // namespace

std::optional<std::string> first_duplicate_key(std::string_view text, std::size_t max_depth) {
  json::parse_options opts;
  opts.max_depth = max_depth;
  json::basic_parser<Handler> parser(opts);
  ec_t ec;
  parser.write_some(false, text.data(), text.size(), ec);
  return parser.handler().found;
}

}  // namespace cordon::detail
