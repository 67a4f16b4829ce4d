// `nubo-cost catalog update`: each source fetched (conditionally, with the cached ETag), checked
// by its own reader, and only then written over the cached version, atomically.
#include <cmath>

#include "common/csv.hpp"
#include "common/env.hpp"
#include "common/http.hpp"
#include "cost/sources/cache.hpp"
#include "cost/sources/source.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::cost {
namespace {

constexpr int kMaxPages = 200;

struct Fetched {
  long status = 0;
  std::string body, etag;
};

Fetched fetch(const std::string& url, const sources::Format& format, const std::string& etag,
              const CatalogUpdateOptions& o) {
  http::Request r;
  r.method = "GET";
  r.url = url;
  r.max_response = csv::kMaxBytes;
  r.timeout_seconds = o.timeout_s;
  r.total_seconds = o.total_timeout_s;
  r.accept_compressed = true;
  if (format.keep_line) r.keep_line = format.keep_line;
  if (!etag.empty()) r.headers["If-None-Match"] = etag;
  auto response = http::request(r);
  Fetched out{response.status, std::move(response.body), {}};
  if (auto it = response.headers.find("etag"); it != response.headers.end())
    out.etag = std::string(it->second);
  if (out.status != 200 || !format.next_page) return out;
  // A paged answer: every page, joined.
  std::vector<std::string> pages{std::move(out.body)};
  for (auto next = format.next_page(pages.back()); !next.empty();
       next = format.next_page(pages.back())) {
    if (pages.size() >= kMaxPages)
      throw Error(Errc::corrupt, url + ": more than " + std::to_string(kMaxPages) + " pages");
    r.url = next;
    r.headers.clear();
    auto page = http::request(r);
    if (page.status != 200)
      throw Error(Errc::unavailable, next + ": HTTP " + std::to_string(page.status));
    pages.push_back(std::move(page.body));
  }
  out.body = format.join_pages(pages);
  return out;
}

std::string kept(const std::optional<sources::CachedSource>& cached) {
  return cached ? "; kept the version fetched " + cached->meta.fetched
                : "; the embedded snapshot answers";
}

CatalogUpdate update_one(const CatalogSource& known, const std::string& dir,
                         const CatalogUpdateOptions& o) {
  CatalogUpdate u;
  u.name = known.name;
  if (auto it = o.urls.find(known.name); it != o.urls.end())
    u.url = it->second;
  else if (auto env_url = env::catalog_url(known.name))
    u.url = *env_url;
  else
    u.url = known.url;
  std::optional<sources::CachedSource> cached;
  try {
    cached = sources::read_cached(dir, known.name);
  } catch (const Error&) {
    // An unreadable cache file is replaced by a good new version, or stays ignored.
  }
  if (cached) u.fetched = cached->meta.fetched;
  const auto& format = sources::format(known.format);
  try {
    const bool same_url = cached && cached->meta.url == u.url;
    auto got = fetch(u.url, format, same_url ? cached->meta.etag : "", o);
    if (got.status == 304 && same_url) {
      auto refreshed = *cached;
      refreshed.meta.fetched = sources::utc_now();
      sources::write_cached(dir, refreshed);
      u.status = UpdateStatus::not_modified;
      u.fetched = refreshed.meta.fetched;
      u.message = "not modified since " + cached->meta.fetched;
      return u;
    }
    if (got.status != 200) {
      u.message = "HTTP " + std::to_string(got.status) + kept(cached);
      return u;
    }
    // Checked by the format's reader before it replaces anything.
    const auto now = sources::utc_now();
    auto imported =
        format.read({got.body, known.name + " from " + u.url, known.provider, now.substr(0, 10)});
    u.records = imported.records;
    u.skipped = imported.skipped.size();
    const auto rows = imported.instances.size() + imported.reserved.size() + imported.bands.size();
    if (rows == 0) {
      u.message = "the new version has no usable rows" +
                  (imported.skipped.empty() ? std::string()
                                            : " (first problem: " + imported.skipped[0].where +
                                                  ": " + imported.skipped[0].reason + ")") +
                  kept(cached);
      return u;
    }
    if (u.records > 0 &&
        static_cast<double>(u.skipped) > o.max_skipped * static_cast<double>(u.records)) {
      u.message = "the new version skips " + std::to_string(u.skipped) + " of its " +
                  std::to_string(u.records) + " records (first: " + imported.skipped[0].where +
                  ": " + imported.skipped[0].reason + ")" + kept(cached);
      return u;
    }
    sources::CachedSource fresh;
    fresh.meta = known;
    fresh.meta.url = u.url;
    fresh.meta.fetched = now;
    fresh.meta.etag = got.etag;
    fresh.body = std::move(got.body);
    sources::write_cached(dir, fresh);
    u.status = UpdateStatus::updated;
    u.fetched = now;
    u.message = std::to_string(rows) + " rows";
    if (u.skipped) u.message += ", " + std::to_string(u.skipped) + " skipped";
  } catch (const Error& e) {
    u.message = std::string(e.what()) + kept(cached);
  }
  return u;
}

}  // namespace

std::string_view update_status_name(UpdateStatus s) noexcept {
  switch (s) {
    case UpdateStatus::updated:
      return "updated";
    case UpdateStatus::not_modified:
      return "not modified";
    case UpdateStatus::failed:
      break;
  }
  return "failed";
}

std::vector<CatalogUpdate> update_catalog(const CatalogUpdateOptions& o) {
  const auto dir = o.cache_dir.empty() ? CatalogPaths::default_cache_dir() : o.cache_dir;
  if (dir.empty())
    throw Error(Errc::invalid_argument,
                "no folder for the catalog cache: set XDG_CACHE_HOME, HOME or NUBO_CATALOG_CACHE");
  if (!(o.timeout_s > 0) || !(o.total_timeout_s > 0) || !(o.max_skipped >= 0 && o.max_skipped <= 1))
    throw Error(Errc::invalid_argument,
                "catalog update: timeouts must be positive and max_skipped lie in [0, 1]");
  const auto known = Catalog::known_sources();
  for (const auto& name : o.sources) {
    bool found = false;
    for (const auto& k : known) found = found || k.name == name;
    if (!found) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k.name;
      throw Error(Errc::invalid_argument, "unknown catalog source '" + name + "'; known: " + names);
    }
  }
  for (const auto& [name, url] : o.urls)
    if (!url.starts_with("https://") && !url.starts_with("http://"))
      throw Error(Errc::invalid_argument,
                  "catalog source " + name + ": '" + url + "' is not an http(s) URL");
  std::vector<CatalogUpdate> out;
  for (const auto& k : known) {
    bool wanted = o.sources.empty();
    for (const auto& name : o.sources) wanted = wanted || name == k.name;
    if (wanted) out.push_back(update_one(k, dir, o));
  }
  return out;
}

}  // namespace nubo::cost
