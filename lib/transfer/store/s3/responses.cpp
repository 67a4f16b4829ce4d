#include "transfer/store/s3/responses.hpp"

#include "nubo/error.hpp"

namespace nubo::s3 {

namespace {

// A numeric character reference at the start of `s` ("&#34;", "&#x22;"), appended to `out` as
// UTF-8; its length, or 0 when `s` does not start with a valid one. Go's encoder (rclone serve
// s3, MinIO) writes quotes so: an ETag arrives as "&#34;...&#34;".
std::size_t numeric_reference(std::string_view s, std::string& out) {
  const bool hex = s.size() > 3 && (s[2] == 'x' || s[2] == 'X');
  const std::size_t begin = hex ? 3 : 2;
  std::uint32_t code = 0;
  std::size_t i = begin;
  for (; i < s.size() && i < begin + 8 && s[i] != ';'; ++i) {
    const char c = s[i];
    const int digit = c >= '0' && c <= '9'          ? c - '0'
                      : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                    : -1;
    if (digit < 0) return 0;
    code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(digit);
  }
  if (i == begin || i >= s.size() || s[i] != ';' || code == 0 || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;
  }
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return i + 1;
}

std::string decode_entities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    if (s.substr(i, 2) == "&#") {
      if (const auto n = numeric_reference(s.substr(i), out)) {
        i += n - 1;
        continue;
      }
    }
    static const std::pair<std::string_view, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool known = false;
    for (const auto& [name, c] : kEntities) {
      if (s.substr(i, name.size()) == name) {
        out += c;
        i += name.size() - 1;
        known = true;
        break;
      }
    }
    if (!known) out += '&';
  }
  return out;
}

// The page's continuation: the value of `tag` when <IsTruncated> is true.
std::optional<std::string> next_page(std::string_view body, std::string_view tag) {
  const auto truncated = xml_values(body, "IsTruncated", 1);
  const auto next = xml_values(body, tag, 1);
  if (truncated.empty() || truncated[0] != "true" || next.empty() || next[0].empty())
    return std::nullopt;
  return next[0];
}

// A decimal number of S3's answer: all digits, in range; Error(corrupt) otherwise.
std::uint64_t number(const std::string& text, const std::string& what, const char* field) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(Errc::corrupt,
                what + ": " + field + " '" + text.substr(0, 40) + "' is not a number");
  return std::stoull(text);
}

}  // namespace

std::vector<std::string> xml_values(std::string_view xml, std::string_view tag, std::size_t limit) {
  std::vector<std::string> out;
  std::string open = "<", close = "</";  // built with += (GCC 12 misreads "<" + std::string)
  open += tag;
  open += '>';
  close += tag;
  close += '>';
  for (std::size_t at = 0; out.size() < limit;) {
    const auto a = xml.find(open, at);
    if (a == std::string_view::npos) break;
    const auto b = xml.find(close, a + open.size());
    if (b == std::string_view::npos) break;
    out.push_back(decode_entities(xml.substr(a + open.size(), b - a - open.size())));
    at = b + close.size();
  }
  return out;
}

std::string unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

ObjectsPage parse_list_objects(std::string_view body, const std::string& what) {
  const auto contents = xml_values(body, "Contents", 1000);
  std::size_t opened = 0;
  for (auto at = body.find("<Contents>"); at != std::string_view::npos && opened <= contents.size();
       at = body.find("<Contents>", at + 1))
    ++opened;
  if (body.find("<ListBucketResult") == std::string_view::npos ||
      body.find("</ListBucketResult>") == std::string_view::npos || opened != contents.size())
    throw Error(Errc::corrupt, what + ": the answer is not a whole ListBucketResult (" +
                                   std::to_string(body.size()) +
                                   " bytes of malformed XML): a broken endpoint?");
  ObjectsPage page;
  for (const auto& xml : contents) {
    auto keys = xml_values(xml, "Key", 1), sizes = xml_values(xml, "Size", 1);
    if (keys.empty() || sizes.empty())
      throw Error(Errc::corrupt, what + ": an entry without a Key or a Size");
    page.objects.emplace_back(keys[0], number(sizes[0], what, "a Size"));
  }
  page.next = next_page(body, "NextContinuationToken");
  return page;
}

PartsPage parse_list_parts(std::string_view body, const std::string& what) {
  PartsPage page;
  for (const auto& xml : xml_values(body, "Part", 10000)) {
    auto numbers = xml_values(xml, "PartNumber", 1), sizes = xml_values(xml, "Size", 1),
         etags = xml_values(xml, "ETag", 1), checksums = xml_values(xml, "ChecksumCRC32C", 1);
    if (numbers.empty() || sizes.empty() || etags.empty()) continue;
    const auto n = number(numbers[0], what, "a PartNumber");
    if (n < 1 || n > 10000)
      throw Error(Errc::corrupt,
                  what + ": part number " + std::to_string(n) + " is outside S3's 1..10000");
    page.parts.push_back({static_cast<int>(n), number(sizes[0], what, "a part's Size"),
                          unquote(etags[0]), checksums.empty() ? "" : checksums[0].substr(0, 16)});
  }
  page.next = next_page(body, "NextPartNumberMarker");
  return page;
}

std::string parse_upload_id(std::string_view body, const std::string& what) {
  auto ids = xml_values(body, "UploadId", 1);
  if (ids.empty() || ids[0].empty() || ids[0].size() > 1024)
    throw Error(Errc::corrupt, what + ": no UploadId in the answer");
  return ids[0];
}

}  // namespace nubo::s3
