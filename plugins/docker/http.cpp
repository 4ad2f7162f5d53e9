// libcurl underneath: one easy handle per request, CONNECT_ONLY for hijacked streams.
#include "http.hpp"

#include <curl/curl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <mutex>

namespace cordon::docker {

namespace {

constexpr long kConnectTimeoutMs = 5000;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

// A libcurl handle. Outside the anonymous namespace: RawStream::Impl, a class of the header,
// holds one.
struct Easy {
  CURL* h = nullptr;
  curl_slist* headers = nullptr;
  char error[CURL_ERROR_SIZE] = {};  ///< libcurl's detail of the last failure
  bool client_cert = false;          ///< a TLS client certificate is presented
  Easy() {
    global_init();
    h = curl_easy_init();
    if (!h) throw Error(code::kBackendFault, "cannot create an HTTP handle");
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h, CURLOPT_PRIVATE, this);
  }
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
  }
  Easy(const Easy&) = delete;
  Easy& operator=(const Easy&) = delete;
};

namespace {

void setup(Easy& e, const Endpoint& ep, const std::string& path) {
  std::string url = ep.base_url + path;
  curl_easy_setopt(e.h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e.h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e.h, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
  curl_easy_setopt(e.h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e.h, CURLOPT_PROXY, "");
  if (!ep.socket.empty()) curl_easy_setopt(e.h, CURLOPT_UNIX_SOCKET_PATH, ep.socket.c_str());
  if (ep.tls) {
    // As the docker CLI does: a client certificate only when both of its files are there.
    std::string cert = ep.cert_dir + "/cert.pem", key = ep.cert_dir + "/key.pem";
    e.client_cert = ::access(cert.c_str(), F_OK) == 0 && ::access(key.c_str(), F_OK) == 0;
    if (e.client_cert) {
      curl_easy_setopt(e.h, CURLOPT_SSLCERT, cert.c_str());
      curl_easy_setopt(e.h, CURLOPT_SSLKEY, key.c_str());
    }
    curl_easy_setopt(e.h, CURLOPT_CAINFO, (ep.cert_dir + "/ca.pem").c_str());
    curl_easy_setopt(e.h, CURLOPT_SSL_VERIFYPEER, ep.tls_verify ? 1L : 0L);
    curl_easy_setopt(e.h, CURLOPT_SSL_VERIFYHOST, ep.tls_verify ? 2L : 0L);
  }
}

Error unreachable(const Endpoint& ep, CURL* h, CURLcode rc) {
  long os = 0;
  curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
  Easy* e = nullptr;
  curl_easy_getinfo(h, CURLINFO_PRIVATE, &e);
  if (ep.tls && e) {
    std::string why = tls_reason(rc, e->error, e->client_cert, ep.cert_dir);
    if (!why.empty())
      return Error(code::kServiceUnreachable,
                   "cannot use the docker daemon at " + ep.display() + ": " + why,
                   "DOCKER_CERT_PATH (" + ep.cert_dir +
                       ") must hold the CA that signed the daemon's certificate (ca.pem) and a "
                       "client certificate the daemon trusts (cert.pem, key.pem)");
  }
  return Error(code::kServiceUnreachable,
               "no daemon answered at " + ep.display() + ": " + transport_reason(rc, os),
               "start the docker daemon (scripts/docker-daemon start) or point "
               "backends.docker.socket / DOCKER_HOST at one");
}

constexpr int kCancelPollMs = 50;

// curl_easy_perform, or with `cancel`, the same transfer driven by a multi handle so that
// `cancel` is asked every kCancelPollMs (an easy transfer's progress callback can be a second
// apart when nothing moves). Throws Cancelled.
CURLcode perform(CURL* h, const Cancel& cancel) {
  if (!cancel) return curl_easy_perform(h);
  if (cancel()) throw Cancelled();
  CURLM* multi = curl_multi_init();
  if (!multi) return CURLE_OUT_OF_MEMORY;
  curl_multi_add_handle(multi, h);
  CURLcode result = CURLE_RECV_ERROR;
  bool abandoned = false;
  for (int running = 1; running;) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) break;
    if (!running) {
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &left))
        if (m->msg == CURLMSG_DONE) result = m->data.result;
      break;
    }
    if ((abandoned = cancel())) break;
    curl_multi_poll(multi, nullptr, 0, kCancelPollMs, nullptr);
  }
  curl_multi_remove_handle(multi, h);
  curl_multi_cleanup(multi);
  if (abandoned) throw Cancelled();
  return result;
}

std::size_t collect_body(char* data, std::size_t size, std::size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::size_t collect_header(char* data, std::size_t size, std::size_t n, void* user) {
  std::string_view line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = std::string(value);
  }
  return size * n;
}

}  // namespace

std::string transport_reason(int curl_code, long os_errno) {
  std::string why;
  if (os_errno != 0)
    why = std::strerror(static_cast<int>(os_errno));
  else
    why = curl_easy_strerror(static_cast<CURLcode>(curl_code));
  // "Connection refused" -> "connection refused", but "SSL ..." stays.
  if (why.size() > 1 && !std::isupper(static_cast<unsigned char>(why[1])))
    why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  return why;
}

std::string tls_reason(int curl_code, const std::string& detail, bool client_cert,
                       const std::string& cert_dir) {
  std::string d = detail.empty() ? "" : " (" + detail + ")";
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_PEER_FAILED_VERIFICATION:
      return "TLS verification of the daemon's certificate failed: it is not signed by " +
             cert_dir + "/ca.pem or does not name the host" + d;
    case CURLE_SSL_CACERT_BADFILE:
      return "TLS: cannot read the CA certificate " + cert_dir + "/ca.pem" + d;
    case CURLE_SSL_CERTPROBLEM:
      return "TLS: cannot use the client certificate " + cert_dir + "/cert.pem" + d;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
      // The daemon (or its TLS terminator) ended the handshake: with TLS 1.3 a refused client
      // certificate shows only at the first read. libcurl's detail may then be about the
      // closed socket, not the TLS alert: kept only when it is TLS's.
      if (detail.find("SSL") == std::string::npos && detail.find("alert") == std::string::npos)
        d.clear();
      return "the daemon refused the TLS connection" +
             std::string(client_cert ? ": it does not accept the client certificate " + cert_dir +
                                           "/cert.pem"
                                     : ": no client certificate was presented (" + cert_dir +
                                           " has no cert.pem and key.pem)") +
             d;
    default:
      return {};
  }
}

Response http_request(const Endpoint& ep, std::string_view method, const std::string& path,
                      const std::optional<std::string>& body, std::chrono::milliseconds timeout,
                      const Cancel& cancel) {
  Easy e;
  setup(e, ep, path);
  Response r;
  std::string verb(method);
  curl_easy_setopt(e.h, CURLOPT_CUSTOMREQUEST, verb.c_str());
  if (verb == "HEAD") curl_easy_setopt(e.h, CURLOPT_NOBODY, 1L);
  if (body) {
    e.headers = curl_slist_append(e.headers, "Content-Type: application/json");
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDS, body->c_str());
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
  } else if (verb == "POST") {
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDS, "");
  }
  e.headers = curl_slist_append(e.headers, "Expect:");
  curl_easy_setopt(e.h, CURLOPT_HTTPHEADER, e.headers);
  curl_easy_setopt(e.h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(e.h, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(e.h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(e.h, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(e.h, CURLOPT_HEADERDATA, &r.headers);
  CURLcode rc = perform(e.h, cancel);
  if (rc != CURLE_OK) throw unreachable(ep, e.h, rc);
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

namespace {

struct LongState {
  Response* response;
  CURL* handle;
  const std::function<void(long)>* on_head;
};

std::size_t long_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* st = static_cast<LongState*>(user);
  std::string_view line(data, size * n);
  if (line == "\r\n" || line == "\n") {
    long status = 0;
    curl_easy_getinfo(st->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200) (*st->on_head)(status);
    return size * n;
  }
  return collect_header(data, size, n, &st->response->headers);
}

}  // namespace

Response http_long_request(const Endpoint& ep, std::string_view method, const std::string& path,
                           const std::function<void(long)>& on_head,
                           const std::function<bool()>& cancelled) {
  Easy e;
  setup(e, ep, path);
  Response r;
  LongState st{&r, e.h, &on_head};
  std::string verb(method);
  curl_easy_setopt(e.h, CURLOPT_CUSTOMREQUEST, verb.c_str());
  if (verb == "POST") {
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(e.h, CURLOPT_POSTFIELDS, "");
  }
  curl_easy_setopt(e.h, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(e.h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(e.h, CURLOPT_HEADERFUNCTION, long_header);
  curl_easy_setopt(e.h, CURLOPT_HEADERDATA, &st);
  CURLcode rc = CURLE_ABORTED_BY_CALLBACK;
  try {
    rc = perform(e.h, cancelled);
  } catch (const Cancelled&) {
  }
  if (rc != CURLE_OK) throw unreachable(ep, e.h, rc);
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

struct RawStream::Impl {
  Easy easy;
  curl_socket_t sock = CURL_SOCKET_BAD;
  std::string pending;  ///< stream bytes read together with the answer's head
  bool eof = false;
};

namespace {

// Waits until `sock` is ready for `events` or `ms` passed.
void wait_ready(curl_socket_t sock, short events, int ms) {
  pollfd p{sock, events, 0};
  ::poll(&p, 1, ms);
}

void send_all(CURL* h, curl_socket_t sock, std::string_view data, const Endpoint& ep) {
  while (!data.empty()) {
    std::size_t n = 0;
    CURLcode rc = curl_easy_send(h, data.data(), data.size(), &n);
    if (rc == CURLE_AGAIN) {
      wait_ready(sock, POLLOUT, 1000);
      continue;
    }
    if (rc != CURLE_OK) throw unreachable(ep, h, rc);
    data.remove_prefix(n);
  }
}

// Reads the answer's head; returns the status line and leaves later bytes in `rest`.
std::string read_head(CURL* h, curl_socket_t sock, const Endpoint& ep, const Cancel& cancel,
                      std::string& rest) {
  std::string got;
  auto deadline = std::chrono::steady_clock::now() + kRequestTimeout;
  while (got.find("\r\n\r\n") == std::string::npos) {
    if (cancel && cancel()) throw Cancelled();
    if (std::chrono::steady_clock::now() > deadline)
      throw Error(code::kServiceUnreachable,
                  "the docker daemon at " + ep.display() + " did not answer an attach");
    char buf[4096];
    std::size_t n = 0;
    CURLcode rc = curl_easy_recv(h, buf, sizeof buf, &n);
    if (rc == CURLE_AGAIN) {
      wait_ready(sock, POLLIN, kCancelPollMs);
      continue;
    }
    if (rc != CURLE_OK || n == 0) throw unreachable(ep, h, rc == CURLE_OK ? CURLE_RECV_ERROR : rc);
    got.append(buf, n);
  }
  auto end = got.find("\r\n\r\n");
  rest = got.substr(end + 4);
  return got.substr(0, got.find("\r\n"));
}

}  // namespace

RawStream::RawStream(const Endpoint& ep, const std::string& path, const Cancel& cancel)
    : impl_(std::make_unique<Impl>()) {
  CURL* h = impl_->easy.h;
  setup(impl_->easy, ep, "/_ping");
  curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
  // The easy handle's own connection is the stream's, so no multi handle here: the connection
  // is quick (a local socket, or the 5 s connect timeout) and the answer's wait is what polls.
  if (cancel && cancel()) throw Cancelled();
  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) throw unreachable(ep, h, rc);
  curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &impl_->sock);
  std::string request = "POST " + path +
                        " HTTP/1.1\r\nHost: docker\r\nUser-Agent: cordon\r\n"
                        "Content-Type: text/plain\r\nContent-Length: 0\r\n"
                        "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";
  send_all(h, impl_->sock, request, ep);
  std::string status = read_head(h, impl_->sock, ep, cancel, impl_->pending);
  if (status.find(" 101 ") == std::string::npos && status.find(" 200 ") == std::string::npos)
    throw Error(code::kIsolationFailed,
                "the docker daemon refused to attach: '" + status + "' " + impl_->pending);
}

RawStream::~RawStream() = default;

int RawStream::fd() const { return static_cast<int>(impl_->sock); }

bool RawStream::receive(std::string& out) {
  out.clear();
  if (!impl_->pending.empty()) {
    out.swap(impl_->pending);
    return true;
  }
  if (impl_->eof) return false;
  char buf[65536];
  std::size_t n = 0;
  CURLcode rc = curl_easy_recv(impl_->easy.h, buf, sizeof buf, &n);
  if (rc == CURLE_AGAIN) return true;
  if (rc != CURLE_OK || n == 0) {
    impl_->eof = true;
    return false;
  }
  out.assign(buf, n);
  return true;
}

std::size_t RawStream::send_some(std::string_view data) {
  std::size_t n = 0;
  CURLcode rc = curl_easy_send(impl_->easy.h, data.data(), data.size(), &n);
  if (rc == CURLE_AGAIN) return 0;
  if (rc != CURLE_OK) throw Error(code::kServiceUnreachable, "cannot write the command's stdin");
  return n;
}

void RawStream::close_write() {
  if (impl_->sock != CURL_SOCKET_BAD) ::shutdown(impl_->sock, SHUT_WR);
}

}  // namespace cordon::docker
