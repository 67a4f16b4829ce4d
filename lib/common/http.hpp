// HTTP requests over libcurl, for the S3 client and the cloud metadata watcher: one connection
// reused per thread (keep-alive), timeouts on connecting and on a stalled transfer, and a bound
// on every response body so that a broken or hostile server cannot make the client allocate
// without limit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <cstddef>
#include <span>

namespace nubo::http {

struct Request {
  std::string method;  // GET, PUT, POST, HEAD, DELETE
  std::string url;
  std::map<std::string, std::string> headers;
  std::span<const std::byte> body;
  std::size_t max_response = 16 << 20;  // bytes of body accepted
  double timeout_seconds = 30;          // connect, and the longest stall of a transfer
  double total_seconds = 0;             // the whole request at most; 0: no limit
  // A transfer slower than this many bytes/s for timeout_seconds is stalled: 1 catches a dead
  // peer; a document fetched whole (a catalog) sets a floor that a drip of bytes cannot meet.
  long min_bytes_per_s = 1;
  // Refuse a 2xx answer whose end the server did not mark (HTTP/1 with neither Content-Length nor
  // chunked, ended by closing the connection): a connection cut halfway would read as a whole,
  // shorter, document.
  bool require_framing = false;
  // Ask for a compressed transfer (gzip, deflate), decoded here. Off by default: an object whose
  // stored bytes are compressed must arrive as stored, for its checksum.
  bool accept_compressed = false;
  // When set, the body is read line by line and only the lines it keeps are stored (and count
  // against max_response): a large price list filtered as it arrives.
  std::function<bool(std::string_view line)> keep_line;
};

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
};

// Error(unavailable) for a connection or transfer that fails or stalls (retryable), and
// Error(corrupt) for a response body over max_response.
Response request(const Request& request);

// `url` without the user name, password and login options it may carry
// ("https://u:p@host/x" -> "https://host/x"): what is shown, logged or stored of a URL.
std::string without_credentials(std::string_view url);
// "scheme://host:port" of `url`, lower-case and with the scheme's default port: two URLs reach
// the same server only if their origins are equal. Error(invalid_argument) for a URL libcurl
// cannot parse.
std::string origin(std::string_view url);

// While one lives, the requests its thread makes end with Error(cancelled) once `stop` is true,
// within about a second even when the server sends nothing: how a pool of fetching threads
// abandons requests no one waits for any more (a stalled range that was asked for again).
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>& stop);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* outer_;
};

}  // namespace nubo::http
