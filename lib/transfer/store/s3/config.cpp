#include "transfer/store/s3/config.hpp"

#include <cmath>
#include <cstdlib>

#include "common/env.hpp"
#include "common/ini.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/aws_names.hpp"

namespace nubo::s3 {
namespace {

using ini::env;

std::string home_file(const char* variable, const char* name) {
  if (auto v = env(variable); !v.empty()) return v;
  return env("HOME") + "/.aws/" + name;
}

}  // namespace

Config load_config(const std::string& profile, Service service) {
  Config c;
  const bool s3 = service == Service::s3;
  const std::string name = s3 ? "S3" : "KMS";
  c.profile = !profile.empty()              ? profile
              : !env("AWS_PROFILE").empty() ? env("AWS_PROFILE")
                                            : "default";
  const auto credentials_path = home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const auto config_path = home_file("AWS_CONFIG_FILE", "config");
  const auto credentials_file = ini::read_file(credentials_path, "AWS credentials file");
  const auto config_file = ini::read_file(config_path, "AWS config file");
  const ini::Section* from_credentials = nullptr;
  const ini::Section* from_config = nullptr;
  if (auto it = credentials_file.find(c.profile); it != credentials_file.end())
    from_credentials = &it->second;
  const auto config_name = c.profile == "default" ? c.profile : "profile " + c.profile;
  if (auto it = config_file.find(config_name); it != config_file.end()) from_config = &it->second;
  const bool named = !profile.empty() || !env("AWS_PROFILE").empty();
  if (named && c.profile != "default" && !from_credentials && !from_config)
    throw Error(Errc::invalid_argument, "the AWS profile '" + c.profile + "' is in neither " +
                                            credentials_path + " nor " + config_path);
  // The profile's value for `key`: the credentials file first, as the CLI reads it.
  auto from_files = [&](const std::string& key) {
    for (const ini::Section* s : {from_credentials, from_config}) {
      if (!s) continue;
      if (auto it = s->find(key); it != s->end() && !it->second.empty()) return it->second;
    }
    return std::string();
  };

  if (!env("AWS_ACCESS_KEY_ID").empty() || !env("AWS_SECRET_ACCESS_KEY").empty()) {
    c.credentials = {env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
                     env("AWS_SESSION_TOKEN")};
  } else {
    c.credentials = {from_files("aws_access_key_id"), from_files("aws_secret_access_key"),
                     from_files("aws_session_token")};
  }
  // A usage error, not a temporary one: running the same command again cannot find them.
  if (c.credentials.access_key_id.empty() || c.credentials.secret_access_key.empty())
    throw Error(Errc::invalid_argument,
                "no " + name +
                    " credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the "
                    "profile '" +
                    c.profile + "' aws_access_key_id and aws_secret_access_key in " +
                    credentials_path);

  for (const auto& v : {env("AWS_REGION"), env("AWS_DEFAULT_REGION"), from_files("region")}) {
    if (!v.empty()) {
      c.region = v;
      break;
    }
  }
  // It names a host and enters every signature: AWS's spelling only.
  check_region(c.region, "the " + name +
                             " region (AWS_REGION, AWS_DEFAULT_REGION or the "
                             "profile's region)");
  for (const auto& v : {env(s3 ? "AWS_ENDPOINT_URL_S3" : "AWS_ENDPOINT_URL_KMS"),
                        env("AWS_ENDPOINT_URL"), from_files("endpoint_url")}) {
    if (!v.empty()) {
      c.endpoint = v;
      break;
    }
  }
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  if (!c.endpoint.empty() && c.endpoint.rfind("http://", 0) != 0 &&
      c.endpoint.rfind("https://", 0) != 0)
    throw Error(Errc::invalid_argument, "the " + name + " endpoint '" + c.endpoint +
                                            "' must start with http:// or https://");
  // Addressing: as configured; "auto" (the default) is virtual-hosted on AWS and path-style on
  // other endpoints, whose DNS rarely resolves bucket names.
  const auto style = from_files("s3.addressing_style");
  if (!style.empty() && style != "path" && style != "virtual" && style != "auto")
    throw Error(Errc::invalid_argument, "s3 addressing_style '" + style + "' in the profile '" +
                                            c.profile + "': use path, virtual or auto");
  c.path_style = style == "path" || ((style.empty() || style == "auto") && !c.endpoint.empty());
  const bool attempts_from_env = !env("AWS_MAX_ATTEMPTS").empty();
  if (const auto v = attempts_from_env ? env("AWS_MAX_ATTEMPTS") : from_files("max_attempts");
      !v.empty()) {
    const std::string where =
        attempts_from_env ? "AWS_MAX_ATTEMPTS" : "max_attempts in the profile '" + c.profile + "'";
    const double n = text::parse_double(v, where, 1, 100);
    if (n != std::floor(n))
      throw Error(Errc::invalid_argument,
                  where + " '" + v + "': a whole number of attempts, 1..100");
    c.max_attempts = static_cast<int>(n);
  }
  if (const auto t = nubo::env::store_timeout_s()) c.timeout_seconds = *t;
  if (c.endpoint.empty())
    c.endpoint =
        s3 ? "https://s3." + c.region + "." + std::string(partition_of_region(c.region).domain)
           : kms_endpoint(c.region);
  return c;
}

}  // namespace nubo::s3
