// The S3 response parsers under attack: arbitrary bytes as a server's answer to ListObjectsV2,
// ListParts, CreateMultipartUpload or an error. Each must parse or throw nubo::Error; never
// crash, hang or allocate without bound. The first byte picks the parser. Built as a libFuzzer
// target by the `fuzz` preset, and replayed over generated answers as a regular test
// (response_fuzz_replay.cpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nubo/error.hpp"
#include "transfer/store/s3/responses.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace s3 = nubo::s3;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        s3::parse_list_objects(body, "fuzz");
        break;
      case 1:
        s3::parse_list_parts(body, "fuzz");
        break;
      case 2:
        s3::parse_upload_id(body, "fuzz");
        break;
      default:
        s3::xml_values(body, "Code", 1);
        s3::xml_values(body, "Message", 1);
    }
  } catch (const nubo::Error&) {
  }
  return 0;
}
