// The permissions table (s3/permissions.hpp): which action each request needs, that every
// operation's row is what the client can search, that the operations which use others' stores
// grant their actions, and the printed policy's shape and refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "nubo/error.hpp"
#include "transfer/store/s3/client.hpp"
#include "transfer/store/s3/permissions.hpp"

namespace s3 = nubo::s3;
using nubo::store::Operation;

namespace {

bool grants(Operation op, std::string_view action) {
  const auto& row = s3::actions_for(op);
  return std::binary_search(row.begin(), row.end(), action);
}

}  // namespace

TEST_CASE("each request needs the action AWS documents for it") {
  CHECK(s3::action_of("GET", "", true) == "s3:GetObject");
  CHECK(s3::action_of("HEAD", "partNumber=2", true) == "s3:GetObject");
  CHECK(s3::action_of("GET", "uploadId=abc", true) == "s3:ListMultipartUploadParts");
  CHECK(s3::action_of("GET", "list-type=2&prefix=a%2F", false) == "s3:ListBucket");
  CHECK(s3::action_of("PUT", "", true) == "s3:PutObject");
  CHECK(s3::action_of("PUT", "partNumber=1&uploadId=abc", true) == "s3:PutObject");
  CHECK(s3::action_of("POST", "uploads=", true) == "s3:PutObject");
  CHECK(s3::action_of("POST", "uploadId=abc", true) == "s3:PutObject");
  CHECK(s3::action_of("DELETE", "uploadId=abc", true) == "s3:AbortMultipartUpload");
  CHECK(s3::action_of("DELETE", "", true) == "s3:DeleteObject");
  CHECK(s3::action_of("PUT", "", false) == "s3:CreateBucket");
  // A parameter that only starts like uploadId is another.
  CHECK(s3::action_of("DELETE", "uploadIdentity=x", true) == "s3:DeleteObject");
}

TEST_CASE("the table's rows are sorted, and an operation grants what the stores it uses need") {
  for (const auto op : {Operation::pack, Operation::unpack, Operation::cp, Operation::checkpoint}) {
    const auto& row = s3::actions_for(op);
    CAPTURE(s3::operation_name(op));
    CHECK(!row.empty());
    CHECK(std::is_sorted(row.begin(), row.end()));
    CHECK(std::adjacent_find(row.begin(), row.end()) == row.end());
    CHECK(s3::parse_operation(s3::operation_name(op)) == op);
  }
  CHECK(s3::actions_for(Operation::any).empty());
  // Checkpoints are packed (pack's store) and read back (unpack's): their policy covers both.
  for (const auto op : {Operation::pack, Operation::unpack})
    for (const auto action : s3::actions_for(op)) {
      CAPTURE(action);
      CHECK(grants(Operation::checkpoint, action));
    }
  CHECK_FALSE(grants(Operation::unpack, "s3:PutObject"));
  CHECK_FALSE(grants(Operation::cp, "s3:DeleteObject"));
}

TEST_CASE("a policy names the prefix's objects, the bucket's listing and the KMS keys") {
  ::unsetenv("AWS_REGION");
  ::unsetenv("AWS_DEFAULT_REGION");
  const auto arn = std::string("arn:aws:kms:eu-west-1:123456789012:alias/backups");
  const auto p = nlohmann::json::parse(
      s3::policy_json({"s3://aaa/x/", "s3://aaa/y/", "s3://bbb/"}, {"unpack", "cp", "kms:" + arn}));
  CHECK(p["Version"] == "2012-10-17");
  const auto& st = p["Statement"];
  REQUIRE(st.size() == 4);  // objects, the listings of aaa and of bbb, KMS
  CHECK(st[0]["Resource"] ==
        nlohmann::json({"arn:aws:s3:::aaa/x/*", "arn:aws:s3:::aaa/y/*", "arn:aws:s3:::bbb/*"}));
  CHECK(st[0]["Action"] == nlohmann::json({"s3:AbortMultipartUpload", "s3:GetObject",
                                           "s3:ListMultipartUploadParts", "s3:PutObject"}));
  CHECK(st[1]["Resource"] == nlohmann::json({"arn:aws:s3:::aaa"}));
  CHECK(st[1]["Condition"]["StringLike"]["s3:prefix"] == nlohmann::json({"x/*", "y/*"}));
  CHECK(st[2]["Condition"]["StringLike"]["s3:prefix"] == nlohmann::json({"*"}));
  CHECK(st[3]["Resource"] == nlohmann::json({arn}));
  CHECK(st[3]["Action"] == nlohmann::json({"kms:Decrypt", "kms:GenerateDataKey"}));
  // Reading alone unwraps keys and makes none.
  CHECK(nlohmann::json::parse(
            s3::policy_json({"s3://aaa/x/"}, {"unpack", "kms:" + arn}))["Statement"][1]["Action"] ==
        nlohmann::json({"kms:Decrypt"}));
  // Only reading: no listing statement.
  CHECK(nlohmann::json::parse(s3::policy_json({"s3://aaa/x/"}, {"unpack"}))["Statement"].size() ==
        1);
  ::setenv("AWS_REGION", "us-gov-west-1", 1);
  CHECK(s3::policy_json({"s3://aaa/x"}, {"unpack"}).find("arn:aws-us-gov:s3:::aaa/x/*") !=
        std::string::npos);
  ::unsetenv("AWS_REGION");
}

TEST_CASE("a place grants itself and its folder, never a name that only starts like it") {
  ::unsetenv("AWS_REGION");
  ::unsetenv("AWS_DEFAULT_REGION");
  // s3://my-bucket/a once granted my-bucket/a* and s3:prefix a*: ab/ and a-secrets/ too.
  const auto p = nlohmann::json::parse(s3::policy_json({"s3://my-bucket/a"}, {"cp"}));
  const auto& st = p["Statement"];
  CHECK(st[0]["Resource"] ==
        nlohmann::json({"arn:aws:s3:::my-bucket/a", "arn:aws:s3:::my-bucket/a/*"}));
  CHECK(st[1]["Condition"]["StringLike"]["s3:prefix"] == nlohmann::json({"a/*"}));
  // A folder is itself alone.
  const auto f = nlohmann::json::parse(s3::policy_json({"s3://my-bucket/a/"}, {"cp"}));
  CHECK(f["Statement"][0]["Resource"] == nlohmann::json({"arn:aws:s3:::my-bucket/a/*"}));
}

TEST_CASE("a place holding IAM's patterns or variables is refused, as a wildcard KMS key is") {
  using Catch::Contains;
  for (const char* place :
       {"s3://my-bucket/*/", "s3://my-bucket/a?/", "s3://my-bucket/${aws:username}/"})
    CHECK_THROWS_WITH(s3::policy_json({place}, {"cp"}), Contains("may not hold '*', '?' or '$'"));
  for (const char* key :
       {"kms:arn:aws:kms:*:123456789012:key/abc", "kms:arn:*:kms:us-east-1:123456789012:key/abc",
        "kms:arn:aws:kms:us-east-1:123456789012:key/*",
        "kms:arn:aws:kms:us-east-1:123456789012:alias/${aws:username}"})
    CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {"cp", key}),
                      Contains("not a KMS key") && Contains("wildcards and variables"));
}

TEST_CASE("a policy refuses what it cannot grant, naming it") {
  using Catch::Contains;
  CHECK_THROWS_WITH(s3::policy_json({}, {"cp"}), Contains("needs a place"));
  CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {}), Contains("needs operations"));
  CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {"rm"}), Contains("unknown operation 'rm'"));
  CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {"cp", "kms:alias/x"}),
                    Contains("'alias/x' is not a KMS key ARN"));
  CHECK_THROWS_WITH(s3::policy_json({"/local/dir"}, {"cp"}), Contains("/local/dir"));
  CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {"kms:arn:aws:kms:us-east-1:1234:key/x"}),
                    Contains("not a KMS key") && Contains("account is not 12 digits"));
  CHECK_THROWS_WITH(s3::policy_json({"s3://aaa/"}, {"cp", "kms:arn:aws:s3:::bucket"}),
                    Contains("the ARN is of service 's3'"));
}

TEST_CASE("the client refuses a request outside its operation's row before sending it") {
  s3::Config config;
  config.credentials.access_key_id = "AKIDEXAMPLE";
  config.credentials.secret_access_key = "secret";
  config.endpoint = "http://127.0.0.1:9";  // the discard port: nothing may be sent there
  config.path_style = true;
  nubo::store::Options options;
  options.operation = Operation::unpack;
  s3::Client reader(config, options);
  const auto url = s3::parse_s3_url("s3://bucket/archive.nubo");
  try {
    reader.delete_object(url);
    FAIL("a DELETE went out for unpack");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::internal);
    CHECK_THAT(e.what(), Catch::Contains("needs s3:DeleteObject, which the policy of unpack"));
  }
  // What the row grants goes out (and here fails to connect: no server).
  options.retries = 0;
  s3::Client quick(config, options);
  try {
    quick.get_range(url, 0, 1);
    FAIL("no server answered, yet the GET succeeded");
  } catch (const nubo::Error& e) {
    CHECK(e.code() == nubo::Errc::unavailable);
  }
}
