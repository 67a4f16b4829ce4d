// AWS's names as nubo takes them from outside (the command line, the configuration, an archive's
// KMS record, an object's metadata, a journal): regions, partitions and KMS keys, each checked
// in full before any part of it reaches a URL, a host name or a signature. A name that is not
// AWS's spelling is refused naming what is wrong; nothing is pasted into a host as read.
#pragma once

#include <string>
#include <string_view>

namespace nubo::s3 {

// Whether `region` is spelled as AWS spells regions: 1-32 of a-z 0-9 '-', starting with a
// letter, ending with a letter or digit, no "--" ("us-east-1", "cn-north-1", "us-gov-west-1").
bool is_region_name(std::string_view region);
// Error(invalid_argument) naming `where` unless is_region_name(region).
void check_region(std::string_view region, std::string_view where);

// The partitions nubo reaches, with the DNS suffix of their endpoints.
struct Partition {
  std::string_view name;    // "aws", "aws-cn", "aws-us-gov"
  std::string_view domain;  // "amazonaws.com", "amazonaws.com.cn"
};
// The partition of a region ("cn-north-1" -> aws-cn), by AWS's naming of regions.
const Partition& partition_of_region(std::string_view region);
// The partition named `name`; Error(invalid_argument) for another.
const Partition& partition_named(std::string_view name);

// A KMS key as the AWS CLI takes it, checked: a key id (1234abcd-..., mrk-...), an alias
// ("alias/NAME"), or the ARN of either ("arn:aws:kms:REGION:ACCOUNT:key/ID", "...:alias/NAME").
struct KmsKeyName {
  std::string text;  // as given
  bool arn = false;  // the fields below are set only for an ARN
  std::string partition, region, account, resource;
};
// Error(invalid_argument) naming what is wrong: an empty or over-long key, characters a key id
// or alias cannot hold, IAM's wildcards and variables (*, ?, ${...}), an ARN of another service,
// an unknown partition, a region that is not a region name, an account that is not 12 digits,
// or a region that is not in the ARN's partition.
KmsKeyName parse_kms_key(std::string_view key);
// The same, requiring an ARN (what KMS answers, and what an archive's record must hold).
KmsKeyName parse_kms_key_arn(std::string_view key, std::string_view where);
// https://kms.REGION.DOMAIN, from a checked region.
std::string kms_endpoint(std::string_view region);

}  // namespace nubo::s3
