#include "transfer/store/s3/etag.hpp"

#include <algorithm>
#include <charconv>

#include "common/text.hpp"

namespace nubo::s3 {

std::optional<EtagMd5> parse_etag_md5(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  const auto dash = etag.find('-');
  EtagMd5 out;
  out.md5 = text::lower(etag.substr(0, dash));
  if (out.md5.size() != 2 * sizeof(Md5) ||
      out.md5.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  if (dash == std::string_view::npos) return out;
  const auto count = etag.substr(dash + 1);
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), out.parts);
  if (ec != std::errc() || end != count.data() + count.size() || out.parts < 1 || out.parts > 10000)
    return std::nullopt;
  return out;
}

std::optional<Md5> md5_of_etag(std::string_view etag) {
  const auto e = parse_etag_md5(etag);
  Md5 d{};
  if (!e || e->parts != 0 || text::unhex(e->md5, d.data(), d.size()) != std::string::npos)
    return std::nullopt;
  return d;
}

std::string multipart_etag(const std::vector<Md5>& part_md5s) {
  std::vector<unsigned char> all;
  all.reserve(part_md5s.size() * sizeof(Md5));
  for (const auto& d : part_md5s) all.insert(all.end(), d.begin(), d.end());
  const auto whole = md5_of({reinterpret_cast<const std::byte*>(all.data()), all.size()});
  return md5_hex(whole) + "-" + std::to_string(part_md5s.size());
}

bool etag_is_not_content_md5(std::string_view server_side_encryption, bool customer_key) {
  return customer_key || server_side_encryption == "aws:kms" ||
         server_side_encryption == "aws:kms:dsse";
}

}  // namespace nubo::s3
