// Google Cloud Storage through its S3-compatible XML API (docs/s3.md, "Google Cloud Storage"):
// the S3 client signs with an HMAC key (Signature V4, region "auto") against
// https://storage.googleapis.com, path-style. Credentials are read as GCS documents them for
// HMAC keys: GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY, else the boto file ($BOTO_CONFIG, else
// ~/.boto) [Credentials] gs_access_key_id and gs_secret_access_key. NUBO_GS_ENDPOINT_URL, or
// the boto file's gs_host (and gs_port), points at another endpoint.
#pragma once

#include <memory>
#include <string_view>

#include "transfer/store/s3/config.hpp"
#include "transfer/store/store.hpp"

namespace nubo::gcs {

// "gs://BUCKET/KEY"; GCS's bucket rules: 3 to 63 lower-case letters, digits, '-', '_' and '.'
// (up to 222 with dots), starting and ending with a letter or digit.
store::ObjectUrl parse_gs_url(std::string_view text);
// Error(invalid_argument) saying where keys were looked for when there are none.
s3::Config load_config();
std::unique_ptr<store::Store> open_store(const store::Options& options);

}  // namespace nubo::gcs
