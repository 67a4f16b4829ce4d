// `nubo-cost catalog update`: each source fetched (conditionally, with the cached ETag), checked
// by its own reader, and only then written over the cached version, atomically.
#include <chrono>
#include <cmath>
#include <set>

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

// A catalog is fetched whole and checked: a transfer slower than this is not one that could
// finish (64 MiB in the 600 s a source may take needs about 110 KB/s), so a server dripping
// bytes is cut after the stall timeout rather than at the total.
constexpr long kMinBytesPerSecond = 16 << 10;

Fetched fetch(const std::string& url, const sources::Format& format, const std::string& etag,
              const CatalogUpdateOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.total_timeout_s);
  const auto seconds_left = [&] {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0)
      throw Error(Errc::timeout, http::without_credentials(url) + ": more than " +
                                     std::to_string(static_cast<int>(o.total_timeout_s)) +
                                     " s for the whole source");
    return left;
  };
  http::Request r;
  r.method = "GET";
  r.url = url;
  r.max_response = csv::kMaxBytes;
  r.timeout_seconds = o.timeout_s;
  r.total_seconds = seconds_left();
  r.min_bytes_per_s = kMinBytesPerSecond;
  r.require_framing = true;
  r.accept_compressed = true;
  if (format.keep_line) r.keep_line = format.keep_line;
  if (!etag.empty()) r.headers["If-None-Match"] = etag;
  auto response = http::request(r);
  Fetched out{response.status, std::move(response.body), {}};
  if (auto it = response.headers.find("etag"); it != response.headers.end())
    out.etag = sources::usable_etag(it->second);
  if (out.status != 200 || !format.next_page) return out;
  // A paged answer: every page, joined, all of them within one byte budget and one deadline,
  // each from the server the first came from and none twice (a page naming itself, or another
  // host such as a metadata service, ends the update).
  const auto home = http::origin(url);
  std::set<std::string> seen{url};
  std::size_t received = out.body.size();
  std::vector<std::string> pages{std::move(out.body)};
  for (auto next = format.next_page(pages.back()); !next.empty();
       next = format.next_page(pages.back())) {
    const auto shown = printable(http::without_credentials(next).substr(0, 300));
    if (pages.size() >= kMaxPages)
      throw Error(Errc::corrupt, http::without_credentials(url) + ": more than " +
                                     std::to_string(kMaxPages) + " pages");
    if (!seen.insert(next).second)
      throw Error(Errc::corrupt, shown + ": a page links back to one already read");
    if (http::origin(next) != home)
      throw Error(Errc::corrupt,
                  shown + ": the next page is on another server than " + home + "; not followed");
    r.url = next;
    r.headers.clear();
    r.max_response = csv::kMaxBytes - received;
    r.total_seconds = seconds_left();
    auto page = http::request(r);
    if (page.status != 200)
      throw Error(Errc::unavailable, shown + ": HTTP " + std::to_string(page.status));
    received += page.body.size();
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
  // The URL fetched may carry a mirror's credentials; only `u.url` without them is shown or kept.
  std::string url = known.url;
  if (auto it = o.urls.find(known.name); it != o.urls.end())
    url = it->second;
  else if (auto env_url = env::catalog_url(known.name))
    url = *env_url;
  u.url = http::without_credentials(url);
  std::optional<sources::CachedSource> cached;
  try {
    cached = sources::read_cached(dir, known.name);
  } catch (const Error&) {
    // An unreadable cache file is replaced by a good new version, or stays ignored.
  }
  if (cached) u.fetched = cached->meta.fetched;
  const auto& format = sources::format(known.format);
  try {
    sources::check_source_url(known.name, url);
    const bool same_url = cached && cached->meta.url == u.url;
    auto got = fetch(url, format, same_url ? cached->meta.etag : "", o);
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
    auto imported = sources::read(
        format, {got.body, known.name + " from " + u.url, known.provider, now.substr(0, 10)});
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
    u.message = printable(e.what()) + kept(cached);
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
  for (const auto& [name, url] : o.urls) sources::check_source_url(name, url);
  std::vector<CatalogUpdate> out;
  for (const auto& k : known) {
    bool wanted = o.sources.empty();
    for (const auto& name : o.sources) wanted = wanted || name == k.name;
    if (wanted) out.push_back(update_one(k, dir, o));
  }
  return out;
}

}  // namespace nubo::cost
