// The front end's entry point. Before the C library starts, it asks the kernel for the code a
// run executes and the read-only data, for private copies of its writable pages and for the
// stack a run grows into: a few system calls in place of about 80 page faults a run otherwise
// takes one at a time, ~11 us each on the virtual machines cordon is developed on
// (front/README.md, "Start-up"). Only that: every page mapped is unmapped again when cordon
// exits, which the caller waits for, so the code laid out after the functions a run executes
// and the unwind tables (read only when an exception is thrown) are left to be faulted in.
//
// It runs before glibc has relocated the program or set up thread-local storage, so it calls no
// library function, reads no global that needs a relocation and has no stack protector: the
// addresses come from the program's own headers, reached PC-relative through __ehdr_start.
// It lies in a section of its own (.cordon_entry), which the lld layout puts in a segment after
// the data (ro-pad.ld): its first instruction's fault reads the file ahead around it, not
// around the code, which can then still come from the disk in 2 MB folios (below).
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cstdint>

#ifndef MADV_POPULATE_READ  // Linux 5.14; older headers
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

extern "C" {

extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

#ifdef CORDON_FRONT_HOT_END
// Laid out right after the functions hot-functions.txt names (the build appends this name to the
// list it gives the linker): the end of the code a run executes.
__attribute__((used, noinline, visibility("hidden"))) void cordon_front_hot_end() {
  asm volatile("");
}
#endif

// A refusal changes nothing: a kernel before 5.14 says EINVAL, memory pressure ENOMEM, and the
// pages are then faulted in as they are used, as they would be without this.
static inline void advise(std::uintptr_t from, std::uintptr_t to, long advice) {
  constexpr std::uintptr_t kPage = 4096;
  from &= ~(kPage - 1);
  to = (to + kPage - 1) & ~(kPage - 1);
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "0"(long{SYS_madvise}), "D"(from), "S"(to - from), "d"(advice)
               : "rcx", "r11", "memory");
  (void)ret;
}

// A run uses about 80 KiB of stack below the entry's; the kernel's stack mapping reaches 128 KiB
// below the arguments (less only under a smaller RLIMIT_STACK, and then the advice is refused).
constexpr std::uintptr_t kRunStack = 96 * 1024;

// A huge page: the read-only data starts one of its own in the lld layout (ro-pad.ld).
constexpr std::uintptr_t kHuge = 2 << 20;

// `to`, or `mark` where it lies inside [from, to).
static inline std::uintptr_t cut_at(std::uintptr_t from, std::uintptr_t to, std::uintptr_t mark) {
  return mark > from && mark < to ? mark : to;
}

// Every loadable segment of the executable: the code a run executes and the read-only data are
// mapped (they are read, never copied), up to the end of the laid-out functions and up to the
// unwind tables (PT_GNU_EH_FRAME, which the linker puts last, .eh_frame after it); the relocated
// data, .data and .bss get their private copies now, while they are still writable (the
// relocated part is made read-only right after the relocation); and so does the stack below
// `sp`. The code and the read-only data are asked for in 2 MB pages (MADV_HUGEPAGE): read back
// from the disk, a range no part of which is in the page cache then comes in one 2 MB folio,
// mapped with one 2 MB page (front/README.md, "The code in one 2 MB page").
__attribute__((used, visibility("hidden"), no_stack_protector, section(".cordon_entry"))) void
cordon_populate_image(std::uintptr_t sp) {
  advise(sp - kRunStack, sp, MADV_POPULATE_WRITE);
  const auto base = reinterpret_cast<std::uintptr_t>(&__ehdr_start);
  const auto* headers = reinterpret_cast<const ElfW(Phdr)*>(base + __ehdr_start.e_phoff);
  std::uintptr_t unwind = 0, hot_end = 0;
  for (int i = 0; i < __ehdr_start.e_phnum; ++i)
    if (headers[i].p_type == PT_GNU_EH_FRAME) unwind = base + headers[i].p_vaddr;
#ifdef CORDON_FRONT_HOT_END
  hot_end = reinterpret_cast<std::uintptr_t>(&cordon_front_hot_end);
#endif
  // The code first: read back from the disk, it then comes into the page cache in 2 MB folios
  // (front/README.md, "The code in one 2 MB page"), before the read-ahead of another segment
  // brings its range in smaller ones.
  for (int code = 1; code >= 0; --code)
    for (int i = 0; i < __ehdr_start.e_phnum; ++i) {
      const ElfW(Phdr)& h = headers[i];
      if (h.p_type != PT_LOAD || ((h.p_flags & PF_X) != 0) != (code == 1)) continue;
      const std::uintptr_t from = base + h.p_vaddr, to = from + h.p_memsz;
      if (h.p_flags & PF_W) {
        advise(from, to, MADV_POPULATE_WRITE);
        continue;
      }
      // The read-only data from its own 2 MB page on (ro-pad.ld), after the ELF headers.
      std::uintptr_t at = code ? from : (from + kHuge) & ~(kHuge - 1);
      if (at >= to) at = from;
      advise(at, to, MADV_HUGEPAGE);
      advise(at, cut_at(at, to, code ? hot_end : unwind), MADV_POPULATE_READ);
    }
}

}  // extern "C"

// Entered as _start is, and leaves to it as the kernel left it: the stack pointer at argc and
// %rdx (the exit hook, 0 for a static program) restored; %rbx and %r12 are callee-saved. The
// populate gets the aligned stack pointer as its argument.
asm(R"(
  .section .cordon_entry,"ax",@progbits
  .globl cordon_front_entry
  .type cordon_front_entry, @function
cordon_front_entry:
  .cfi_startproc
  .cfi_undefined rip
  mov %rdx, %r12
  mov %rsp, %rbx
  and $-16, %rsp
  mov %rsp, %rdi
  call cordon_populate_image
  mov %rbx, %rsp
  mov %r12, %rdx
  jmp _start
  .cfi_endproc
  .size cordon_front_entry, . - cordon_front_entry
  .text
)");
