// One AWS API request as every AWS client of nubo sends it (S3 and KMS): signed with SigV4 under
// the configuration's credentials and region, logged at NUBO_LOG=debug, and retried with
// exponential backoff and jitter on 5xx (but 501 and 505), 429 and the services' busy codes,
// and on timeouts; anything else is handed to the client's own `fail`, which names what a person
// can do about it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "common/http.hpp"
#include "transfer/bytes.hpp"
#include "transfer/store/s3/config.hpp"

namespace nubo::s3 {

struct SignedRequest {
  std::string what;         // for messages: "GET s3://bucket/key", "KMS Decrypt of KEY"
  std::string_view action;  // the permission it needs ("s3:GetObject"), for the log
  std::string service;      // SigV4's service: "s3", "kms"
  std::string method;
  std::string scheme_host;  // "https://host[:port]"
  std::string host;         // as signed
  std::string path;         // encoded
  std::string query;        // encoded
  std::map<std::string, std::string> headers;
  transfer::Bytes body;
  std::size_t max_response = 1 << 20;
  // Send the body as UNSIGNED-PAYLOAD (sigv4.hpp says when that is safe) unless
  // `payloads_signed` says the server refused it once.
  bool unsigned_payload = false;
};

// How a service writes its errors.
struct ServiceDialect {
  // The error's code and message from an answer (S3: XML <Code>, KMS: JSON "__type").
  std::string (*code)(const http::Response&);
  std::string (*message)(const http::Response&);
};

struct SendPolicy {
  int retries = 6;  // attempts after the first
  double timeout_seconds = 30;
};

// The 2xx answer to `request`. An answer that may pass is retried; any other is given to `fail`,
// which must throw. A server that refuses an UNSIGNED-PAYLOAD body (400, 403 or 501) gets it again
// at once with its SHA-256, and `payloads_signed` (when given) is set so that later requests sign
// theirs from the start. Error(unavailable) when the attempts run out, naming the last reason.
http::Response send_signed(const SignedRequest& request, const Config& config,
                           const SendPolicy& policy, const ServiceDialect& dialect,
                           const std::function<void(const http::Response&)>& fail,
                           std::atomic<bool>* payloads_signed = nullptr);

}  // namespace nubo::s3
