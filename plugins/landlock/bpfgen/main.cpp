// cordon-bpfgen: compiles the landlock backend's seccomp filter variants with the SDK's
// compiler (cordon/sdk/seccomp.hpp, libseccomp inside libcordon-core) and writes them as C++
// arrays, so that the plugin compiles no filter at run time.
//
//   cordon-bpfgen <output.cpp>
//
// Exits 1, naming what failed, when libseccomp or the write fails; the output is then left as
// it was (written to a temporary file and renamed).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compile.hpp"
#include "programs.hpp"

namespace {

using namespace cordon::landlock;

std::string hex(std::uint32_t value, int width) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*x", width, value);
  return text;
}

void render_program(std::ostream& out, std::size_t index, const FilterOptions& options) {
  std::vector<sock_filter> code = bpfgen::compile_filter(options);
  out << "\n// no_subprocess = " << (options.no_subprocess ? "true" : "false")
      << ", inet_stream_only = " << (options.inet_stream_only ? "true" : "false") << ": "
      << code.size() << " instructions\n"
      << "constexpr sock_filter kProgram" << index << "[] = {\n";
  for (const sock_filter& insn : code)
    out << "    {" << hex(insn.code, 4) << ", " << unsigned{insn.jt} << ", " << unsigned{insn.jf}
        << ", " << hex(insn.k, 8) << "},\n";
  out << "};\n";
}

std::string render() {
  std::uint32_t arch = bpfgen::native_arch();
  std::string version = bpfgen::libseccomp_version();
  std::ostringstream out;
  out << "// Generated at build time by cordon-bpfgen (plugins/landlock/bpfgen): do not edit.\n"
      << "// libseccomp " << version << ", native architecture " << bpfgen::arch_name(arch)
      << " (AUDIT_ARCH " << hex(arch, 8) << ").\n"
      << "#include \"bpfgen/programs.hpp\"\n\n"
      << "namespace cordon::landlock::bpfgen {\n\nnamespace {\n";
  for (bool inet_stream_only : {false, true})
    for (bool no_subprocess : {false, true})
      render_program(out, bpfgen::program_index(no_subprocess, inet_stream_only),
                     FilterOptions{no_subprocess, inet_stream_only});
  out << "\n}  // namespace\n\n"
      << "constinit const std::array<std::span<const sock_filter>, 4> kPrograms = {\n"
      << "    kProgram0, kProgram1, kProgram2, kProgram3};\n"
      << "const char kLibseccompVersion[] = \"" << version << "\";\n"
      << "const std::uint32_t kNativeArch = " << hex(arch, 8) << ";\n"
      << "const char kNativeArchName[] = \"" << bpfgen::arch_name(arch) << "\";\n\n"
      << "}  // namespace cordon::landlock::bpfgen\n";
  return out.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) throw std::runtime_error("cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + temporary + " to " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: cordon-bpfgen <output.cpp>\n";
    return 2;
  }
  try {
    write_file(argv[1], render());
  } catch (const std::exception& e) {
    std::cerr << "cordon-bpfgen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
