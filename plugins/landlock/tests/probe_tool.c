/* Small probes run inside the sandbox by the landlock backend's tests: each tries one thing
 * and prints "allowed" or "denied: <errno name>" (exit 0 either way), so a test can assert
 * both ways. Usage: landlock-probe-tool <probe> [args...] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int report(long rc) {
  if (rc >= 0)
    printf("allowed\n");
  else
    printf("denied: %s\n", strerrorname_np(errno));
  return 0;
}

static int tcp_connect(const char* host, int port) {
  int s = socket(strchr(host, ':') ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (s < 0) return -1;
  if (strchr(host, ':')) {
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    inet_pton(AF_INET6, host, &a.sin6_addr);
    return connect(s, (struct sockaddr*)&a, sizeof a);
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, host, &a.sin_addr);
  return connect(s, (struct sockaddr*)&a, sizeof a);
}

static int tcp_bind(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return l < 0 ? -1 : bind(l, (struct sockaddr*)&a, sizeof a);
}

/* Listens on 127.0.0.1:port and connects to itself: loopback inside the sandbox. */
static int self_loopback(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof a) < 0 || listen(l, 1) < 0) return -1;
  return tcp_connect("127.0.0.1", port);
}

static int udp_send(const char* host, int port) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, host, &a.sin_addr);
  return (int)sendto(s, "x", 1, 0, (struct sockaddr*)&a, sizeof a);
}

static int unix_connect(const char* path, int abstract) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  socklen_t len;
  if (abstract) {
    strncpy(a.sun_path + 1, path, sizeof a.sun_path - 2);
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
  } else {
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    len = sizeof a;
  }
  return s < 0 ? -1 : connect(s, (struct sockaddr*)&a, len);
}

/* Forks children that wait, until fork fails; prints how many it got. */
static int fork_count(int most) {
  int n = 0;
  for (; n < most; ++n) {
    pid_t p = fork();
    if (p == 0) {
      pause();
      _exit(0);
    }
    if (p < 0) break;
  }
  printf("forked %d\n", n);
  return 0;
}

static int open_count(int most) {
  int n = 0;
  for (; n < most; ++n)
    if (open("/dev/null", O_RDONLY) < 0) break;
  printf("opened %d\n", n);
  return 0;
}

static void* thread_main(void* arg) { return arg; }

/* An i386 system call (int 0x80) from a 64-bit process: a foreign architecture. */
static int foreign_arch(void) {
  long rc;
  __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory"); /* getpid on i386 */
  printf("returned %ld\n", rc);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* p = argv[1];
  const char* a1 = argc > 2 ? argv[2] : "";
  int n2 = argc > 3 ? atoi(argv[3]) : 0;
  if (!strcmp(p, "getpid")) return report(getpid());
  if (!strcmp(p, "ptrace")) return report(ptrace(PTRACE_TRACEME, 0, 0, 0));
  if (!strcmp(p, "process_vm_readv")) {
    char buf[8], src[8] = "x";
    struct iovec l = {buf, 1}, r = {src, 1};
    return report(process_vm_readv(getpid(), &l, 1, &r, 1, 0));
  }
  if (!strcmp(p, "mount")) return report(mount("none", "/tmp", "tmpfs", 0, NULL));
  if (!strcmp(p, "umount")) return report(umount2(a1, MNT_DETACH));
  if (!strcmp(p, "unshare_user")) return report(unshare(CLONE_NEWUSER));
  if (!strcmp(p, "unshare_net")) return report(unshare(CLONE_NEWNET));
  if (!strcmp(p, "setns")) return report(setns(open("/proc/self/ns/user", O_RDONLY), 0));
  if (!strcmp(p, "clone_newuser")) {
    pid_t c = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (c == 0) _exit(0);
    if (c > 0) waitpid(c, NULL, 0);
    return report(c);
  }
  if (!strcmp(p, "clone3")) return report(syscall(SYS_clone3, NULL, 0));
  if (!strcmp(p, "bpf")) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    return report(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr));
  }
  if (!strcmp(p, "perf_event_open"))
    return report(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
  if (!strcmp(p, "userfaultfd")) return report(syscall(SYS_userfaultfd, 0));
  if (!strcmp(p, "io_uring")) {
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    return report(syscall(SYS_io_uring_setup, 4, &params));
  }
  if (!strcmp(p, "keyctl")) return report(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, -1, 0));
  if (!strcmp(p, "open_by_handle_at")) return report(syscall(SYS_open_by_handle_at, -1, NULL, 0));
  if (!strcmp(p, "tiocsti")) {
    char c = 'x';
    return report(ioctl(0, TIOCSTI, &c));
  }
  if (!strcmp(p, "tiocsti_high")) { /* upper 32 bits set: the kernel ignores them */
    char c = 'x';
    return report(syscall(SYS_ioctl, 0, 0x100000000ul | TIOCSTI, &c));
  }
  if (!strcmp(p, "personality")) return report(syscall(SYS_personality, 0x0040000));
  if (!strcmp(p, "vsock")) return report(socket(40, SOCK_STREAM, 0));
  if (!strcmp(p, "packet")) return report(socket(AF_PACKET, SOCK_RAW, 0));
  if (!strcmp(p, "fork")) {
    pid_t c = fork();
    if (c == 0) _exit(0);
    if (c > 0) waitpid(c, NULL, 0);
    return report(c);
  }
  if (!strcmp(p, "thread")) {
    pthread_t t;
    int rc = pthread_create(&t, NULL, thread_main, NULL);
    if (rc == 0) pthread_join(t, NULL);
    errno = rc;
    return report(rc == 0 ? 0 : -1);
  }
  if (!strcmp(p, "kill")) return report(kill(atoi(a1), 0));
  if (!strcmp(p, "connect")) return report(tcp_connect(a1, n2));
  if (!strcmp(p, "loopback")) return report(self_loopback(atoi(a1)));
  if (!strcmp(p, "bind")) return report(tcp_bind(atoi(a1)));
  if (!strcmp(p, "udp")) return report(udp_send(a1, n2));
  if (!strcmp(p, "unix")) return report(unix_connect(a1, 0));
  if (!strcmp(p, "abstract")) return report(unix_connect(a1, 1));
  if (!strcmp(p, "forks")) return fork_count(atoi(a1));
  if (!strcmp(p, "opens")) return open_count(atoi(a1));
  if (!strcmp(p, "i386")) return foreign_arch();
  if (!strcmp(p, "x32")) return report(syscall(0x40000000 | SYS_getpid));
  if (!strcmp(p, "fds")) { /* the descriptors this process was started with */
    for (int fd = 0; fd < 1024; ++fd)
      if (fcntl(fd, F_GETFD) != -1) printf("%d ", fd);
    printf("\n");
    return 0;
  }
  if (!strcmp(p, "personality_query")) return report(syscall(SYS_personality, 0xffffffffUL));
  if (!strcmp(p, "alloc")) { /* touches N MiB */
    size_t bytes = (size_t)atol(a1) << 20;
    char* mem = malloc(bytes);
    if (!mem) return report(-1);
    for (size_t i = 0; i < bytes; i += 4096) mem[i] = 1;
    printf("allocated\n");
    return 0;
  }
  if (!strcmp(p, "spin")) {
    for (volatile unsigned long i = 0;; ++i) {
    }
  }
  fprintf(stderr, "unknown probe '%s'\n", p);
  return 2;
}
