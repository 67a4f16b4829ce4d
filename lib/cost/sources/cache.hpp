// The user's cache of fetched catalogs: one file per source, `<name>.source`, whose first line
// is its metadata as JSON (URL, fetch time, ETag, format, provider) and the rest the body as
// fetched. One file, written to a temporary name, synced and renamed into place, so a kill at
// any moment leaves the old version or the new one, never a body with another's metadata.
#pragma once

#include <ctime>
#include <optional>
#include <string>

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
void write_cached(const std::string& dir, const CachedSource& source);

// Now, UTC, as "2026-12-03T10:00:00Z"; and the age in days of such a time (or a date).
std::string utc_now();
std::string utc_time(std::time_t t);
double age_days(const std::string& fetched);

}  // namespace nubo::cost::sources
