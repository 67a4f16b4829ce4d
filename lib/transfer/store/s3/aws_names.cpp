#include "transfer/store/s3/aws_names.hpp"

#include <array>
#include <cctype>

#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::s3 {
namespace {

constexpr std::array<Partition, 3> kPartitions{
    {{"aws", "amazonaws.com"}, {"aws-cn", "amazonaws.com.cn"}, {"aws-us-gov", "amazonaws.com"}}};

bool id_chars(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

// An alias's name as KMS allows it: 1-250 of [A-Za-z0-9/_-].
bool alias_chars(std::string_view s) {
  if (s.empty() || s.size() > 250) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_' && c != '-')
      return false;
  return true;
}

[[noreturn]] void bad_key(std::string_view key, const std::string& why) {
  throw Error(Errc::invalid_argument,
              "'" + printable(std::string(key.substr(0, 200))) + "' is not a KMS key: " + why +
                  " (give a key id, alias/NAME, or arn:aws:kms:REGION:ACCOUNT:key/ID or "
                  "...:alias/NAME)");
}

}  // namespace

bool is_region_name(std::string_view region) {
  if (region.empty() || region.size() > 32) return false;
  if (!std::islower(static_cast<unsigned char>(region.front()))) return false;
  if (!std::isalnum(static_cast<unsigned char>(region.back()))) return false;
  if (region.find("--") != std::string_view::npos) return false;
  for (char c : region)
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '-')
      return false;
  return true;
}

void check_region(std::string_view region, std::string_view where) {
  if (!is_region_name(region))
    throw Error(Errc::invalid_argument,
                std::string(where) + ": '" + printable(region.substr(0, 100)) +
                    "' is not an AWS region (a name such as us-east-1: a-z, 0-9 and '-')");
}

const Partition& partition_of_region(std::string_view region) {
  if (region.starts_with("cn-")) return kPartitions[1];
  if (region.starts_with("us-gov-")) return kPartitions[2];
  return kPartitions[0];
}

const Partition& partition_named(std::string_view name) {
  for (const auto& p : kPartitions)
    if (p.name == name) return p;
  throw Error(Errc::invalid_argument, "'" + printable(name.substr(0, 40)) +
                                          "' is not a partition nubo reaches (aws, aws-cn, "
                                          "aws-us-gov)");
}

KmsKeyName parse_kms_key(std::string_view key) {
  KmsKeyName k;
  k.text = std::string(key);
  if (key.empty()) bad_key(key, "it is empty");
  if (key.size() > 2048) bad_key(key, "it is longer than the 2048 characters KMS allows");
  if (key.find_first_of("*?$") != std::string_view::npos)
    bad_key(key, "IAM's wildcards and variables (*, ?, ${...}) name many keys, not one");
  if (key.starts_with("alias/")) {
    if (!alias_chars(key.substr(6))) bad_key(key, "an alias's name is 1-250 of A-Z a-z 0-9 / _ -");
    return k;
  }
  if (!key.starts_with("arn:")) {
    if (!id_chars(key)) bad_key(key, "a key id is letters, digits and '-'");
    return k;
  }
  const auto parts = text::split(key, ':');
  if (parts.size() != 6) bad_key(key, "an ARN has six fields separated by ':'");
  try {
    partition_named(parts[1]);
  } catch (const Error& e) {
    bad_key(key, "its partition " + std::string(e.what()));
  }
  if (parts[2] != "kms")
    bad_key(key, "the ARN is of service '" + printable(std::string(parts[2])) + "'");
  if (!is_region_name(parts[3])) bad_key(key, "the ARN's region is not an AWS region name");
  if (partition_of_region(parts[3]).name != parts[1])
    bad_key(key,
            "region " + std::string(parts[3]) + " is not in partition " + std::string(parts[1]));
  if (parts[4].size() != 12 || parts[4].find_first_not_of("0123456789") != std::string_view::npos)
    bad_key(key, "the ARN's account is not 12 digits");
  const auto resource = parts[5];
  if (!(resource.starts_with("key/") && id_chars(resource.substr(4))) &&
      !(resource.starts_with("alias/") && alias_chars(resource.substr(6))))
    bad_key(key, "the ARN's resource is neither key/ID nor alias/NAME");
  k.arn = true;
  k.partition = std::string(parts[1]);
  k.region = std::string(parts[3]);
  k.account = std::string(parts[4]);
  k.resource = std::string(resource);
  return k;
}

KmsKeyName parse_kms_key_arn(std::string_view key, std::string_view where) {
  KmsKeyName k;
  try {
    k = parse_kms_key(key);
  } catch (const Error& e) {
    throw Error(Errc::corrupt, std::string(where) + ": " + e.what());
  }
  if (!k.arn)
    throw Error(Errc::corrupt, std::string(where) + ": '" + printable(key.substr(0, 200)) +
                                   "' is not a KMS key ARN");
  return k;
}

std::string kms_endpoint(std::string_view region) {
  check_region(region, "KMS endpoint");
  return "https://kms." + std::string(region) + "." +
         std::string(partition_of_region(region).domain);
}

}  // namespace nubo::s3
