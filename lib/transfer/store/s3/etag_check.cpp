#include "transfer/store/s3/etag_check.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "common/text.hpp"
#include "nubo/error.hpp"
#include "transfer/store/s3/etag.hpp"

namespace nubo::s3 {

namespace {

using Result = EtagVerdict::Result;

EtagVerdict verdict(Result r, std::string detail) {
  return {r, std::move(detail)};
}

// The MD5 of bytes [offset, offset + size) of `file`.
Md5 md5_of_range(const transfer::Fd& file, std::uint64_t offset, std::uint64_t size,
                 std::vector<unsigned char>& buffer) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr) != 1)
    throw Error(Errc::unavailable, "MD5 is not available from libcrypto");
  for (std::uint64_t done = 0; done < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - done));
    file.pread_exact(transfer::MutableBytes(reinterpret_cast<std::byte*>(buffer.data()), n),
                     offset + done, "downloaded bytes");
    EVP_DigestUpdate(ctx.get(), buffer.data(), n);
    done += n;
  }
  Md5 d{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), d.data(), &len);
  return d;
}

// The sizes of the object's `count` parts: uniform as every common client makes them (all but
// the last the size of the first), else asked part by part.
std::optional<std::vector<std::uint64_t>> part_sizes(store::Store& store, const ObjectUrl& url,
                                                     std::uint64_t size, int count,
                                                     std::string& why_not) {
  const auto first = store.head_part(url, 1);
  if (!first) {
    why_not = "the object disappeared while it was checked";
    return std::nullopt;
  }
  if (first->parts != 0 && first->parts != count) {
    why_not = "the server reports " + std::to_string(first->parts) + " parts, its ETag " +
              std::to_string(count);
    return std::nullopt;
  }
  const auto p = first->size;
  if (p == 0 || (count > 1 && p >= size)) {
    why_not = "the server does not report the object's part sizes";
    return std::nullopt;
  }
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(count), p);
  const auto before_last = p * static_cast<std::uint64_t>(count - 1);
  if (before_last < size && size - before_last <= p) {
    sizes.back() = size - before_last;
    return sizes;
  }
  std::uint64_t total = p;
  for (int k = 2; k <= count; ++k) {
    const auto part = store.head_part(url, k);
    if (!part) {
      why_not = "the object disappeared while it was checked";
      return std::nullopt;
    }
    sizes[static_cast<std::size_t>(k - 1)] = part->size;
    total += part->size;
  }
  if (total != size) {
    why_not = "its parts' sizes add up to " + std::to_string(total) + " bytes, not " +
              std::to_string(size);
    return std::nullopt;
  }
  return sizes;
}

}  // namespace

EtagVerdict check_etag(store::Store& store, const ObjectUrl& url, const ObjectInfo& info,
                       const transfer::Fd& file) {
  if (etag_is_not_content_md5(info.server_side_encryption, info.customer_key))
    return verdict(Result::not_checkable, "its ETag is not an MD5 under SSE-KMS or SSE-C");
  const auto etag = parse_etag_md5(info.etag);
  if (!etag)
    return verdict(Result::not_checkable,
                   "its ETag '" + info.etag.substr(0, 80) +
                       "' is not an MD5, nor one of parts with a count from 1 to 10,000");
  std::vector<unsigned char> buffer(1 << 20);
  if (etag->parts == 0) {
    const auto got = md5_hex(md5_of_range(file, 0, info.size, buffer));
    return got == etag->md5 ? verdict(Result::matched, {}) : verdict(Result::mismatched, got);
  }
  std::string why_not;
  const auto sizes = part_sizes(store, url, info.size, etag->parts, why_not);
  if (!sizes) return verdict(Result::not_checkable, why_not);
  std::vector<Md5> digests;
  std::uint64_t offset = 0;
  for (const auto n : *sizes) {
    digests.push_back(md5_of_range(file, offset, n, buffer));
    offset += n;
  }
  const auto got = multipart_etag(digests);
  return got == etag->md5 + "-" + std::to_string(etag->parts) ? verdict(Result::matched, {})
                                                              : verdict(Result::mismatched, got);
}

}  // namespace nubo::s3
