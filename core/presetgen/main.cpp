// cordon-presetgen: compiles the shipped presets (policies/*.toml) into C++ that builds their
// policy trees (src/policy_compiled.hpp), so that loading a preset parses no TOML at run time.
//   cordon-presetgen OUT.cpp NAME=FILE.toml...
// Each tree is the one the core's own TOML reader makes from the file, marks included.
#include <cordon/sdk/error.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "policy_parse.hpp"

namespace {

using cordon::detail::Node;
using cordon::detail::NodeType;

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);  // octal: never swallows a following digit
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string mark(const cordon::detail::Mark& m) {
  return "{f, " + std::to_string(m.line) + ", " + std::to_string(m.column) + "}";
}

void emit(const Node& n, std::ostream& out, int depth) {
  std::string pad(static_cast<std::size_t>(depth) * 2, ' ');
  switch (n.type) {
    case NodeType::table:
      out << "table(" << mark(n.mark) << ", {";
      for (const auto& e : n.entries) {
        out << "\n" << pad << "  entry(" << quoted(e.key) << ", " << mark(e.key_mark) << ", ";
        emit(e.value, out, depth + 2);
        out << "),";
      }
      out << "})";
      return;
    case NodeType::array:
      out << "array(" << mark(n.mark) << ", {";
      for (const auto& item : n.items) {
        out << "\n" << pad << "  ";
        emit(item, out, depth + 1);
        out << ",";
      }
      out << "})";
      return;
    case NodeType::string:
      out << "string(" << quoted(n.text) << ", " << mark(n.mark) << ")";
      return;
    case NodeType::datetime:
      out << "datetime(" << quoted(n.text) << ", " << mark(n.mark) << ")";
      return;
    case NodeType::integer:
      out << "integer(" << n.integer << "LL, " << mark(n.mark) << ")";
      return;
    case NodeType::boolean:
      out << "boolean(" << (n.boolean ? "true" : "false") << ", " << mark(n.mark) << ")";
      return;
    case NodeType::floating: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", n.floating);
      out << "floating(" << buf << ", " << mark(n.mark) << ")";
      return;
    }
    case NodeType::null:
      break;
  }
  throw std::runtime_error("a preset holds a value TOML cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: cordon-presetgen OUT.cpp NAME=FILE.toml...\n";
    return 2;
  }
  std::ostringstream out;
  out << "// Generated from policies/*.toml by cordon-presetgen; do not edit.\n"
      << "#include \"policy_compiled.hpp\"\n\nnamespace cordon::detail {\n\nnamespace {\n\n"
      << "using namespace compiled;\n";
  std::ostringstream dispatch;
  try {
    for (int i = 2; i < argc; ++i) {
      std::string arg = argv[i];
      auto eq = arg.find('=');
      if (eq == std::string::npos) throw std::runtime_error("not NAME=FILE: " + arg);
      std::string name = arg.substr(0, eq);
      std::ifstream in(arg.substr(eq + 1), std::ios::binary);
      if (!in) throw std::runtime_error("cannot read " + arg.substr(eq + 1));
      std::stringstream text;
      text << in.rdbuf();
      std::string source = "preset:" + name;
      Node root =
          cordon::detail::parse_toml(text.str(), std::make_shared<const std::string>(source));
      out << "\nNode preset_" << i << "() {\n  auto f = std::make_shared<const std::string>("
          << quoted(source) << ");\n  return ";
      emit(root, out, 1);
      out << ";\n}\n";
      dispatch << "  if (name == " << quoted(name) << ") return preset_" << i << "();\n";
    }
  } catch (const cordon::Error& e) {
    std::cerr << "cordon-presetgen: " << e.render() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cordon-presetgen: " << e.what() << "\n";
    return 1;
  }
  out << "\n}  // namespace\n\nstd::optional<Node> compiled_preset(const std::string& name) {\n"
      << dispatch.str() << "  return std::nullopt;\n}\n\n}  // namespace cordon::detail\n";
  std::string tmp = std::string(argv[1]) + ".tmp";
  std::ofstream(tmp) << out.str();
  // Rewritten only when changed, so that nothing recompiles for nothing.
  std::ifstream old(argv[1]);
  std::stringstream before;
  before << old.rdbuf();
  if (old && before.str() == out.str()) return std::remove(tmp.c_str()) == 0 ? 0 : 1;
  return std::rename(tmp.c_str(), argv[1]) == 0 ? 0 : 1;
}
