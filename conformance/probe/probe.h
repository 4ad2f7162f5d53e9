/* Shared declarations for cordon-probe: result reporting, argument parsing and the verbs. */
#ifndef CORDON_PROBE_H_
#define CORDON_PROBE_H_

/* A verb receives the NULL-terminated words that follow it on the command line. */
typedef int (*verb_fn)(char** args);

struct verb {
  const char* name;
  const char* synopsis;
  int min_args;
  int max_args; /* -1: unbounded */
  verb_fn run;
};

/* Reporting (io.c): one line on stdout, flushed; the return value is the exit code. */
int ok(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int denied(const char* verb, const char* what); /* reason: strerror(errno) */
int refused(const char* verb, const char* what, const char* reason);
int bad_arg(const char* verb, const char* arg); /* message on stderr, returns 2 */
/* Formats into a static buffer (one live result at a time); preserves errno. */
const char* describe(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* Arguments and time (main.c, io.c). Parsers return 0 on success, -1 on bad input. */
int parse_long(const char* s, long lo, long hi, long* out);
int parse_seconds(const char* s, double* out);
double now_seconds(void);
void sleep_seconds(double seconds);

/* Number of entries in DIR other than . and .. (fs.c); -1 with errno on failure. */
long count_entries(const char* dir);

/* fs.c */
int verb_read(char** args);
int verb_read_via_dir(char** args);
int verb_list(char** args);
int verb_write(char** args);
int verb_mkdir(char** args);
int verb_link(char** args);
int verb_symlink_read(char** args);
int verb_exec(char** args);
int verb_write_size(char** args);

/* net.c */
int verb_tcp(char** args);
int verb_udp(char** args);
int verb_dns(char** args);
int verb_icmp(char** args);
int verb_abstract(char** args);
int verb_abstract_listen(char** args);
int verb_loopback(char** args);
int verb_interfaces(char** args);

/* proc.c */
int verb_alloc(char** args);
int verb_forks(char** args);
int verb_threads(char** args);
int verb_files(char** args);
int verb_spin(char** args);
int verb_cpu_share(char** args);
int verb_spawn(char** args);
int verb_kill(char** args);
int verb_pids(char** args);
int verb_ptrace(char** args);
int verb_identity(char** args);
int verb_setuid0(char** args);
int verb_survive(char** args);
int verb_ignore_term(char** args);
int verb_sysv(char** args);
int verb_sysv_create(char** args);
int verb_sysv_remove(char** args);
int verb_mq(char** args);

/* io.c */
int verb_env(char** args);
int verb_home(char** args);
int verb_stdin(char** args);
int verb_print(char** args);
int verb_exit(char** args);
int verb_signal(char** args);
int verb_sleep(char** args);

#endif /* CORDON_PROBE_H_ */
