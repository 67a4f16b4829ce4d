// The S3 response parsers on their own: well-formed answers, pagination, entities, and answers
// no S3 server sends (cut short, not XML, numbers that are not numbers), each refused by name.
#include <catch2/catch.hpp>

#include "nubo/error.hpp"
#include "transfer/store/s3/responses.hpp"

namespace s3 = nubo::s3;

TEST_CASE("a ListObjectsV2 page: keys, sizes, entities and the next page", "[s3]") {
  auto page = s3::parse_list_objects(
      "<ListBucketResult><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>t&amp;2</NextContinuationToken>"
      "<Contents><Key>a&lt;b&gt;.txt</Key><Size>12</Size></Contents>"
      "<Contents><Key>dir/c</Key><Size>0</Size></Contents></ListBucketResult>",
      "list");
  REQUIRE(page.objects.size() == 2);
  CHECK(page.objects[0] == std::pair<std::string, std::uint64_t>{"a<b>.txt", 12});
  CHECK(page.next == "t&2");
  auto last = s3::parse_list_objects(
      "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", "list");
  CHECK(last.objects.empty());
  CHECK_FALSE(last.next);
}

TEST_CASE("answers no S3 server sends are refused, naming the request", "[s3]") {
  CHECK_THROWS_WITH(s3::parse_list_objects("<ListBucketResult><Contents><Key>a</Key>", "GET x"),
                    Catch::Contains("GET x") && Catch::Contains("not a whole ListBucketResult"));
  CHECK_THROWS_WITH(s3::parse_list_objects("not xml", "GET x"),
                    Catch::Contains("not a whole ListBucketResult"));
  CHECK_THROWS_WITH(
      s3::parse_list_objects(
          "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>",
          "GET x"),
      Catch::Contains("a Size '-1' is not a number"));
  CHECK_THROWS_WITH(s3::parse_list_objects("<ListBucketResult><Contents><Key>a</Key><Size>"
                                           "99999999999999999999</Size></Contents>"
                                           "</ListBucketResult>",
                                           "GET x"),
                    Catch::Contains("is not a number"));
  CHECK_THROWS_WITH(
      s3::parse_list_parts(
          "<Part><PartNumber>10001</PartNumber><Size>1</Size><ETag>e</ETag></Part>", "ListParts"),
      Catch::Contains("outside S3's 1..10000"));
  CHECK_THROWS_WITH(s3::parse_upload_id("<UploadId></UploadId>", "POST"),
                    Catch::Contains("no UploadId"));
  auto parts = s3::parse_list_parts(
      "<Part><PartNumber>2</PartNumber><Size>5</Size><ETag>\"ab\"</ETag></Part>"
      "<IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>",
      "ListParts");
  REQUIRE(parts.parts.size() == 1);
  CHECK(parts.parts[0].etag == "ab");
  CHECK(parts.next == "2");
}

TEST_CASE("numeric character references are decoded, as Go's XML encoder writes them", "[s3]") {
  // rclone serve s3 and MinIO quote an ETag as &#34;: the part must still match its MD5.
  auto parts = s3::parse_list_parts(
      "<Part><PartNumber>1</PartNumber><Size>5</Size><ETag>&#34;0eca9e63&#34;</ETag></Part>",
      "ListParts");
  REQUIRE(parts.parts.size() == 1);
  CHECK(parts.parts[0].etag == "0eca9e63");
  auto page = s3::parse_list_objects(
      "<ListBucketResult><Contents><Key>caf&#xE9;/&#x1F600;&#39;s &#38;</Key><Size>1</Size>"
      "</Contents></ListBucketResult>",
      "list");
  REQUIRE(page.objects.size() == 1);
  CHECK(page.objects[0].first == "caf\xC3\xA9/\xF0\x9F\x98\x80's &");
  // Not a reference (no digits, no ';', out of Unicode's range, a surrogate, zero): kept as is.
  for (const std::string text :
       {"&#;", "&#12", "&#x110000;", "&#xD800;", "&#0;", "&#x;", "&#1234567890123;", "a & b"}) {
    auto kept = s3::parse_list_objects("<ListBucketResult><Contents><Key>" + text +
                                           "</Key><Size>1</Size></Contents>"
                                           "</ListBucketResult>",
                                       "list");
    REQUIRE(kept.objects.size() == 1);
    CHECK(kept.objects[0].first == text);
  }
}
