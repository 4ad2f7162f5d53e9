/* Shared reporting for the escape probes. Every probe prints one line per attempt:
 *   "<tag>: OK <detail>"  or  "<tag>: ERR <ERRNO-NAME> (<strerror>)[ <detail>]"
 * so that a test asserts the exact errno an attack got, not merely that something failed. */
#ifndef CORDON_ESCAPE_PROBE_H
#define CORDON_ESCAPE_PROBE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The symbolic name of an errno value ("EACCES"), or "E?<n>" when glibc does not know it. */
static inline const char* probe_errname(int err) {
  static char unknown[32];
  const char* name = strerrorname_np(err);
  if (name != NULL) return name;
  snprintf(unknown, sizeof unknown, "E?%d", err);
  return unknown;
}

/* Prints "<tag>: OK <detail>" and flushes, so output survives a later kill. */
static inline void probe_ok(const char* tag, const char* fmt, ...) {
  va_list ap;
  printf("%s: OK ", tag);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

/* Prints "<tag>: ERR <NAME> (<text>)[ <detail>]" for errno value `err` and flushes. */
static inline void probe_err(const char* tag, int err, const char* detail) {
  printf("%s: ERR %s (%s)%s%s\n", tag, probe_errname(err), strerror(err), detail ? " " : "",
         detail ? detail : "");
  fflush(stdout);
}

/* Reports a syscall-style result: rc >= 0 is OK, otherwise errno is the failure. */
static inline int probe_result(const char* tag, long rc, int err, const char* detail) {
  if (rc >= 0) {
    probe_ok(tag, "%ld", rc);
    return 0;
  }
  probe_err(tag, err, detail);
  return 1;
}

/* Evaluates a call, then reports it with the errno it left (argument order is unspecified in C,
 * so errno must not be read in the same argument list as the call). */
#define PROBE_CALL(tag, expr, detail)                       \
  __extension__({                                           \
    long probe_rc_ = (long)(expr);                          \
    int probe_errno_ = errno;                               \
    probe_result((tag), probe_rc_, probe_errno_, (detail)); \
  })

/* Exits with a usage message naming the probe. */
static inline void probe_usage(const char* probe, const char* usage) {
  fprintf(stderr, "usage: %s %s\n", probe, usage);
  exit(2);
}

#endif
