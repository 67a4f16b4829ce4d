// What an S3 server answers, parsed: pure functions of the response body, so that each is
// tested on its own and fuzzed (tests/transfer/store/s3/fuzz). Every one bounds what it keeps and
// answers a body that is not what S3 sends with Error(corrupt) naming `what` (the request), never a
// crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transfer/store/store.hpp"

namespace nubo::s3 {

using store::Part;

// The text of every <tag>...</tag> in `xml`, entities decoded; at most `limit` of them.
std::vector<std::string> xml_values(std::string_view xml, std::string_view tag,
                                    std::size_t limit = 100000);
// An ETag without its surrounding quotes.
std::string unquote(std::string s);

// A page of ListObjectsV2: keys and sizes, and the token of the next page (none: the last).
// A listing cut short or not XML at all is refused: it would read as "no objects".
struct ObjectsPage {
  std::vector<std::pair<std::string, std::uint64_t>> objects;
  std::optional<std::string> next;
};
ObjectsPage parse_list_objects(std::string_view body, const std::string& what);

// A page of ListParts, and the marker of the next page (none: the last).
struct PartsPage {
  std::vector<Part> parts;
  std::optional<std::string> next;
};
PartsPage parse_list_parts(std::string_view body, const std::string& what);

// CreateMultipartUpload's UploadId.
std::string parse_upload_id(std::string_view body, const std::string& what);

}  // namespace nubo::s3
