// The AWS CLI's configuration: the environment, profiles in the credentials and config files,
// endpoints and addressing, and bad files named with their line.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "../../helpers.hpp"
#include "error_of.hpp"
#include "nubo/error.hpp"
#include "nubo/s3.hpp"
#include "scoped_env.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/store/gcs/gcs.hpp"
#include "transfer/store/s3/aws_names.hpp"
#include "transfer/store/s3/client.hpp"
#include "transfer/store/s3/config.hpp"
#include "transfer/store/s3/kms.hpp"

namespace s3 = nubo::s3;
using nubo_test::ScopedEnv;
using nubo_test::TempDir;

namespace {

// A clean environment with HOME in `t` and no AWS variable set.
struct CleanAws {
  explicit CleanAws(const TempDir& t) : home("HOME", t.path().c_str()) {}
  ScopedEnv home;
  ScopedEnv vars[14] = {{"AWS_ACCESS_KEY_ID", nullptr},   {"AWS_SECRET_ACCESS_KEY", nullptr},
                        {"AWS_SESSION_TOKEN", nullptr},   {"AWS_REGION", nullptr},
                        {"AWS_DEFAULT_REGION", nullptr},  {"AWS_ENDPOINT_URL", nullptr},
                        {"AWS_ENDPOINT_URL_S3", nullptr}, {"AWS_PROFILE", nullptr},
                        {"AWS_CONFIG_FILE", nullptr},     {"AWS_SHARED_CREDENTIALS_FILE", nullptr},
                        {"AWS_CA_BUNDLE", nullptr},       {"AWS_MAX_ATTEMPTS", nullptr},
                        {"NUBO_S3_TIMEOUT", nullptr},     {"AWS_ENDPOINT_URL_KMS", nullptr}};
};

}  // namespace

TEST_CASE("credentials and region come from the environment first", "[s3]") {
  TempDir t;
  CleanAws clean(t);
  nubo_test::write_file(
      t / ".aws/credentials",
      "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n");
  ScopedEnv key("AWS_ACCESS_KEY_ID", "ENVKEY"), secret("AWS_SECRET_ACCESS_KEY", "ENVSECRET"),
      region("AWS_DEFAULT_REGION", "eu-west-1");
  auto c = s3::load_config();
  CHECK(c.credentials.access_key_id == "ENVKEY");
  CHECK(c.credentials.secret_access_key == "ENVSECRET");
  CHECK(c.region == "eu-west-1");
  CHECK(c.endpoint == "https://s3.eu-west-1.amazonaws.com");
  CHECK(!c.path_style);
  ScopedEnv newer("AWS_REGION", "ap-south-1");
  CHECK(s3::load_config().region == "ap-south-1");
}

TEST_CASE("profiles are read from the credentials and config files", "[s3]") {
  TempDir t;
  CleanAws clean(t);
  nubo_test::write_file(t / ".aws/credentials",
                        "# comment\n[default]\naws_access_key_id = DEFKEY\n"
                        "aws_secret_access_key = DEFSECRET\n\n[lab]\n"
                        "aws_access_key_id=LABKEY\naws_secret_access_key=LABSECRET\n"
                        "aws_session_token = LABTOKEN\n");
  nubo_test::write_file(t / ".aws/config",
                        "[default]\nregion = us-west-2\n[profile lab]\nregion = eu-central-1\n"
                        "endpoint_url = http://127.0.0.1:9000/\ns3 =\n"
                        "    addressing_style = virtual\n");
  auto d = s3::load_config();
  CHECK(d.profile == "default");
  CHECK(d.credentials.access_key_id == "DEFKEY");
  CHECK(d.region == "us-west-2");
  ScopedEnv profile("AWS_PROFILE", "lab");
  auto lab = s3::load_config();
  CHECK(lab.credentials.access_key_id == "LABKEY");
  CHECK(lab.credentials.session_token == "LABTOKEN");
  CHECK(lab.region == "eu-central-1");
  CHECK(lab.endpoint == "http://127.0.0.1:9000");
  CHECK(!lab.path_style);  // virtual, as the profile says
  CHECK_THROWS_WITH(s3::load_config("missing"), Catch::Contains("'missing'"));
}

TEST_CASE("a custom endpoint is path-style unless told otherwise", "[s3]") {
  TempDir t;
  CleanAws clean(t);
  ScopedEnv key("AWS_ACCESS_KEY_ID", "K"), secret("AWS_SECRET_ACCESS_KEY", "S"),
      endpoint("AWS_ENDPOINT_URL", "http://127.0.0.1:5000");
  auto c = s3::load_config();
  CHECK(c.path_style);
  CHECK(c.endpoint == "http://127.0.0.1:5000");
  ScopedEnv s3_only("AWS_ENDPOINT_URL_S3", "https://storage.example");
  CHECK(s3::load_config().endpoint == "https://storage.example");
}

TEST_CASE("missing credentials and bad files are clear errors", "[s3]") {
  TempDir t;
  CleanAws clean(t);
  try {
    s3::load_config();
    FAIL("no credentials accepted");
  } catch (const nubo::Error& e) {
    // Not retryable: a retry wrapper (exit 5 means "run it again") would loop forever.
    CHECK(e.code() == nubo::Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("AWS_ACCESS_KEY_ID"));
  }
  nubo_test::write_file(t / ".aws/credentials", "[default\naws_access_key_id = X\n");
  CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("credentials:1"));
  nubo_test::write_file(t / ".aws/credentials", "aws_access_key_id = X\n");
  CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("inside a [section]"));
  ScopedEnv key("AWS_ACCESS_KEY_ID", "K"), secret("AWS_SECRET_ACCESS_KEY", "S"),
      endpoint("AWS_ENDPOINT_URL", "ftp://x");
  nubo_test::write_file(t / ".aws/credentials", "");
  CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("http://"));
  // A device or a FIFO is refused at once, not read without end or waited on.
  {
    ScopedEnv zero("AWS_CONFIG_FILE", "/dev/zero");
    CHECK_THROWS_WITH(s3::load_config(),
                      Catch::Contains("AWS config file '/dev/zero' is a character device"));
  }
  REQUIRE(::mkfifo((t / "fifo").c_str(), 0600) == 0);
  const auto fifo_path = t / "fifo";
  ScopedEnv fifo("AWS_SHARED_CREDENTIALS_FILE", fifo_path.c_str());
  CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("AWS credentials file") &&
                                           Catch::Contains("is a FIFO, not a regular file"));
}

TEST_CASE("a malformed URL is named before credentials are looked for", "[s3]") {
  TempDir t;
  CleanAws clean(t);  // no credentials anywhere: the URL is still the first thing wrong
  nubo_test::write_file(t / "f", "x");
  for (const char* url : {"s3://", "s3:///key", "s3://Bad_Bucket/k"}) {
    INFO(url);
    CHECK_THROWS_WITH(s3::copy(t / "f", url), !Catch::Contains("credentials"));
    CHECK_THROWS_WITH(s3::copy(url, t / "g"), !Catch::Contains("credentials"));
  }
}

TEST_CASE("s3:// URLs are parsed and bad ones named", "[s3]") {
  auto u = s3::parse_s3_url("s3://my-bucket/a/b c.txt");
  CHECK(u.bucket == "my-bucket");
  CHECK(u.key == "a/b c.txt");
  CHECK(s3::parse_s3_url("s3://bucket").key.empty());
  CHECK(s3::is_s3_url("s3://x"));
  CHECK(!s3::is_s3_url("/s3://x"));
  CHECK_THROWS_WITH(s3::parse_s3_url("s3:///key"), Catch::Contains("names no bucket"));
  CHECK_THROWS_WITH(s3::parse_s3_url("s3://Bad_Bucket/k"), Catch::Contains("'Bad_Bucket'"));
  CHECK_THROWS_WITH(s3::parse_s3_url("http://b/k"), Catch::Contains("not an s3://"));
  CHECK_THROWS(s3::parse_s3_url("s3://bucket/" + std::string(1100, 'k')));
}

TEST_CASE("XML answers are read within bounds, entities decoded", "[s3]") {
  const std::string xml =
      "<R><Code>NoSuchKey</Code><Key>a &amp; b &lt;c&gt;</Key><Key>two</Key><Key>unclosed";
  CHECK(s3::xml_values(xml, "Code") == std::vector<std::string>{"NoSuchKey"});
  CHECK(s3::xml_values(xml, "Key") == std::vector<std::string>{"a & b <c>", "two"});
  CHECK(s3::xml_values(xml, "Key", 1).size() == 1);
  CHECK(s3::xml_values("", "Key").empty());
  CHECK(s3::md5_hex(s3::md5_of(nubo::transfer::as_bytes(std::string("")))) ==
        "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(s3::md5_base64(s3::md5_of(nubo::transfer::as_bytes(std::string("")))) ==
        "1B2M2Y8AsgTpgAmY7PhCfg==");
  CHECK(nubo::store::part_size_for(1) == 8u << 20);
  CHECK(nubo::store::part_size_for(100ull << 30) == 64u << 20);           // ~1600 parts
  CHECK(nubo::store::part_size_for(5ull << 40) >= (5ull << 40) / 10000);  // within 10,000 parts
}

TEST_CASE("ETags are read in S3's forms, and a multipart one made as S3 makes it", "[s3]") {
  auto e = s3::parse_etag_md5("\"D41D8CD98F00B204E9800998ECF8427E\"");
  REQUIRE(e);
  CHECK(e->md5 == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(e->parts == 0);
  e = s3::parse_etag_md5("0123456789abcdef0123456789abcdef-3");
  REQUIRE(e);
  CHECK(e->parts == 3);
  for (const char* bad :
       {"", "\"\"", "0123", "0123456789abcdef0123456789abcdeg",
        "0123456789abcdef0123456789abcdef-0", "0123456789abcdef0123456789abcdef-",
        "0123456789abcdef0123456789abcdef-10001", "0123456789abcdef0123456789abcdef-2x",
        "0123456789abcdef0123456789abcdef0"})
    CHECK_FALSE(s3::parse_etag_md5(bad));
  const auto part = [](const std::string& text) {
    return s3::md5_of(nubo::transfer::as_bytes(text));
  };
  // Python: md5(md5(b"hello,").digest() + md5(b" world").digest()).hexdigest() + "-2"
  CHECK(s3::multipart_etag({part("hello,"), part(" world")}) ==
        "1a4a892dc4d479cf29dd291268280d92-2");
  CHECK(s3::md5_of_etag("\"" + s3::md5_hex(part("x")) + "\"") == part("x"));
  CHECK_FALSE(s3::md5_of_etag("0123456789abcdef0123456789abcdef-2"));
  CHECK(s3::etag_is_not_content_md5("aws:kms", false));
  CHECK(s3::etag_is_not_content_md5("AES256", true));
  CHECK_FALSE(s3::etag_is_not_content_md5("AES256", false));
}

TEST_CASE("attempts and the stall timeout are read as the AWS CLI reads them, and checked",
          "[s3]") {
  TempDir t;
  CleanAws clean(t);
  nubo_test::write_file(t / ".aws/credentials",
                        "[default]\naws_access_key_id = K\naws_secret_access_key = S\n");
  nubo_test::write_file(t / ".aws/config", "[default]\nmax_attempts = 4\n");
  auto c = s3::load_config();
  CHECK(c.max_attempts == 4);
  CHECK(c.timeout_seconds == 0);
  {
    ScopedEnv attempts("AWS_MAX_ATTEMPTS", "2"), timeout("NUBO_S3_TIMEOUT", "2.5");
    c = s3::load_config();
    CHECK(c.max_attempts == 2);  // the environment wins
    CHECK(c.timeout_seconds == 2.5);
  }
  for (const char* bad : {"0", "2.5", "many", "101"}) {
    ScopedEnv attempts("AWS_MAX_ATTEMPTS", bad);
    INFO(bad);
    CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("AWS_MAX_ATTEMPTS"));
  }
  for (const char* bad : {"0", "-1", "soon", "4000"}) {
    ScopedEnv timeout("NUBO_S3_TIMEOUT", bad);
    INFO(bad);
    CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("NUBO_S3_TIMEOUT"));
  }
  nubo_test::write_file(t / ".aws/config", "[default]\nmax_attempts = lots\n");
  CHECK_THROWS_WITH(s3::load_config(), Catch::Contains("max_attempts in the profile 'default'"));
}

TEST_CASE("a malformed store URL is an error of its own, not an archive that differs", "[s3]") {
  nubo_test::TempDir t;
  nubo_test::write_file(t / "src/a.txt", "a");
  nubo::Errc code{};
  const auto what = nubo_test::error_of(
      [&] { nubo::transfer::archive_difference("s3://Bad_Bucket/x.nubo", {t / "src"}, {}); },
      &code);
  CHECK(code == nubo::Errc::invalid_argument);
  CHECK_THAT(what, Catch::Contains("'Bad_Bucket' is not a bucket name"));
}

TEST_CASE("GCS keys and endpoint are read as GCS documents them, and its bucket rules kept",
          "[s3]") {
  TempDir t;
  ScopedEnv home("HOME", t.path().c_str()), boto("BOTO_CONFIG", nullptr),
      id("GS_ACCESS_KEY_ID", nullptr), secret("GS_SECRET_ACCESS_KEY", nullptr),
      endpoint("NUBO_GS_ENDPOINT_URL", nullptr), timeout("NUBO_S3_TIMEOUT", nullptr);
  CHECK_THROWS_WITH(nubo::gcs::load_config(), Catch::Contains("no Google Cloud Storage HMAC key") &&
                                                  Catch::Contains(t / ".boto"));
  nubo_test::write_file(t / ".boto",
                        "[Credentials]\ngs_access_key_id = GOOGBOTO\n"
                        "gs_secret_access_key = bsecret\ngs_host = gcs.internal\n"
                        "gs_port = 8443\n");
  auto c = nubo::gcs::load_config();
  CHECK(c.credentials.access_key_id == "GOOGBOTO");
  CHECK(c.endpoint == "https://gcs.internal:8443");
  CHECK(c.region == "auto");
  CHECK(c.path_style);
  {
    ScopedEnv key("GS_ACCESS_KEY_ID", "GOOGENV"), sec("GS_SECRET_ACCESS_KEY", "esecret"),
        url("NUBO_GS_ENDPOINT_URL", "http://127.0.0.1:9000/");
    c = nubo::gcs::load_config();
    CHECK(c.credentials.access_key_id == "GOOGENV");  // the environment wins, as with AWS
    CHECK(c.endpoint == "http://127.0.0.1:9000");
  }
  nubo_test::write_file(t / ".boto",
                        "[Credentials]\ngs_access_key_id = K\n"
                        "gs_secret_access_key = S\ngs_port = 99999\n"
                        "gs_host = h\n");
  CHECK_THROWS_WITH(nubo::gcs::load_config(), Catch::Contains("gs_port"));
  nubo_test::write_file(t / ".boto",
                        "[Credentials]\ngs_access_key_id = K\n"
                        "gs_secret_access_key = S\n");
  CHECK(nubo::gcs::load_config().endpoint == "https://storage.googleapis.com");

  CHECK(nubo::gcs::parse_gs_url("gs://my_bucket.v2/a/b").bucket == "my_bucket.v2");
  CHECK(nubo::gcs::parse_gs_url("gs://my_bucket.v2/a/b").text() == "gs://my_bucket.v2/a/b");
  CHECK_THROWS_WITH(nubo::gcs::parse_gs_url("gs://Upper/k"), Catch::Contains("GCS accepts"));
  CHECK_THROWS_WITH(nubo::gcs::parse_gs_url("s3://b/k"), Catch::Contains("not a gs://"));
  CHECK_THROWS_WITH(nubo::gcs::parse_gs_url("gs://" + std::string(64, 'a') + "/k"),
                    Catch::Contains("not a bucket name"));
}

TEST_CASE("KMS is configured as S3 is, with its own endpoint, in the region of its key", "[s3]") {
  TempDir t;
  CleanAws clean(t);
  ScopedEnv key("AWS_ACCESS_KEY_ID", "K"), secret("AWS_SECRET_ACCESS_KEY", "S"),
      region("AWS_REGION", "eu-west-1");
  CHECK(s3::load_config("", s3::Service::kms).endpoint == "https://kms.eu-west-1.amazonaws.com");
  // KMS keys are regional: a client in the region asked for, at AWS's endpoint built from it.
  const auto kms = s3::open_kms(s3::load_config("", s3::Service::kms), "ap-south-1");
  CHECK(kms.config().region == "ap-south-1");
  CHECK(kms.config().endpoint == "https://kms.ap-south-1.amazonaws.com");
  CHECK(s3::open_kms(s3::load_config("", s3::Service::kms), "").config().region == "eu-west-1");
  CHECK(s3::open_kms(s3::load_config("", s3::Service::kms), "cn-north-1").config().endpoint ==
        "https://kms.cn-north-1.amazonaws.com.cn");
  // A region that is not a region never becomes part of a host name.
  for (const char* hostile :
       {"x@127.0.0.1/#", "us-east-1\r\nX-Evil: 1", "a.b", "evil:443", "a/b", "-x", "x-", "A"})
    CHECK_THROWS_WITH(s3::open_kms(s3::load_config("", s3::Service::kms), hostile),
                      Catch::Contains("is not an AWS region"));
  {
    ScopedEnv bad_region("AWS_REGION", "x@127.0.0.1/#");
    CHECK_THROWS_WITH(s3::load_config("", s3::Service::kms),
                      Catch::Contains("is not an AWS region"));
  }
  // An endpoint set for KMS (and not for S3) is KMS's alone.
  ScopedEnv endpoint("AWS_ENDPOINT_URL_KMS", "http://127.0.0.1:9");
  CHECK(s3::open_kms(s3::load_config("", s3::Service::kms), "ap-south-1").config().endpoint ==
        "http://127.0.0.1:9");
  CHECK(s3::load_config().endpoint == "https://s3.eu-west-1.amazonaws.com");
  ScopedEnv no_key("AWS_ACCESS_KEY_ID", nullptr), no_secret("AWS_SECRET_ACCESS_KEY", nullptr);
  CHECK_THROWS_WITH(s3::load_config("", s3::Service::kms), Catch::Contains("no KMS credentials"));
}

TEST_CASE("KMS keys are checked as AWS writes them, and bad ones named", "[s3]") {
  for (const char* good :
       {"1234abcd-12ab-34cd-56ef-1234567890ab", "mrk-1234abcd12ab34cd56ef1234567890ab",
        "alias/nubo-backups", "alias/team/app_1",
        "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "arn:aws-cn:kms:cn-north-1:123456789012:alias/x"})
    CHECK_NOTHROW(s3::parse_kms_key(good));
  using Catch::Contains;
  CHECK_THROWS_WITH(s3::parse_kms_key(""), Contains("it is empty"));
  CHECK_THROWS_WITH(s3::parse_kms_key("alias/"), Contains("an alias's name"));
  CHECK_THROWS_WITH(s3::parse_kms_key("key id"), Contains("letters, digits and '-'"));
  CHECK_THROWS_WITH(s3::parse_kms_key("arn:aws:kms:us-east-1:123456789012"),
                    Contains("six fields"));
  CHECK_THROWS_WITH(s3::parse_kms_key("arn:aws:iam::123456789012:role/x"),
                    Contains("service 'iam'"));
  CHECK_THROWS_WITH(s3::parse_kms_key("arn:aws:kms::123456789012:key/x"),
                    Contains("region is not an AWS region name"));
  CHECK_THROWS_WITH(s3::parse_kms_key("arn:aws:kms:us-east-1:123456789012:grant/x"),
                    Contains("neither key/ID nor alias/NAME"));
  CHECK_THROWS_WITH(s3::parse_kms_key(std::string(3000, 'a')), Contains("2048"));
  CHECK(s3::parse_kms_key("arn:aws:kms:eu-north-1:123456789012:key/x").region == "eu-north-1");
  CHECK_FALSE(s3::parse_kms_key("alias/x").arn);
  // A record's ARN steers where a reader's credentials go: every part of it is checked. The
  // userinfo, port, path and CRLF forms all once reached the wire.
  for (const char* hostile :
       {"arn:aws:kms:x@127.0.0.1/#:123456789012:key/abc",
        "arn:aws:kms:us-east-1.evil.example:123456789012:key/abc",
        "arn:aws:kms:127.0.0.1%3a443:123456789012:key/abc",
        "arn:aws:kms:us-east-1/x:123456789012:key/abc",
        "arn:aws:kms:us-east-1\r\nX-Evil: 1:123456789012:key/abc",
        "arn:aws:kms:cn-north-1:123456789012:key/abc",          // not in partition aws
        "arn:evil:kms:us-east-1:123456789012:key/abc",          // no such partition
        "arn:aws:kms:us-east-1:123456789012:key/abc/../../x"})  // not a key id
    CHECK_THROWS_WITH(s3::parse_kms_key_arn(hostile, "archive"),
                      Contains("archive: ") && Contains("is not a KMS key"));
  CHECK_THROWS_WITH(s3::parse_kms_key_arn("alias/x", "archive"), Contains("is not a KMS key ARN"));
}
