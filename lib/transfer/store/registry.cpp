// The stores nubo knows, by URL scheme: a new store is a folder and one row here.
#include "nubo/error.hpp"
#include "transfer/store/file/file_store.hpp"
#include "transfer/store/gcs/gcs.hpp"
#include "transfer/store/s3/client.hpp"
#include "transfer/store/store.hpp"

namespace nubo::store {
namespace {

struct Scheme {
  std::string_view name;
  ObjectUrl (*parse)(std::string_view text);
  std::unique_ptr<Store> (*open)(const Options& options);
};

constexpr Scheme kSchemes[] = {
    {"s3", s3::parse_s3_url, s3::open_store},
    {"gs", gcs::parse_gs_url, gcs::open_store},
    {"file", file_store::parse_file_url, file_store::open_store},
};

const Scheme* scheme_of(std::string_view text) {
  for (const auto& s : kSchemes)
    if (text.size() >= s.name.size() + 3 && text.substr(0, s.name.size()) == s.name &&
        text.substr(s.name.size(), 3) == "://")
      return &s;
  return nullptr;
}

}  // namespace

bool is_url(std::string_view text) {
  return scheme_of(text) != nullptr;
}

ObjectUrl parse_url(std::string_view text) {
  const auto* s = scheme_of(text);
  if (!s)
    throw Error(Errc::invalid_argument, "'" + std::string(text).substr(0, 200) +
                                            "' is not a store URL: use " + schemes_text());
  return s->parse(text);
}

std::unique_ptr<Store> open(const ObjectUrl& url, const Options& options) {
  for (const auto& s : kSchemes)
    if (s.name == url.scheme) return s.open(options);
  throw Error(Errc::invalid_argument, "no store is known by the scheme '" + url.scheme + "'");
}

std::string Store::copy_object(const ObjectUrl& source, const ObjectUrl& to) {
  throw Error(Errc::unsupported,
              "this store cannot copy " + source.text() + " to " + to.text() + " itself");
}

Part Store::upload_part_copy(const ObjectUrl& to, const std::string&, int, const ObjectUrl& source,
                             std::uint64_t, std::uint64_t) {
  throw Error(Errc::unsupported,
              "this store cannot copy " + source.text() + " to " + to.text() + " itself");
}

std::unique_ptr<Store> open(const ObjectUrl& url, Operation operation) {
  Options options;
  options.operation = operation;
  return open(url, options);
}

std::string schemes_text() {
  std::string out;
  for (const auto& s : kSchemes) out += (out.empty() ? "" : ", ") + std::string(s.name) + "://";
  return out;
}

}  // namespace nubo::store
