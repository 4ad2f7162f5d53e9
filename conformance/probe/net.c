/* Network verbs: TCP/UDP/DNS/ICMP reachability, abstract unix sockets, an in-process loopback
 * round trip and interface listing. Numeric addresses only, and every wait is bounded. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe.h"

#define TIMEOUT_MS 2000

struct endpoint {
  struct sockaddr_storage ss;
  socklen_t len;
  int family;
};

/* Fills EP from a numeric IPv4/IPv6 literal and an optional decimal port. Returns 0, or the
 * index (1 + argument position) of the bad argument. */
static int parse_endpoint(const char* host, const char* port, struct endpoint* ep) {
  long p = 0;
  if (port != NULL && parse_long(port, 0, 65535, &p)) return 2;
  memset(ep, 0, sizeof *ep);
  struct sockaddr_in* in4 = (struct sockaddr_in*)&ep->ss;
  struct sockaddr_in6* in6 = (struct sockaddr_in6*)&ep->ss;
  if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons((uint16_t)p);
    ep->len = sizeof *in4;
  } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)p);
    ep->len = sizeof *in6;
  } else {
    return 1;
  }
  ep->family = ep->ss.ss_family;
  return 0;
}

/* Returns 1 when FD is ready for EVENTS, -1 with errno (ETIMEDOUT on timeout) otherwise. */
static int wait_for(int fd, short events, int timeout_ms) {
  struct pollfd pfd = {.fd = fd, .events = events};
  double deadline = now_seconds() + timeout_ms / 1000.0;
  for (;;) {
    int left = (int)((deadline - now_seconds()) * 1000);
    int r = poll(&pfd, 1, left > 0 ? left : 0);
    if (r > 0) return 1;
    if (r == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (errno != EINTR) return -1;
  }
}

/* Non-blocking connect with a TIMEOUT_MS bound; 0 when connected, -1 with errno. */
static int connect_bounded(int fd, const struct sockaddr* sa, socklen_t len) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return -1;
  if (connect(fd, sa, len) == 0) return 0;
  if (errno != EINPROGRESS) return -1;
  if (wait_for(fd, POLLOUT, TIMEOUT_MS) < 0) return -1;
  int err = 0;
  socklen_t err_len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return -1;
  errno = err;
  return err == 0 ? 0 : -1;
}

int verb_tcp(char** args) {
  struct endpoint ep;
  int bad = parse_endpoint(args[0], args[1], &ep);
  if (bad) return bad_arg("tcp", args[bad - 1]);
  int fd = socket(ep.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return denied("tcp", "socket");
  int rc = connect_bounded(fd, (struct sockaddr*)&ep.ss, ep.len);
  int err = errno;
  close(fd);
  if (rc == 0) return ok("tcp %s %s connected", args[0], args[1]);
  /* A refusal means packets reached the peer, which is what this verb measures. */
  if (err == ECONNREFUSED) return ok("tcp %s %s refused by peer", args[0], args[1]);
  errno = err;
  return denied("tcp", describe("connect %s %s", args[0], args[1]));
}

int verb_udp(char** args) {
  struct endpoint ep;
  int bad = parse_endpoint(args[0], args[1], &ep);
  if (bad) return bad_arg("udp", args[bad - 1]);
  int fd = socket(ep.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return denied("udp", "socket");
  static const char payload[] = "cordon-probe\n";
  ssize_t n = sendto(fd, payload, sizeof payload - 1, 0, (struct sockaddr*)&ep.ss, ep.len);
  int err = errno;
  close(fd);
  errno = err;
  if (n < 0) return denied("udp", describe("sendto %s %s", args[0], args[1]));
  return ok("udp %s %s sent %zd bytes", args[0], args[1], n);
}

/* A standard query (RD set) for the A record of example.com. */
static const unsigned char dns_query[] = {
    0x43, 0x50, 0x01, 0x00, 0,   1,   0,   0,   0, 0,   0,   0,      /* header */
    7,    'e',  'x',  'a',  'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, /* name */
    0,    1,    0,    1,                                             /* A, IN */
};

static int dns_exchange(int fd, const struct endpoint* ep, const char* addr) {
  /* Connected, so an ICMP port unreachable surfaces as ECONNREFUSED instead of a timeout. */
  if (connect(fd, (const struct sockaddr*)&ep->ss, ep->len) != 0) {
    return denied("dns", describe("connect %s:53", addr));
  }
  if (send(fd, dns_query, sizeof dns_query, 0) < 0) {
    return denied("dns", describe("send %s:53", addr));
  }
  if (wait_for(fd, POLLIN, TIMEOUT_MS) < 0) return denied("dns", describe("reply %s:53", addr));
  unsigned char reply[512];
  ssize_t n = recv(fd, reply, sizeof reply, 0);
  if (n < 0) return denied("dns", describe("recv %s:53", addr));
  int rcode = n >= 4 ? reply[3] & 0x0f : -1;
  return ok("dns %s reply %zd bytes rcode=%d", addr, n, rcode);
}

int verb_dns(char** args) {
  struct endpoint ep;
  if (parse_endpoint(args[0], "53", &ep)) return bad_arg("dns", args[0]);
  int fd = socket(ep.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return denied("dns", "socket");
  int rc = dns_exchange(fd, &ep, args[0]);
  close(fd);
  return rc;
}

static uint16_t inet_checksum(const unsigned char* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
  if (len & 1) sum += (uint32_t)p[len - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

int verb_icmp(char** args) {
  struct endpoint ep;
  if (parse_endpoint(args[0], NULL, &ep)) return bad_arg("icmp", args[0]);
  int v4 = ep.family == AF_INET;
  int proto = v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
  /* Echo request: type, code, checksum, id, sequence, then a small payload. */
  unsigned char pkt[16] = {v4 ? 8 : 128, 0, 0, 0, 0x43, 0x50, 0, 1, 'c', 'o', 'r', 'd', 'o', 'n'};
  /* The kernel fills in ICMPv6 checksums itself; ICMPv4 raw sockets need ours. */
  uint16_t sum = inet_checksum(pkt, sizeof pkt);
  if (v4) {
    pkt[2] = (unsigned char)(sum >> 8);
    pkt[3] = (unsigned char)(sum & 0xff);
  }
  const char* via = "ping";
  int fd = socket(ep.family, SOCK_DGRAM | SOCK_CLOEXEC, proto);
  if (fd < 0) {
    int ping_err = errno;
    via = "raw";
    fd = socket(ep.family, SOCK_RAW | SOCK_CLOEXEC, proto);
    if (fd < 0) return denied("icmp", describe("ping socket: %s; raw socket", strerror(ping_err)));
  }
  ssize_t n = sendto(fd, pkt, sizeof pkt, 0, (struct sockaddr*)&ep.ss, ep.len);
  int err = errno;
  close(fd);
  errno = err;
  if (n < 0) return denied("icmp", describe("send via %s socket to %s", via, args[0]));
  return ok("icmp %s sent via %s socket", args[0], via);
}

/* Abstract address "\0NAME"; the length excludes any trailing NUL, as the kernel expects. */
static int abstract_addr(const char* name, struct sockaddr_un* sun, socklen_t* len) {
  size_t n = strlen(name);
  if (n == 0 || n >= sizeof sun->sun_path) return -1;
  memset(sun, 0, sizeof *sun);
  sun->sun_family = AF_UNIX;
  memcpy(sun->sun_path + 1, name, n);
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
  return 0;
}

int verb_abstract(char** args) {
  struct sockaddr_un sun;
  socklen_t len;
  if (abstract_addr(args[0], &sun, &len)) return bad_arg("abstract", args[0]);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return denied("abstract", "socket");
  int rc = connect_bounded(fd, (struct sockaddr*)&sun, len);
  int err = errno;
  close(fd);
  errno = err;
  if (rc != 0) return denied("abstract", describe("connect @%s", args[0]));
  return ok("abstract %s connected", args[0]);
}

/* Accepts (and answers with one byte) every connection until DEADLINE. */
static void serve_until(int fd, double deadline) {
  for (;;) {
    int left_ms = (int)((deadline - now_seconds()) * 1000);
    if (left_ms <= 0) return;
    if (wait_for(fd, POLLIN, left_ms) < 0) continue;
    int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0) continue;
    if (send(conn, "y", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
      /* The peer may already be gone; nothing to report. */
    }
    close(conn);
  }
}

int verb_abstract_listen(char** args) {
  struct sockaddr_un sun;
  socklen_t len;
  double seconds;
  if (abstract_addr(args[0], &sun, &len)) return bad_arg("abstract-listen", args[0]);
  if (parse_seconds(args[1], &seconds)) return bad_arg("abstract-listen", args[1]);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return denied("abstract-listen", "socket");
  if (bind(fd, (struct sockaddr*)&sun, len) != 0) {
    return denied("abstract-listen", describe("bind @%s", args[0]));
  }
  if (listen(fd, 16) != 0) return denied("abstract-listen", "listen");
  double deadline = now_seconds() + seconds;
  ok("abstract-listen %s", args[0]);
  serve_until(fd, deadline);
  close(fd);
  return 0;
}

/* The loopback round trip; FDS (server, client, accepted) are closed by the caller. */
static int loopback_steps(int fds[3]) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if ((fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
    return denied("loopback", "socket");
  }
  if (bind(fds[0], (struct sockaddr*)&addr, len) != 0) {
    return denied("loopback", "bind 127.0.0.1:0");
  }
  if (listen(fds[0], 1) != 0) return denied("loopback", "listen");
  if (getsockname(fds[0], (struct sockaddr*)&addr, &len) != 0) {
    return denied("loopback", "getsockname");
  }
  int port = ntohs(addr.sin_port);
  if ((fds[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
    return denied("loopback", "socket");
  }
  if (connect_bounded(fds[1], (struct sockaddr*)&addr, len) != 0) {
    return denied("loopback", describe("connect 127.0.0.1:%d", port));
  }
  if (wait_for(fds[0], POLLIN, TIMEOUT_MS) < 0) return denied("loopback", "accept");
  if ((fds[2] = accept4(fds[0], NULL, NULL, SOCK_CLOEXEC)) < 0) {
    return denied("loopback", "accept");
  }
  if (send(fds[1], "z", 1, MSG_NOSIGNAL) != 1) return denied("loopback", "send");
  char c = 0;
  if (wait_for(fds[2], POLLIN, TIMEOUT_MS) < 0 || recv(fds[2], &c, 1, 0) != 1) {
    return denied("loopback", "recv");
  }
  if (c != 'z') return refused("loopback", "recv", "wrong byte");
  return ok("loopback 127.0.0.1:%d", port);
}

int verb_loopback(char** args) {
  (void)args;
  int fds[3] = {-1, -1, -1};
  int rc = loopback_steps(fds);
  for (int i = 0; i < 3; i++) {
    if (fds[i] >= 0) close(fds[i]);
  }
  return rc;
}

int verb_interfaces(char** args) {
  (void)args;
  struct if_nameindex* ifs = if_nameindex();
  if (ifs == NULL) return denied("interfaces", "if_nameindex");
  char line[2048] = "";
  size_t used = 0;
  for (struct if_nameindex* p = ifs; p->if_index != 0; p++) {
    int n = snprintf(line + used, sizeof line - used, " %s", p->if_name);
    if (n < 0 || (size_t)n >= sizeof line - used) break;
    used += (size_t)n;
  }
  if_freenameindex(ifs);
  return ok("interfaces%s", line);
}
