// `cordon`, the front end: the hot path of `cordon run` in one static executable.
//
// A dynamic C++ program spends about 1.3 ms here before main() (libstdc++, Boost.JSON and
// libcordon-core mapped and relocated), loading the landlock plugin costs 0.5 ms more, and each
// shared object mapped makes the sandbox's clone and teardown dearer. This executable links the
// command line, the core, the landlock backend and every library statically, libc included.
// It cannot load shared objects, so it runs a command line only while that needs no plugin
// file, no YAML module and no NSS module (a user outside /etc/passwd); at the first such need
// (the load hook) and for every verb but `run`, it hands the unchanged command line to the full
// executable, <libexec>/cordon/cordon, which has every verb and loads every plugin. Both run
// the same command-line code (core/cli); see front/README.md.
#include <cordon/load_hook.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/log.hpp>
#include <cordon/user_db.hpp>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <cordon/landlock/front.hpp>

#include "runtime_options.hpp"
#include "stop_signals.hpp"
#include "verbs.hpp"

namespace {

namespace fs = std::filesystem;

char** g_argv = nullptr;

// `cordon run` stays here unless it reads cordon's stdin before dispatch (--stdin, --request
// or a '-' file): a hand-off after that would give the full executable a drained stdin.
// `cordon run --help`: no sandbox will be needed.
bool asks_for_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

bool stays_here(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "run") return false;
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "-" || arg.ends_with("=-") || arg.starts_with("--stdin") ||
        arg.starts_with("--request"))
      return false;
  }
  return true;
}

// The full executable, found from this one's own file: <bin>/../libexec/cordon/cordon. Empty
// when that file is unknown (no /proc): never a relative name, which would run whatever
// `cordon` lies in the working directory.
fs::path full_executable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec || !self.is_absolute()) return {};
  return self.parent_path() / CORDON_FULL_FROM_BIN;
}

[[noreturn]] void hand_off() {
  cordon::landlock::discard_prestarted_keeper();  // exec would leave it behind, unkillable
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  fs::path full = full_executable();
  if (!full.empty()) ::execv(full.c_str(), g_argv);
  std::string why = full.empty() ? "/proc/self/exe cannot be read" : std::strerror(errno);
  std::cerr << cordon::Error(
                   cordon::code::kFullExecutable,
                   "cannot start cordon's full executable '" + full.string() + "': " + why,
                   "reinstall cordon: the front end needs its full executable for "
                   "every verb but run, for plugins and for yaml policies")
                   .render()
            << "\n";
  std::_Exit(cordon::cli::failure_status(g_argv[0] && g_argv[1] ? g_argv[1] : ""));
}

void hand_off_to_load(const fs::path& file) {
  if (auto logger = cordon::log::default_logger())
    cordon::log::debug(*logger, "front end: '" + file.string() +
                                    "' is needed: handing the command line to '" +
                                    full_executable().string() + "'");
  hand_off();
}

// Nothing is left to tear down that the kernel would not: the output is flushed, a keeper
// nobody took is reaped, and the destructors are skipped (~0.07 ms of every run).
[[noreturn]] void leave(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  cordon::landlock::discard_prestarted_keeper();
  std::_Exit(status);
}

// Freed memory stays mapped until the exit: giving it back (brk) would make the kernel interrupt
// the CPU the sandbox's processes ran on, which share this memory until they exec.
void keep_freed_memory() { ::mallopt(M_TRIM_THRESHOLD, 256 << 20); }

// The heap a run uses (about 200 KiB) gets its pages in one call: faulted in one at a time they
// cost ~11 us each on the virtual machines cordon is developed on, asked for at once ~1 us.
void populate_heap() {
  keep_freed_memory();  // the blocks freed below stay the heap's
  constexpr std::size_t kHeap = 256 << 10, kStep = 32 << 10;  // steps under the mmap threshold
  void* blocks[kHeap / kStep];
  std::size_t n = 0;
  while (n < kHeap / kStep && ::mallinfo2().arena < kHeap) blocks[n++] = ::malloc(kStep);
  while (n > 0) ::free(blocks[--n]);
  const std::size_t size = ::mallinfo2().arena;  // 0 under a sanitizer's allocator
  const auto end = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  if (size == 0 || size > end) return;
  const std::uintptr_t from = (end - size) & ~std::uintptr_t{4095};
  ::madvise(reinterpret_cast<void*>(from), end - from, MADV_POPULATE_WRITE);  // or faulted in
}

// The sandbox's namespaces are made on the other core while the command line is parsed and the
// run planned (cordon/landlock/front.hpp). Started from the first constructor, before the
// static initialisers of the libraries (~0.2 ms here): the keeper is then ready sooner.
__attribute__((constructor(101))) void prestart(int argc, char** argv, char**) {
  if (!stays_here(argc, argv) || asks_for_help(argc, argv)) return;
  cordon::cli::default_child_signal();  // before the keeper, cordon's first child
  populate_heap();
  cordon::landlock::prestart_keeper();
}

}  // namespace

int main(int argc, char** argv) {
  g_argv = argv;
  keep_freed_memory();
  if (!stays_here(argc, argv)) hand_off();
  cordon::set_load_hook(hand_off_to_load);
  cordon::set_user_lookup_files_first(true);
  cordon::cli::set_builtin_backends({{"landlock", cordon::landlock::kVersion,
                                      cordon::landlock::make_backend, cordon::Locality::local}});
  cordon::cli::set_run_exit_hook(leave);  // a run leaves as soon as it is reported
  leave(cordon::cli::main_cli(argc, argv));
}
