// Where to reach S3 and as whom, read the way the AWS CLI reads it (docs/s3.md):
//  - the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION
//    (else AWS_DEFAULT_REGION), AWS_ENDPOINT_URL_S3 (AWS_ENDPOINT_URL_KMS for KMS; else
//    AWS_ENDPOINT_URL), AWS_PROFILE;
//  - then the profile in ~/.aws/credentials ([NAME]) and ~/.aws/config ([profile NAME], or
//    [default]), or the files AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name: keys
//    aws_access_key_id, aws_secret_access_key, aws_session_token, region, endpoint_url, and
//    the "s3 =" block's addressing_style (path, virtual or auto);
//  - AWS_MAX_ATTEMPTS (else the profile's max_attempts), and NUBO_S3_TIMEOUT.
// Keys in the environment win over the files, as with the CLI.
#pragma once

#include <string>

#include "transfer/store/s3/sigv4.hpp"

namespace nubo::s3 {

struct Config {
  std::string profile;  // the profile read ("default" unless AWS_PROFILE or asked)
  Credentials credentials;
  std::string region = "us-east-1";
  // "http(s)://host[:port]" without a trailing '/'; AWS's regional endpoint when not set.
  std::string endpoint;
  bool path_style = false;  // https://host/bucket/key, else https://bucket.host/key
  // Attempts per request, the first included (AWS_MAX_ATTEMPTS, else the profile's
  // max_attempts, as the AWS CLI reads them); 0: the client's default.
  int max_attempts = 0;
  // The longest a connection or a transfer may stall, in seconds (NUBO_S3_TIMEOUT); 0: the
  // client's default.
  double timeout_seconds = 0;
  // A body sent with a Content-MD5 header is signed as UNSIGNED-PAYLOAD instead of by its
  // SHA-256: the signed Content-MD5 binds the body (the server checks it, and nubo checks the
  // ETag it answers), so a second hash of every part is work for nothing. Off for stores whose
  // signing of payloads nubo has not confirmed (GCS's XML API).
  bool unsigned_payload = true;
};

// Error(invalid_argument) for a named profile that no file has, a file that is not what it
// should be (naming the file and line), or no credentials at all (saying where they were
// looked for): none of them goes away when the same command is run again.
// The same files and variables serve both services nubo calls; they differ in the endpoint.
enum class Service { s3, kms };
Config load_config(const std::string& profile = "", Service service = Service::s3);

}  // namespace nubo::s3
