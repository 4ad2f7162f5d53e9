/* cordon-probe: attempts one system-call-level operation per invocation and reports it as
 * "ok VERB ..." (exit 0), "denied VERB: what: reason" (exit 1) or a usage error (exit 2). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static const struct verb verbs[] = {
    {"read", "PATH", 1, 1, verb_read},
    {"read-via-dir", "DIR NAME", 2, 2, verb_read_via_dir},
    {"list", "DIR", 1, 1, verb_list},
    {"write", "PATH", 1, 1, verb_write},
    {"mkdir", "PATH", 1, 1, verb_mkdir},
    {"link", "OLD NEW", 2, 2, verb_link},
    {"symlink-read", "TARGET LINK", 2, 2, verb_symlink_read},
    {"exec", "PATH [ARGS...]", 1, -1, verb_exec},
    {"write-size", "MB PATH", 2, 2, verb_write_size},
    {"tcp", "ADDR PORT", 2, 2, verb_tcp},
    {"udp", "ADDR PORT", 2, 2, verb_udp},
    {"dns", "ADDR", 1, 1, verb_dns},
    {"icmp", "ADDR", 1, 1, verb_icmp},
    {"abstract", "NAME", 1, 1, verb_abstract},
    {"abstract-listen", "NAME SECONDS", 2, 2, verb_abstract_listen},
    {"loopback", "", 0, 0, verb_loopback},
    {"interfaces", "", 0, 0, verb_interfaces},
    {"alloc", "MB", 1, 1, verb_alloc},
    {"forks", "N", 1, 1, verb_forks},
    {"threads", "N", 1, 1, verb_threads},
    {"files", "N", 1, 1, verb_files},
    {"spin", "SECONDS", 1, 1, verb_spin},
    {"cpu-share", "SECONDS PERCENT", 2, 2, verb_cpu_share},
    {"spawn", "PATH", 1, 1, verb_spawn},
    {"kill", "PID", 1, 1, verb_kill},
    {"pids", "", 0, 0, verb_pids},
    {"ptrace", "PID", 1, 1, verb_ptrace},
    {"identity", "", 0, 0, verb_identity},
    {"setuid0", "", 0, 0, verb_setuid0},
    {"survive", "FILE", 1, 1, verb_survive},
    {"ignore-term", "SECONDS", 1, 1, verb_ignore_term},
    {"sysv", "KEY", 1, 1, verb_sysv},
    {"sysv-create", "KEY", 1, 1, verb_sysv_create},
    {"sysv-remove", "KEY", 1, 1, verb_sysv_remove},
    {"mq", "NAME", 1, 1, verb_mq},
    {"env", "", 0, 0, verb_env},
    {"home", "", 0, 0, verb_home},
    {"stdin", "", 0, 0, verb_stdin},
    {"print", "N", 1, 1, verb_print},
    {"exit", "N", 1, 1, verb_exit},
    {"signal", "N", 1, 1, verb_signal},
    {"sleep", "SECONDS", 1, 1, verb_sleep},
};

#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

int parse_long(const char* s, long lo, long hi, long* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int parse_seconds(const char* s, double* out) {
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  /* An upper bound keeps the conversion to time_t well defined. */
  if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 1e8) return -1;
  *out = v;
  return 0;
}

static int usage(void) {
  fputs("usage: cordon-probe VERB ARGS...\nverbs:\n", stderr);
  for (size_t i = 0; i < VERB_COUNT; i++) {
    fprintf(stderr, "  %s%s%s\n", verbs[i].name, *verbs[i].synopsis ? " " : "", verbs[i].synopsis);
  }
  return 2;
}

static const struct verb* find_verb(const char* name) {
  for (size_t i = 0; i < VERB_COUNT; i++) {
    if (strcmp(verbs[i].name, name) == 0) return &verbs[i];
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const struct verb* v = find_verb(argv[1]);
  if (v == NULL) {
    fprintf(stderr, "cordon-probe: unknown verb '%s'\n", argv[1]);
    return usage();
  }
  int nargs = argc - 2;
  if (nargs < v->min_args || (v->max_args >= 0 && nargs > v->max_args)) {
    fprintf(stderr, "usage: cordon-probe %s%s%s\n", v->name, *v->synopsis ? " " : "", v->synopsis);
    return 2;
  }
  int rc = v->run(argv + 2);
  fflush(stdout);
  return rc;
}
