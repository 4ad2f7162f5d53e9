/* netprobe: network and unix-socket attempts, one report line each.
 *   netprobe tcp HOST PORT MSG      connect (3 s) and send MSG (IPv4 or IPv6 literal)
 *   netprobe udp HOST PORT MSG      sendto MSG
 *   netprobe bind HOST PORT         bind and listen on a TCP port
 *   netprobe unix PATH MSG          connect to a path unix socket and send MSG
 *   netprobe abstract NAME MSG      connect to the abstract unix socket "\0NAME" and send MSG
 *   netprobe selfabstract NAME      listen on "\0NAME" and connect to it from the same process
 *   netprobe selftcp HOST           listen on HOST at a free port, connect to it, send, receive
 *   netprobe selfudp HOST           bind a UDP socket on HOST, send a datagram to it, receive it
 * Several commands may follow each other. Exit status: 0 when every attempt succeeded. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe.h"

static char tag[512];

/* Fills `ss` from an IPv4 or IPv6 literal; returns the address length or 0. */
static socklen_t make_inet(const char* host, const char* port, struct sockaddr_storage* ss) {
  memset(ss, 0, sizeof *ss);
  struct sockaddr_in* v4 = (struct sockaddr_in*)ss;
  struct sockaddr_in6* v6 = (struct sockaddr_in6*)ss;
  if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((unsigned short)atoi(port));
    return sizeof *v4;
  }
  if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((unsigned short)atoi(port));
    return sizeof *v6;
  }
  return 0;
}

/* Connects with a 3 s deadline; returns 0 or an errno value. */
static int connect_timed(int fd, const struct sockaddr* sa, socklen_t len) {
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (connect(fd, sa, len) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  struct pollfd p = {.fd = fd, .events = POLLOUT};
  if (poll(&p, 1, 3000) != 1) return ETIMEDOUT;
  int err = 0;
  socklen_t elen = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
  fcntl(fd, F_SETFL, flags);
  return err;
}

/* Connects a socket of `type` to `sa`, sends msg, reports; the step that failed is named. */
static int connect_send(int family, int type, const struct sockaddr* sa, socklen_t len,
                        const char* msg) {
  int fd = socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return probe_result(tag, -1, errno, "(at socket)");
  int err = connect_timed(fd, sa, len);
  if (err != 0) {
    close(fd);
    return probe_result(tag, -1, err, "(at connect)");
  }
  ssize_t n = send(fd, msg, strlen(msg), MSG_NOSIGNAL);
  err = errno;
  close(fd);
  return probe_result(tag, n, err, "(at send)");
}

static int op_tcp(char** a) {
  struct sockaddr_storage ss;
  socklen_t len = make_inet(a[0], a[1], &ss);
  if (len == 0) probe_usage("netprobe", "tcp: bad address");
  return connect_send(ss.ss_family, SOCK_STREAM, (struct sockaddr*)&ss, len, a[2]);
}

static int op_udp(char** a) {
  struct sockaddr_storage ss;
  socklen_t len = make_inet(a[0], a[1], &ss);
  if (len == 0) probe_usage("netprobe", "udp: bad address");
  int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return probe_result(tag, -1, errno, "(at socket)");
  ssize_t n = sendto(fd, a[2], strlen(a[2]), 0, (struct sockaddr*)&ss, len);
  int err = errno;
  close(fd);
  return probe_result(tag, n, err, "(at sendto)");
}

static int op_bind(char** a) {
  struct sockaddr_storage ss;
  socklen_t len = make_inet(a[0], a[1], &ss);
  if (len == 0) probe_usage("netprobe", "bind: bad address");
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return probe_result(tag, -1, errno, "(at socket)");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr*)&ss, len) != 0) {
    int err = errno;
    close(fd);
    return probe_result(tag, -1, err, "(at bind)");
  }
  int rc = listen(fd, 1);
  int err = errno;
  close(fd);
  return probe_result(tag, rc, err, "(at listen)");
}

/* Fills a unix address; abstract names get the leading NUL. Returns the address length. */
static socklen_t make_unix(const char* name, int abstract, struct sockaddr_un* un) {
  memset(un, 0, sizeof *un);
  un->sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n + 2 > sizeof un->sun_path) probe_usage("netprobe", "unix: name too long");
  memcpy(un->sun_path + (abstract ? 1 : 0), name, n);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
}

static int op_unix(char** a, int abstract) {
  struct sockaddr_un un;
  socklen_t len = make_unix(a[0], abstract, &un);
  return connect_send(AF_UNIX, SOCK_STREAM, (struct sockaddr*)&un, len, a[1]);
}

/* The allowed side of abstract-socket scoping: a socket the sandbox made itself. */
static int op_selfabstract(char** a) {
  struct sockaddr_un un;
  socklen_t len = make_unix(a[0], 1, &un);
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) return probe_result(tag, -1, errno, "(at socket)");
  if (bind(lfd, (struct sockaddr*)&un, len) != 0 || listen(lfd, 1) != 0) {
    int err = errno;
    close(lfd);
    return probe_result(tag, -1, err, "(at bind)");
  }
  int rc = connect_send(AF_UNIX, SOCK_STREAM, (struct sockaddr*)&un, len, "self");
  close(lfd);
  return rc;
}

/* Binds a socket of `type` to HOST at a free port; returns the fd (address in `ss`) or -1. */
static int bind_free(const char* host, int type, struct sockaddr_storage* ss, socklen_t* len) {
  *len = make_inet(host, "0", ss);
  if (*len == 0) probe_usage("netprobe", "self: bad address");
  int fd = socket(ss->ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (bind(fd, (struct sockaddr*)ss, *len) != 0 ||
      getsockname(fd, (struct sockaddr*)ss, len) != 0 ||
      (type == SOCK_STREAM && listen(fd, 1) != 0)) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

/* Waits up to 3 s for `fd` to be readable and reads what came; OK when it is "self". */
static int receive_self(int fd, const char* step) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, 3000) != 1) return probe_result(tag, -1, ETIMEDOUT, step);
  char buf[16] = "";
  ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
  if (n < 0) return probe_result(tag, -1, errno, step);
  if (strcmp(buf, "self") != 0) return probe_result(tag, -1, EPROTO, step);
  probe_ok(tag, "received %s", buf);
  return 0;
}

/* The allowed side of a denied network, where the sandbox's loopback is its own: TCP works
 * within the sandbox. */
static int op_selftcp(char** a) {
  struct sockaddr_storage ss;
  socklen_t len;
  int lfd = bind_free(a[0], SOCK_STREAM, &ss, &len);
  if (lfd < 0) return probe_result(tag, -1, errno, "(at listen)");
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : connect_timed(fd, (struct sockaddr*)&ss, len);
  if (err != 0 || send(fd, "self", 4, MSG_NOSIGNAL) != 4) {
    if (err == 0) err = errno;
    if (fd >= 0) close(fd);
    close(lfd);
    return probe_result(tag, -1, err, "(at connect)");
  }
  int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  int rc = cfd < 0 ? probe_result(tag, -1, errno, "(at accept)") : receive_self(cfd, "(at recv)");
  if (cfd >= 0) close(cfd);
  close(fd);
  close(lfd);
  return rc;
}

/* The same for UDP: a datagram to a socket of the sandbox's own. */
static int op_selfudp(char** a) {
  struct sockaddr_storage ss;
  socklen_t len;
  int fd = bind_free(a[0], SOCK_DGRAM, &ss, &len);
  if (fd < 0) return probe_result(tag, -1, errno, "(at bind)");
  if (sendto(fd, "self", 4, 0, (struct sockaddr*)&ss, len) != 4) {
    int err = errno;
    close(fd);
    return probe_result(tag, -1, err, "(at sendto)");
  }
  int rc = receive_self(fd, "(at recv)");
  close(fd);
  return rc;
}

int main(int argc, char** argv) {
  int failed = 0;
  for (int i = 1; i < argc;) {
    const char* op = argv[i];
    int n = !strcmp(op, "tcp") || !strcmp(op, "udp")                                          ? 3
            : !strcmp(op, "bind") || !strcmp(op, "unix") || !strcmp(op, "abstract")           ? 2
            : !strcmp(op, "selfabstract") || !strcmp(op, "selftcp") || !strcmp(op, "selfudp") ? 1
                                                                                              : -1;
    if (n < 0 || i + n >= argc) probe_usage("netprobe", "OP ARGS (see the source)");
    char** a = argv + i + 1;
    int inet = !strcmp(op, "tcp") || !strcmp(op, "udp") || !strcmp(op, "bind");
    if (inet)
      snprintf(tag, sizeof tag, "%s %s %s", op, a[0], a[1]);
    else
      snprintf(tag, sizeof tag, "%s %s", op, a[0]);
    if (!strcmp(op, "tcp")) failed |= op_tcp(a);
    if (!strcmp(op, "udp")) failed |= op_udp(a);
    if (!strcmp(op, "bind")) failed |= op_bind(a);
    if (!strcmp(op, "unix")) failed |= op_unix(a, 0);
    if (!strcmp(op, "abstract")) failed |= op_unix(a, 1);
    if (!strcmp(op, "selfabstract")) failed |= op_selfabstract(a);
    if (!strcmp(op, "selftcp")) failed |= op_selftcp(a);
    if (!strcmp(op, "selfudp")) failed |= op_selfudp(a);
    i += n + 1;
  }
  return failed;
}
