// The S3 response fuzz target as a plain test, for builds without libFuzzer (g++, `make test`):
// it runs the target over well-formed answers of each kind and over thousands of seeded
// mutations of them (flipped bytes, truncations, spliced garbage and tags, repeated elements,
// huge numbers), plus any files given on the command line (e.g. crashes found by the fuzzer).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

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
  std::size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream f(argv[i], std::ios::binary);
    run({std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()});
    ++runs;
  }
  const auto base = seeds();
  if (const char* corpus = std::getenv("NUBO_FUZZ_WRITE_SEEDS")) {
    for (std::size_t i = 0; i < base.size(); ++i)
      std::ofstream(std::string(corpus) + "/seed" + std::to_string(i), std::ios::binary) << base[i];
  }
  static const char* kPieces[] = {"<Contents>",
                                  "</Contents>",
                                  "<Key>",
                                  "</Key>",
                                  "<Size>",
                                  "</Size>",
                                  "<Part>",
                                  "</Part>",
                                  "<PartNumber>",
                                  "&",
                                  "&amp;",
                                  "</ListBucketResult>",
                                  "99999999999999999999",
                                  "-1",
                                  "0"};
  std::mt19937_64 rng(2026);
  for (const auto& seed : base) {
    run(seed);
    ++runs;
    for (int m = 0; m < 1500; ++m) {
      auto s = seed;
      switch (rng() % 5) {
        case 0:  // flipped bytes (the selector byte kept)
          for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
            s[1 + rng() % (s.size() - 1)] ^= static_cast<char>(1 + rng() % 255);
          break;
        case 1:  // truncated
          s.resize(1 + rng() % (s.size() - 1));
          break;
        case 2: {  // garbage spliced in
          std::string junk(1 + rng() % 32, '\0');
          for (auto& c : junk) c = static_cast<char>(rng());
          s.insert(1 + rng() % (s.size() - 1), junk);
          break;
        }
        case 3:  // a tag, an entity or a number spliced in
          s.insert(1 + rng() % (s.size() - 1), kPieces[rng() % std::size(kPieces)]);
          break;
        default:  // the body repeated
          s += s.substr(1);
      }
      run(s);
      ++runs;
    }
  }
  std::cout << "response_fuzz_replay: " << runs << " inputs, no crash\n";
  return 0;
}
