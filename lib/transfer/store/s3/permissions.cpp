#include "transfer/store/s3/permissions.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/aws_names.hpp"
#include "transfer/store/s3/client.hpp"
#include "transfer/store/s3/kms.hpp"

namespace nubo::s3 {
namespace {

using store::Operation;

struct Row {
  Operation op;
  std::string_view name;
  std::vector<std::string_view> actions;  // sorted
  // What it asks of KMS for archives and objects encrypted under a KMS key (--encrypt kms:KEY):
  // a fresh key for what it writes, the unwrapping of what it reads.
  std::vector<std::string_view> kms;
};

// What each operation issues (docs/s3.md, "Least privilege"):
//  - pack: the multipart upload (PutObject), its resume (ListParts) and its abort on a cancel,
//    and reading the archive already there (is it the same sources'? up to date?);
//  - unpack (and list, cat, verify): ranged GETs and HEADs;
//  - cp: both ways, trees through listings;
//  - sync: cp's, and deleting at the destination what the source no longer has (--delete);
//  - checkpoint: pack's, the listing of the checkpoints, reading the newest, pruning old ones.
// A pack also unwraps keys: a resumed pack reads its partial archive's, and --if-changed the
// archive already there.
const std::array<Row, 5>& table() {
  static const std::vector<std::string_view> both{"kms:Decrypt", "kms:GenerateDataKey"};
  static const std::array<Row, 5> rows{{
      {Operation::pack,
       "pack",
       {"s3:AbortMultipartUpload", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:PutObject"},
       both},
      {Operation::unpack, "unpack", {"s3:GetObject"}, {"kms:Decrypt"}},
      {Operation::cp,
       "cp",
       {"s3:AbortMultipartUpload", "s3:GetObject", "s3:ListBucket", "s3:ListMultipartUploadParts",
        "s3:PutObject"},
       both},
      {Operation::sync,
       "sync",
       {"s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListBucket",
        "s3:ListMultipartUploadParts", "s3:PutObject"},
       both},
      {Operation::checkpoint,
       "checkpoint",
       {"s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListBucket",
        "s3:ListMultipartUploadParts", "s3:PutObject"},
       both},
  }};
  return rows;
}

bool has(std::string_view query, std::string_view name) {
  for (std::size_t at = 0; at <= query.size();) {
    const auto end = std::min(query.find('&', at), query.size());
    const auto item = query.substr(at, end - at);
    if (item.substr(0, item.find('=')) == name) return true;
    at = end + 1;
  }
  return false;
}

// The ARN partition of the region the environment names (AWS_REGION, else AWS_DEFAULT_REGION):
// China's and GovCloud's regions have their own; no credentials are needed to print a policy.
std::string arn_partition() {
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    const auto region = env::get(name);
    if (!region || region->empty()) continue;
    return std::string(partition_of_region(*region).name);
  }
  return "aws";
}

}  // namespace

std::string_view action_of(std::string_view method, std::string_view query, bool object) {
  if (!object) return method == "PUT" ? "s3:CreateBucket" : "s3:ListBucket";
  if (method == "GET" && has(query, "uploadId")) return "s3:ListMultipartUploadParts";
  if (method == "GET" || method == "HEAD") return "s3:GetObject";
  if (method == "DELETE")
    return has(query, "uploadId") ? "s3:AbortMultipartUpload" : "s3:DeleteObject";
  return "s3:PutObject";  // PUT (whole or a part), POST (start or complete a multipart upload)
}

const std::vector<std::string_view>& actions_for(Operation op) {
  static const std::vector<std::string_view> none;
  for (const auto& row : table())
    if (row.op == op) return row.actions;
  return none;
}

Operation parse_operation(std::string_view name) {
  for (const auto& row : table())
    if (row.name == name) return row.op;
  std::string names;
  for (const auto& row : table()) names += (names.empty() ? "" : ", ") + std::string(row.name);
  throw Error(Errc::invalid_argument,
              "unknown operation '" + std::string(name) + "': use " + names + ", or kms:KEY-ARN");
}

std::string_view operation_name(Operation op) {
  for (const auto& row : table())
    if (row.op == op) return row.name;
  return "any";
}

std::string policy_json(const std::vector<std::string>& places,
                        const std::vector<std::string>& operations) {
  if (places.empty())
    throw Error(Errc::invalid_argument, "a policy needs a place: give s3://BUCKET/PREFIX");
  std::set<std::string_view> object_actions, kms_actions;
  std::vector<std::string> kms_keys;
  bool lists = false;
  for (const auto& name : operations) {
    if (name.rfind("kms:", 0) == 0) {
      kms_keys.push_back(name.substr(4));
      continue;
    }
    const auto op = parse_operation(name);
    for (const auto& row : table())
      if (row.op == op) kms_actions.insert(row.kms.begin(), row.kms.end());
    for (const auto action : actions_for(op)) {
      if (action == "s3:ListBucket")
        lists = true;
      else
        object_actions.insert(action);
    }
  }
  // A policy names keys by ARN: arn:PARTITION:kms:REGION:ACCOUNT:key/ID or alias/NAME.
  for (const auto& key : kms_keys) {
    if (!parse_kms_key(key).arn)
      throw Error(
          Errc::invalid_argument,
          "'" + key +
              "' is not a KMS key ARN: a policy names its key by ARN "
              "(arn:aws:kms:REGION:ACCOUNT:key/ID or arn:aws:kms:REGION:ACCOUNT:alias/NAME)");
  }
  if (object_actions.empty())
    throw Error(Errc::invalid_argument,
                "a policy needs operations: give some of pack, unpack, cp, sync, checkpoint");
  const std::string partition = arn_partition();
  // What each place grants, and no more: the object its key names (an archive, a file), and the
  // folder of that name (a tree, checkpoints, a sync): s3://b/a grants b/a and b/a/*, never
  // b/ab. A key ending in '/' is a folder alone. Listings of each bucket are limited to the
  // folders. IAM reads '*', '?' and "${...}" in a resource or a condition as patterns and
  // variables, so a key holding them would grant more than itself: refused.
  std::set<std::string> objects;
  std::map<std::string, std::set<std::string>> prefixes_by_bucket;
  for (const auto& place : places) {
    const auto url = parse_s3_url(place);
    if (url.key.find_first_of("*?$") != std::string::npos)
      throw Error(Errc::invalid_argument,
                  "'" + printable(place) +
                      "': a policy's place may not hold '*', '?' or '$', which IAM reads as "
                      "patterns and variables: it would grant more than that place");
    const bool folder_only = url.key.empty() || url.key.ends_with('/');
    const std::string folder = folder_only ? url.key : url.key + "/";
    const std::string bucket_arn = "arn:" + partition + ":s3:::" + url.bucket;
    if (!folder_only) objects.insert(bucket_arn + "/" + url.key);
    objects.insert(bucket_arn + "/" + folder + "*");
    prefixes_by_bucket[url.bucket].insert(folder + "*");
  }
  using Json = nlohmann::ordered_json;  // in IAM's order: Version first, Sid, Effect, ...
  Json statements = Json::array();
  statements.push_back({{"Sid", "NuboObjects"},
                        {"Effect", "Allow"},
                        {"Action", object_actions},
                        {"Resource", objects}});
  if (lists) {
    for (const auto& [bucket, prefixes] : prefixes_by_bucket)
      statements.push_back({{"Sid", "NuboList" + std::to_string(statements.size())},
                            {"Effect", "Allow"},
                            {"Action", {"s3:ListBucket"}},
                            {"Resource", {"arn:" + partition + ":s3:::" + bucket}},
                            {"Condition", {{"StringLike", {{"s3:prefix", prefixes}}}}}});
  }
  if (!kms_keys.empty()) {
    const std::set<std::string> keys(kms_keys.begin(), kms_keys.end());
    statements.push_back(
        {{"Sid", "NuboKms"}, {"Effect", "Allow"}, {"Action", kms_actions}, {"Resource", keys}});
  }
  const Json policy = {{"Version", "2012-10-17"}, {"Statement", statements}};
  return policy.dump(2) + "\n";
}

}  // namespace nubo::s3

namespace nubo::transfer {

std::string access_policy(const std::vector<std::string>& places,
                          const std::vector<std::string>& operations) {
  return s3::policy_json(places, operations);
}

}  // namespace nubo::transfer
