#include "transfer/store/gcs/gcs.hpp"

#include <cctype>

#include "common/env.hpp"
#include "common/ini.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/client.hpp"

namespace nubo::gcs {
namespace {

using ini::env;

bool valid_bucket(std::string_view b) {
  const bool dotted = b.find('.') != std::string_view::npos;
  if (b.size() < 3 || b.size() > (dotted ? 222u : 63u)) return false;
  for (char c : b)
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
      return false;
  return std::isalnum(static_cast<unsigned char>(b.front())) &&
         std::isalnum(static_cast<unsigned char>(b.back()));
}

}  // namespace

store::ObjectUrl parse_gs_url(std::string_view text) {
  return s3::parse_bucket_url(
      text, "gs", valid_bucket,
      "GCS accepts: 3 to 63 lower-case letters, digits, '-', '_' and '.' (222 with dots)");
}

s3::Config load_config() {
  s3::Config c;
  c.unsigned_payload = false;  // GCS's XML API: every payload signed by its SHA-256
  c.profile = "gs";
  c.region = "auto";  // what GCS takes in a Signature V4 scope
  c.path_style = true;
  const auto boto_path = !env("BOTO_CONFIG").empty() ? env("BOTO_CONFIG") : env("HOME") + "/.boto";
  const auto boto = ini::read_file(boto_path, "boto configuration file");
  const ini::Section none;
  const auto section = boto.find("Credentials");
  const auto& credentials = section == boto.end() ? none : section->second;
  const auto from_boto = [&](const char* key) {
    const auto it = credentials.find(key);
    return it == credentials.end() ? std::string() : it->second;
  };
  if (!env("GS_ACCESS_KEY_ID").empty() || !env("GS_SECRET_ACCESS_KEY").empty()) {
    c.credentials = {env("GS_ACCESS_KEY_ID"), env("GS_SECRET_ACCESS_KEY"), ""};
  } else {
    c.credentials = {from_boto("gs_access_key_id"), from_boto("gs_secret_access_key"), ""};
  }
  if (c.credentials.access_key_id.empty() || c.credentials.secret_access_key.empty())
    throw Error(Errc::invalid_argument,
                "no Google Cloud Storage HMAC key: set GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY, "
                "or gs_access_key_id and gs_secret_access_key under [Credentials] in " +
                    boto_path + " (Cloud Storage > Settings > Interoperability makes one)");
  if (const auto endpoint = nubo::env::gs_endpoint()) {  // checked where it is read
    c.endpoint = *endpoint;
  } else if (const auto host = from_boto("gs_host"); !host.empty()) {
    c.endpoint = "https://";  // appended: GCC 12 warns (-Wrestrict, falsely) on "..." + host
    c.endpoint += host;
    if (const auto port = from_boto("gs_port"); !port.empty())
      c.endpoint += ":" + std::to_string(static_cast<int>(
                              text::parse_double(port, "gs_port in " + boto_path, 1, 65535)));
  } else {
    c.endpoint = "https://storage.googleapis.com";
  }
  if (const auto t = nubo::env::store_timeout_s()) c.timeout_seconds = *t;
  return c;
}

std::unique_ptr<store::Store> open_store(const store::Options& options) {
  if (!options.s3.server_side_encryption.empty())
    throw Error(Errc::invalid_argument,
                "server-side encryption '" + options.s3.server_side_encryption +
                    "' is S3's: Google Cloud Storage encrypts every object at rest itself");
  return std::make_unique<s3::Client>(load_config(), options);
}

}  // namespace nubo::gcs
