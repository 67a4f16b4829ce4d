#include "common/http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <memory>
#include <mutex>

#include "nubo/error.hpp"

namespace nubo::http {
namespace {

// The longest line a filtered body may hold.
constexpr std::size_t kMaxLine = 1 << 20;

// The stop flag of this thread's CancelScope, if any.
thread_local const std::atomic<bool>* cancel_flag = nullptr;

int on_progress(void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(flag)->load() ? 1 : 0;
}

struct Transfer {
  const Request* request = nullptr;
  Response* response = nullptr;
  std::size_t sent = 0;
  bool too_large = false;
  std::string partial;  // a filtered body's line not yet ended
};

bool keep(Transfer* t, std::string_view bytes) {
  if (t->response->body.size() + bytes.size() > t->request->max_response) {
    t->too_large = true;
    return false;
  }
  t->response->body.append(bytes);
  return true;
}

// A filtered body: whole lines, each kept or dropped.
bool filter_lines(Transfer* t, std::string_view data) {
  while (!data.empty()) {
    const auto newline = data.find('\n');
    if (newline == std::string_view::npos) {
      t->partial.append(data);
      if (t->partial.size() > kMaxLine) t->too_large = true;
      return !t->too_large;
    }
    t->partial.append(data.substr(0, newline + 1));
    data.remove_prefix(newline + 1);
    if (t->request->keep_line(t->partial) && !keep(t, t->partial)) return false;
    t->partial.clear();
  }
  return true;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const auto bytes = size * n;
  const bool ok = t->request->keep_line ? filter_lines(t, {data, bytes}) : keep(t, {data, bytes});
  return ok ? bytes : 0;  // 0 stops the transfer
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const auto bytes = size * n;
  std::string line(data, bytes);
  const auto colon = line.find(':');
  if (colon != std::string::npos && t->response->headers.size() < 256) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto value = line.substr(colon + 1);
    const auto a = value.find_first_not_of(" \t");
    const auto b = value.find_last_not_of(" \t\r\n");
    t->response->headers[name] = a == std::string::npos ? "" : value.substr(a, b - a + 1);
    // The body's room at once, up to what is accepted: appending a large body piece by piece
    // into a growing string copies it again at every doubling and faults in fresh pages each
    // time (a 16 MiB range read: about twice its bytes copied, and its page faults, for nothing).
    if (name == "content-length" && !t->request->keep_line) {
      std::uint64_t length = 0;
      const std::string& v = t->response->headers[name];
      if (!v.empty() && std::from_chars(v.data(), v.data() + v.size(), length).ec == std::errc{})
        t->response->body.reserve(
            static_cast<std::size_t>(std::min<std::uint64_t>(length, t->request->max_response)));
    }
  }
  return bytes;
}

std::size_t on_send(char* out, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const auto left = t->request->body.size() - t->sent;
  const auto bytes = std::min(left, size * n);
  std::memcpy(out, t->request->body.data() + t->sent, bytes);
  t->sent += bytes;
  return bytes;
}

// libcurl's global state, once per process.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};

// One handle per thread: libcurl keeps its connection open between requests to the same host.
CURL* thread_handle() {
  thread_local std::unique_ptr<CURL, EasyDeleter> handle;
  if (!handle) {
    global_init();
    handle.reset(curl_easy_init());
    if (!handle) throw Error(Errc::internal, "curl_easy_init failed");
  }
  curl_easy_reset(handle.get());
  return handle.get();
}

bool text_contains_chunked(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return value.find("chunked") != std::string::npos;
}

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using Url = std::unique_ptr<CURLU, UrlDeleter>;

Url parse_url(std::string_view url) {
  global_init();
  Url u(curl_url());
  if (!u) throw Error(Errc::internal, "curl_url failed");
  const std::string text(url);
  if (curl_url_set(u.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) return nullptr;
  return u;
}

std::string part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(u, which, &value, flags) != CURLUE_OK || !value) return {};
  std::string out(value);
  curl_free(value);
  return out;
}

}  // namespace

std::string without_credentials(std::string_view url) {
  auto u = parse_url(url);
  // Not a URL libcurl reads: whatever follows "scheme://" up to an '@' is dropped all the same.
  if (!u) {
    std::string s(url);
    const auto start = s.find("://");
    const auto at = s.find('@', start == std::string::npos ? 0 : start);
    const auto slash = s.find('/', start == std::string::npos ? 0 : start + 3);
    if (start != std::string::npos && at != std::string::npos &&
        (slash == std::string::npos || at < slash))
      s.erase(start + 3, at - start - 2);
    return s;
  }
  curl_url_set(u.get(), CURLUPART_USER, nullptr, 0);
  curl_url_set(u.get(), CURLUPART_PASSWORD, nullptr, 0);
  curl_url_set(u.get(), CURLUPART_OPTIONS, nullptr, 0);
  return part(u.get(), CURLUPART_URL);
}

std::string origin(std::string_view url) {
  auto u = parse_url(url);
  if (!u)
    throw Error(Errc::invalid_argument, "'" + printable(url.substr(0, 200)) + "' is not a URL");
  std::string host = part(u.get(), CURLUPART_HOST);
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return part(u.get(), CURLUPART_SCHEME) + "://" + host + ":" +
         part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
}

Response request(const Request& request) {
  CURL* c = thread_handle();
  Response response;
  Transfer t;
  t.request = &request;
  t.response = &response;
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers)
    headers = curl_slist_append(headers, (k + ": " + v).c_str());
  // No "Expect: 100-continue" round trip before each part.
  headers = curl_slist_append(headers, "Expect:");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned(headers, curl_slist_free_all);

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.timeout_seconds * 1000));
  // A transfer slower than the floor for the timeout is stalled.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, request.min_bytes_per_s));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max(1.0, request.timeout_seconds)));
  if (request.total_seconds > 0)
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_seconds * 1000));
  if (request.accept_compressed) curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  if (request.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT" || request.method == "POST") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_send);
    curl_easy_setopt(c, CURLOPT_READDATA, &t);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    if (request.method == "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");
  } else if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (cancel_flag) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel_flag));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  const CURLcode rc = curl_easy_perform(c);
  // Messages name the URL without the credentials it may carry.
  const std::string what = request.method + " " + printable(without_credentials(request.url));
  if (rc == CURLE_ABORTED_BY_CALLBACK) throw Error(Errc::cancelled, what + ": abandoned");
  if (t.too_large)
    throw Error(Errc::corrupt, what + ": the response is larger than " +
                                   std::to_string(request.max_response) + " bytes");
  if (rc != CURLE_OK) {
    std::string why = curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT)
      why += " (no progress for " + std::to_string(static_cast<int>(request.timeout_seconds)) +
             " s, or past the request's time limit)";
    throw Error(Errc::unavailable, what + ": " + why);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (request.require_framing && response.status / 100 == 2 && request.method != "HEAD") {
    long version = 0;
    curl_easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
    const auto te = response.headers.find("transfer-encoding");
    const bool chunked = te != response.headers.end() && text_contains_chunked(te->second);
    if ((version == CURL_HTTP_VERSION_1_0 || version == CURL_HTTP_VERSION_1_1) && !chunked &&
        !response.headers.contains("content-length"))
      throw Error(Errc::corrupt, what +
                                     ": the server did not say where the body ends (no "
                                     "Content-Length, not chunked): a connection cut short "
                                     "would look whole");
  }
  // A filtered body's last line, when it has no newline.
  if (request.keep_line && !t.partial.empty() && request.keep_line(t.partial) &&
      !keep(&t, t.partial))
    throw Error(Errc::corrupt, what + ": the response is larger than " +
                                   std::to_string(request.max_response) + " bytes");
  return response;
}

CancelScope::CancelScope(const std::atomic<bool>& stop) : outer_(cancel_flag) {
  cancel_flag = &stop;
}

CancelScope::~CancelScope() {
  cancel_flag = outer_;
}

}  // namespace nubo::http
