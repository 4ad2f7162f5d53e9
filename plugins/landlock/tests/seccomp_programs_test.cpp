// The precompiled seccomp programs: each is exactly what libseccomp makes of the rules now, so
// a stale generated file (rules or libseccomp changed, not regenerated) fails here.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "bpfgen/compile.hpp"
#include "bpfgen/programs.hpp"
#include "seccomp.hpp"

using namespace cordon::landlock;

namespace {

bool same(const sock_filter& a, const sock_filter& b) {
  return a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k;
}

}  // namespace

TEST_CASE("seccomp: each precompiled variant is libseccomp's program for the rules", "[seccomp]") {
  INFO("generated with libseccomp " << bpfgen::kLibseccompVersion << ", now "
                                    << bpfgen::libseccomp_version());
  for (bool no_subprocess : {false, true})
    for (bool inet_stream_only : {false, true}) {
      FilterOptions options{no_subprocess, inet_stream_only};
      INFO("no_subprocess " << no_subprocess << ", inet_stream_only " << inet_stream_only);
      std::vector<sock_filter> expected = bpfgen::compile_filter(options);
      SeccompProgram precompiled = build_filter(options);
      REQUIRE(precompiled.code.size() == expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("instruction " << i);
        CHECK(same(precompiled.code[i], expected[i]));
      }
    }
}

TEST_CASE("seccomp: the variants differ and are made for this architecture", "[seccomp]") {
  CHECK(bpfgen::kNativeArch == bpfgen::native_arch());
  CHECK(bpfgen::arch_name(bpfgen::kNativeArch) == bpfgen::kNativeArchName);
  const auto plain = build_filter({}).code;
  // The program's first check is the architecture (seccomp_data.arch, offset 4).
  REQUIRE(plain.size() > 2);
  CHECK(plain[0].code == (BPF_LD | BPF_W | BPF_ABS));
  CHECK(plain[0].k == 4);
  CHECK(plain[1].k == bpfgen::kNativeArch);
  for (FilterOptions other :
       {FilterOptions{true, false}, FilterOptions{false, true}, FilterOptions{true, true}})
    CHECK(build_filter(other).code.size() > plain.size());
}
