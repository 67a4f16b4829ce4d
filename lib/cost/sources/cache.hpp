// The user's cache of fetched catalogs: one file per source, `<name>.source`, whose first line
// is its metadata as JSON (URL, fetch time, ETag, format, provider) and the rest the body as
// fetched. One file, written to a temporary name, synced and renamed into place, so a kill at
// any moment leaves the old version or the new one, never a body with another's metadata.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "nubo/cost.hpp"

namespace nubo::cost::sources {

struct CachedSource {
  CatalogSource meta;  // name, format, provider, url, fetched, etag
  std::string body;
};

std::string cache_path(const std::string& dir, const std::string& name);
// nullopt when absent; Error(invalid_argument) naming the file when it is not a cache file.
std::optional<CachedSource> read_cached(const std::string& dir, const std::string& name);
// Creates `dir` when needed; Error(io) naming the path on failure, the old version then intact.
// The new version is read as read_cached reads it before it replaces the old, so that an update
// never leaves a file the next plan cannot read. Writers of one cache folder take
// turns (a lock on the folder), so that none removes another's temporary file.
void write_cached(const std::string& dir, const CachedSource& source);

// The ETag a server sent, as the cache keeps it: printable ASCII of at most 1 KiB, else "" (the
// next update then asks unconditionally). A longer one would not fit the metadata line, and a
// byte outside ASCII cannot be written as JSON text or sent back in a header.
std::string usable_etag(std::string_view etag);
// Error(invalid_argument) naming the source unless `url` is an http(s) URL of printable text
// and at most 8 KiB: what update fetches, and what its cache file names.
void check_source_url(const std::string& source, std::string_view url);

// Now, UTC, as "2026-12-03T10:00:00Z"; and the age in days of such a time (or a date).
std::string utc_now();
std::string utc_time(std::time_t t);
double age_days(const std::string& fetched);

}  // namespace nubo::cost::sources
