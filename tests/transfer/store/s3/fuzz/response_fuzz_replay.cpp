// The S3 response fuzz target as a plain test (tests/support/fuzz_replay.hpp): well-formed
// answers of each kind as seeds, each after the byte that selects its parser, and S3's tags,
// entities and numbers as pieces to splice in.
#include <string>
#include <vector>

#include "fuzz_replay.hpp"

namespace {

// Well-formed answers, each after the byte that selects its parser.
std::vector<std::string> seeds() {
  std::string list =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>b</Name>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>";
  for (int i = 0; i < 5; ++i)
    list += "<Contents><Key>dir/file" + std::to_string(i) + "&lt;x&gt;</Key><Size>" +
            std::to_string(i * 1000) + "</Size><ETag>\"abc\"</ETag></Contents>";
  list += "</ListBucketResult>";
  std::string parts =
      "<ListPartsResult><IsTruncated>false</IsTruncated><NextPartNumberMarker>3"
      "</NextPartNumberMarker>";
  for (int i = 1; i <= 3; ++i)
    parts += "<Part><PartNumber>" + std::to_string(i) +
             "</PartNumber><Size>8388608</Size><ETag>&quot;0123456789abcdef&quot;</ETag></Part>";
  parts += "</ListPartsResult>";
  return {std::string(1, '\0') + list, std::string(1, '\1') + parts,
          std::string(1, '\2') +
              "<InitiateMultipartUploadResult><UploadId>u-1</UploadId>"
              "</InitiateMultipartUploadResult>",
          std::string(1, '\3') + "<Error><Code>SlowDown</Code><Message>Reduce</Message></Error>"};
}

}  // namespace

int main(int argc, char** argv) {
  // The first byte picks the parser: mutations keep it.
  return nubo_test::replay_main(
      argc, argv, "response_fuzz_replay", seeds(),
      {.mutations = 1500,
       .seed = 2026,
       .keep = 1,
       .pieces = {"<Contents>", "</Contents>", "<Key>", "</Key>", "<Size>", "</Size>", "<Part>",
                  "</Part>", "<PartNumber>", "&", "&amp;", "</ListBucketResult>",
                  "99999999999999999999", "-1", "0"}});
}
