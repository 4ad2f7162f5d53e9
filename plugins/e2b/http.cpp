// libcurl, one easy handle per request. Pure I/O: no decision is made here.
#include "http.hpp"

#include <curl/curl.h>
#include <cordon/sdk/error.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

namespace cordon::e2b {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Easy {
  CURL* handle;
  curl_slist* headers = nullptr;
  curl_mime* mime = nullptr;
  Easy() : handle(curl_easy_init()) {
    if (!handle) throw Error(code::kBackendFault, "libcurl could not make a handle");
  }
  ~Easy() {
    curl_slist_free_all(headers);
    curl_mime_free(mime);
    curl_easy_cleanup(handle);
  }
  Easy(const Easy&) = delete;
  Easy& operator=(const Easy&) = delete;
};

struct Transfer {
  const std::function<bool(std::string_view)>* on_body = nullptr;
  const std::function<bool()>* cancelled = nullptr;
  std::string body;
  bool stopped = false;  ///< on_body or cancelled ended it
};

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view chunk(data, size * count);
  if (!t->on_body) {
    t->body.append(chunk);
    return chunk.size();
  }
  if (!(*t->on_body)(chunk)) {
    t->stopped = true;
    return 0;  // abandons the transfer
  }
  return chunk.size();
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->cancelled && *t->cancelled && (*t->cancelled)()) {
    t->stopped = true;
    return 1;
  }
  return 0;
}

void prepare(Easy& e, const Request& r, Transfer& t) {
  global_init();
  curl_easy_setopt(e.handle, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e.handle, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  curl_easy_setopt(e.handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e.handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e.handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e.handle, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e.handle, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e.handle, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(e.handle, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(e.handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e.handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.timeout.count()));
  curl_easy_setopt(e.handle, CURLOPT_TCP_NODELAY, 1L);
  for (const auto& h : r.headers) e.headers = curl_slist_append(e.headers, h.c_str());
  if (r.file_part) {
    e.mime = curl_mime_init(e.handle);
    curl_mimepart* part = curl_mime_addpart(e.mime);
    curl_mime_name(part, "file");
    curl_mime_filename(part, "file");
    curl_mime_data(part, r.body.data(), r.body.size());
    curl_easy_setopt(e.handle, CURLOPT_MIMEPOST, e.mime);
  } else if (r.method != "GET" && r.method != "DELETE") {
    curl_easy_setopt(e.handle, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(e.handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  e.headers = curl_slist_append(e.headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(e.handle, CURLOPT_HTTPHEADER, e.headers);
}

std::atomic<std::int64_t> waited{0};
thread_local bool background = false;

CURLcode timed_perform(CURL* handle) {
  auto t0 = std::chrono::steady_clock::now();
  CURLcode rc = curl_easy_perform(handle);
  if (!background)
    waited +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  return rc;
}

Error unreachable(const Request& r, CURLcode rc) {
  return Error(code::kServiceUnreachable,
               r.method + " " + url_for_messages(r.url) + " failed: " + curl_easy_strerror(rc),
               "check that the service is reachable from this machine (api_url, envd_url)");
}

}  // namespace

std::int64_t request_nanoseconds() { return waited.load(); }

void mark_background_thread() { background = true; }

std::string url_for_messages(const std::string& url) { return url.substr(0, url.find('?')); }

std::string url_escape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Response send(const Request& request) {
  Easy e;
  Transfer t;
  prepare(e, request, t);
  curl_easy_setopt(e.handle, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  CURLcode rc = timed_perform(e.handle);
  if (rc != CURLE_OK) throw unreachable(request, rc);
  Response r;
  curl_easy_getinfo(e.handle, CURLINFO_RESPONSE_CODE, &r.status);
  r.body = std::move(t.body);
  return r;
}

long stream(const Request& request, const std::function<bool(std::string_view)>& on_body,
            const std::function<bool()>& cancelled) {
  Easy e;
  Transfer t;
  t.on_body = &on_body;
  t.cancelled = &cancelled;
  prepare(e, request, t);
  // Without a low-speed limit a silent command's stream waits for as long as it runs; the
  // keepalive events and `cancelled` take care of a dead one.
  CURLcode rc = timed_perform(e.handle);
  long status = 0;
  curl_easy_getinfo(e.handle, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK && !t.stopped) throw unreachable(request, rc);
  return status;
}

}  // namespace cordon::e2b
