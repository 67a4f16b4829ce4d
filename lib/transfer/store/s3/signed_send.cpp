#include "transfer/store/s3/signed_send.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <thread>

#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/retry.hpp"
#include "transfer/store/s3/sigv4.hpp"

namespace nubo::s3 {
namespace {

// What may pass: 5xx but 501 (Not Implemented) and 505 (HTTP Version Not Supported), which a
// server answers every time, and the services' codes for a busy or slow moment (S3's, KMS's).
bool retryable(long status, const std::string& code) {
  return (status >= 500 && status != 501 && status != 505) || status == 429 || code == "SlowDown" ||
         code == "RequestTimeout" || code == "InternalError" || code == "ThrottlingException" ||
         code == "KMSInternalException" || code == "DependencyTimeoutException";
}

// One line per request at NUBO_LOG=debug: when it started (seconds since the first request of
// the process), the permission it needs, what it asked, what came back and how long it took, so
// that a transfer's timeline (requests in flight, their latency, the gaps between them) can be read
// off stderr.
void log_request(std::string_view action, const http::Request& request, long status,
                 std::size_t bytes, std::chrono::steady_clock::time_point started) {
  if (log::level() < env::LogLevel::debug) return;
  static const auto first = started;
  using seconds = std::chrono::duration<double>;
  const auto range = request.headers.find("range");
  char line[160];
  std::snprintf(line, sizeof line, "at +%.3f s: ", seconds(started - first).count());
  std::string text = line + std::string(action) + " " + request.method + " " + request.url;
  if (range != request.headers.end()) text += " (" + range->second + ")";
  std::snprintf(line, sizeof line, ": %ld, %zu bytes sent, %zu received, in %.1f ms", status,
                request.body.size(), bytes,
                seconds(std::chrono::steady_clock::now() - started).count() * 1e3);
  log::debug(text + line);
}

}  // namespace

http::Response send_signed(const SignedRequest& call, const Config& config,
                           const SendPolicy& policy, const ServiceDialect& dialect,
                           const std::function<void(const http::Response&)>& fail,
                           std::atomic<bool>* payloads_signed) {
  const std::string base = call.scheme_host + call.path;
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 0;; ++attempt) {
    SignInput in;
    in.method = call.method;
    in.path = call.path;
    in.query = call.query;
    in.headers = call.headers;
    in.headers["host"] = call.host;
    in.service = call.service;
    const bool unsigned_payload =
        call.unsigned_payload && !(payloads_signed && payloads_signed->load());
    in.payload_sha256 =
        unsigned_payload
            ? std::string(kUnsignedPayload)
            : sha256_hex({reinterpret_cast<const char*>(call.body.data()), call.body.size()});
    in.amz_date = amz_date(static_cast<long long>(std::time(nullptr)));
    in.region = config.region;
    const auto authorization = sign(in, config.credentials);
    http::Request request;
    request.method = call.method;
    request.url = call.query.empty() ? base : base + "?" + call.query;
    request.headers = in.headers;
    request.headers.erase("host");  // libcurl sends it from the URL
    request.headers["authorization"] = authorization;
    request.body = call.body;
    request.max_response = call.max_response;
    request.timeout_seconds = policy.timeout_seconds;
    std::string why;
    try {
      const auto started = std::chrono::steady_clock::now();
      auto r = http::request(request);
      log_request(call.action, request, r.status, r.body.size(), started);
      if (r.status >= 200 && r.status < 300) return r;
      const std::string code = dialect.code(r);
      // A server that does not take UNSIGNED-PAYLOAD refuses the request (400, 403 or 501, in
      // its own words): sent again at once with the payload's SHA-256, as every later one.
      if (unsigned_payload && payloads_signed &&
          (r.status == 400 || r.status == 403 || r.status == 501)) {
        if (!payloads_signed->exchange(true))
          log::info(call.what + ": the server refused an unsigned payload (" +
                    (code.empty() ? std::to_string(r.status) : code) +
                    "): payloads are signed by their SHA-256 from now on");
        --attempt;
        continue;
      }
      if (!retryable(r.status, code)) {
        fail(r);
        throw Error(Errc::internal, call.what + ": the failure went unreported");
      }
      why = "HTTP " + std::to_string(r.status) + (code.empty() ? "" : " " + code);
      if (attempt >= policy.retries) {
        const auto message = dialect.message(r);
        if (!message.empty()) why += " (" + message.substr(0, 300) + ")";
      }
    } catch (const Error& e) {
      if (e.code() != Errc::unavailable) throw;
      why = e.what();
    }
    // Exponential backoff with jitter: 0.1 s, 0.2 s, ... at most 20 s.
    const RetryPolicy backoff{policy.retries + 1, 0.1, 20, true};
    if (!backoff.again(attempt + 1))
      throw Error(Errc::unavailable,
                  call.what + ": " + why + ", still after " + std::to_string(attempt + 1) +
                      " attempts (AWS_MAX_ATTEMPTS): the server is overloaded or unreachable; "
                      "run the same command again later");
    const double wait = backoff.delay_s(attempt + 1, rng);
    log::info(call.what + ": " + why + "; retrying in " + std::to_string(wait).substr(0, 4) + " s");
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

}  // namespace nubo::s3
