// The IAM permissions nubo's operations need on a bucket, in one table: `nubo-xfer policy` prints
// a policy from it, and the S3 client checks every request it makes for an operation against the
// operation's row before sending it (one outside it is refused as a bug in nubo), so the printed
// policy and what nubo does cannot drift apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "transfer/store/store.hpp"

namespace nubo::s3 {

// The IAM action a request needs: "s3:GetObject" for a GET or HEAD of an object, "s3:ListBucket"
// for a listing, ... `query` is the request's query string; `object`: the URL names a key.
std::string_view action_of(std::string_view method, std::string_view query, bool object);

// The actions `op` issues, sorted; empty for Operation::any (no check).
const std::vector<std::string_view>& actions_for(store::Operation op);

// "pack", "unpack", "cp", "checkpoint"; Error(invalid_argument) naming the choices otherwise.
store::Operation parse_operation(std::string_view name);
std::string_view operation_name(store::Operation op);

// The IAM policy document (JSON) granting exactly what `operations` issue on `places`
// (s3://BUCKET/PREFIX URLs): object actions on arn:PARTITION:s3:::BUCKET/PREFIX*, s3:ListBucket
// on each bucket with an s3:prefix condition, and for each "kms:KEY-ARN" among the operations
// what they ask of KMS on that key: kms:Decrypt to read what is encrypted under it (--encrypt
// kms:KEY, and SSE-KMS objects), kms:GenerateDataKey to write.
// Error(invalid_argument) naming a URL that is not s3://, an unknown operation or a malformed
// key ARN.
std::string policy_json(const std::vector<std::string>& places,
                        const std::vector<std::string>& operations);

}  // namespace nubo::s3
