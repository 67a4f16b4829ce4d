// The catalog from public sources: the embedded snapshot (lib/cost/snapshot, imported at first
// use by the same readers an update runs), each source replaced by a newer version from the
// user's cache or SkyPilot's, and the published reserved prices and interruption bands laid
// over the rows they name.
#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "common/csv.hpp"
#include "common/embedded_files.hpp"
#include "common/env.hpp"
#include "common/log.hpp"
#include "common/small_file.hpp"
#include "common/text.hpp"
#include "cost/fields.hpp"
#include "cost/sources/cache.hpp"
#include "cost/sources/checks.hpp"
#include "cost/sources/source.hpp"
#include "nubo/cost.hpp"
#include "nubo/error.hpp"

namespace nubo::embedded {
std::span<const File> cost_snapshot_files();  // generated from lib/cost/snapshot
}

namespace nubo::cost {
namespace {

std::string_view snapshot_file(std::string_view path) {
  for (const auto& f : embedded::cost_snapshot_files())
    if (f.path == path) return f.data;
  throw Error(Errc::internal, "the embedded catalog snapshot lacks " + std::string(path));
}

struct Known {
  CatalogSource source;
  std::string file;  // in the snapshot
};

const std::vector<Known>& manifest() {
  static const auto list = [] {
    std::vector<Known> out;
    auto table = csv::Table::parse(snapshot_file("sources.csv"), "embedded snapshot sources.csv",
                                   {"name", "format", "provider", "url", "file", "fetched"});
    for (const auto& row : table.rows()) {
      Known k;
      k.source.name = row.str("name");
      k.source.format = row.str("format");
      k.source.provider = row.str("provider");
      k.source.url = row.str("url");
      k.source.fetched = row.str("fetched");
      k.source.origin = "embedded";
      k.file = row.str("file");
      sources::format(k.source.format);            // a known format
      if (!k.file.empty()) snapshot_file(k.file);  // and a file that is there
      out.push_back(std::move(k));
    }
    // Rows first, then what is laid over them (reserved prices, interruption bands).
    std::stable_sort(out.begin(), out.end(), [](const Known& a, const Known& b) {
      auto lists_rows = [](const Known& k) {
        return k.source.format == "skypilot" || k.source.format == "gpuhunt";
      };
      return lists_rows(a) && !lists_rows(b);
    });
    return out;
  }();
  return list;
}

std::string utc_time(std::filesystem::file_time_type time) {
  return sources::utc_time(std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(
          std::chrono::file_clock::to_sys(time))));
}

std::string date_of(const std::string& fetched) {
  return fetched.substr(0, std::min<std::size_t>(10, fetched.size()));
}

// SkyPilot's own copy of a cloud's catalog, when this user has SkyPilot and it is there.
std::optional<std::pair<std::string, std::string>> skypilot_copy(const std::string& dir,
                                                                 const CatalogSource& s) {
  if (dir.empty() || s.format != "skypilot") return std::nullopt;
  for (const char* version : {"v8", "v7"}) {
    const auto path = dir + "/" + version + "/" + s.provider + "/vms.csv";
    std::error_code ec;
    const auto time = std::filesystem::last_write_time(path, ec);
    if (ec) continue;
    return std::pair{path, utc_time(time)};
  }
  return std::nullopt;
}

}  // namespace

double CatalogSource::age_days() const {
  return sources::age_days(fetched);
}

std::string CatalogPaths::default_cache_dir() {
  return env::catalog_cache_dir();
}

std::vector<CatalogSource> Catalog::known_sources() {
  std::vector<CatalogSource> out;
  for (const auto& k : manifest()) out.push_back(k.source);
  return out;
}

namespace detail {

// A source read and checked, not yet added: its rows and overlays, and what it says of itself.
struct ImportedSource {
  sources::Imported got;
  CatalogSource info;
};

}  // namespace detail

namespace {

detail::ImportedSource read_source(std::string_view text, const CatalogSource& source) {
  if (text.size() > csv::kMaxBytes)
    throw Error(Errc::invalid_argument, source.name + ": larger than 64 MiB");
  const auto& format = sources::format(source.format);
  const std::string where =
      source.origin == "embedded" || source.origin.empty() ? source.name : source.origin;
  detail::ImportedSource out;
  out.got =
      sources::read(format, {text, where, text::lower(source.provider), date_of(source.fetched)});
  out.info = source;
  out.info.records = out.got.records;
  out.info.skipped = std::move(out.got.skipped);
  out.info.corrected = std::move(out.got.corrected);
  out.info.rows = out.got.instances.size();
  for (auto& in : out.got.instances)
    in.source = source.name + " (" + (source.url.empty() ? where : source.url) + "), " + in.source;
  return out;
}

}  // namespace

void Catalog::apply(std::vector<detail::ImportedSource> read) {
  // Every source's rows at once: one pass over the catalog's keys, however many sources.
  std::vector<Instance> rows;
  for (auto& r : read)
    for (auto& in : r.got.instances) rows.push_back(std::move(in));
  add_rows(std::move(rows));
  // Reserved prices and bands apply to the rows they name.
  std::unordered_map<std::string, std::size_t> at;
  auto find = [&](const std::string& provider, const std::string& name,
                  const std::string& region) -> Instance* {
    if (at.empty()) {
      at.reserve(instances_.size());
      for (std::size_t i = 0; i < instances_.size(); ++i)
        at.emplace(detail::row_key(instances_[i]), i);
    }
    Instance probe;
    probe.provider = provider;
    probe.name = name;
    probe.region = region;
    auto it = at.find(detail::row_key(probe));
    return it == at.end() ? nullptr : &instances_[it->second];
  };
  for (auto& r : read) {
    auto& info = r.info;
    for (const auto& p : r.got.reserved) {
      auto* in = find(p.provider, p.instance, p.region);
      if (!in) continue;  // a price list covers far more instances than have GPUs
      const char* what = p.term == Pricing::reserved_1y ? "reserved-1y" : "reserved-3y";
      if (auto why = sources::check_below_on_demand(p.hourly, in->on_demand, what); !why.empty()) {
        info.skipped.push_back({p.where, p.instance + ": " + why});
        continue;
      }
      (p.term == Pricing::reserved_1y ? in->reserved_1y : in->reserved_3y) = p.hourly;
      (p.term == Pricing::reserved_1y ? in->reserved_1y_derived : in->reserved_3y_derived) = false;
      ++info.rows;
    }
    for (const auto& b : r.got.bands) {
      auto* in = find(b.provider, b.instance, b.region);
      if (!in) continue;
      in->interruption_band = b.band;
      in->spot_mtbi_h = b.mtbi_h;
      ++info.rows;
    }
    sources_.push_back(info.name);
    imported_.push_back(std::move(info));
  }
}

void Catalog::import_text(std::string_view text, const CatalogSource& source) {
  std::vector<detail::ImportedSource> read;
  read.push_back(read_source(text, source));  // a file that fails throws before any change
  apply(std::move(read));
  changed();
}

void Catalog::import_file(const std::string& path, CatalogSource source) {
  sources::format(source.format);  // an unknown format is named before the file is read
  const auto file = files::read_small_file(path, csv::kMaxBytes, "catalog file");
  if (source.name.empty()) source.name = std::filesystem::path(path).filename().string();
  source.origin = path;
  if (source.fetched.empty()) {
    std::error_code ec;
    const auto time = std::filesystem::last_write_time(path, ec);
    if (!ec) source.fetched = utc_time(time);
  }
  import_text(file.bytes, source);
}

Catalog Catalog::current(const CatalogPaths& paths) {
  const auto cache = !paths.use_cache          ? std::string()
                     : paths.cache_dir.empty() ? env::catalog_cache_dir()
                                               : paths.cache_dir;
  const auto sky = !paths.use_skypilot          ? std::string()
                   : paths.skypilot_dir.empty() ? env::skypilot_catalog_dir()
                                                : paths.skypilot_dir;
  Catalog c = empty();
  std::vector<detail::ImportedSource> read;
  for (const auto& k : manifest()) {
    // The newest version of this source: embedded, nubo's cache or SkyPilot's.
    CatalogSource chosen = k.source;
    std::string body(k.file.empty() ? std::string_view() : snapshot_file(k.file));
    if (!cache.empty()) {
      try {
        if (auto cached = sources::read_cached(cache, k.source.name);
            cached && cached->meta.fetched > chosen.fetched) {
          chosen = cached->meta;
          chosen.origin = sources::cache_path(cache, k.source.name);
          body = std::move(cached->body);
        }
      } catch (const Error& e) {
        log::warn(std::string(e.what()) + "; using the embedded " + k.source.name);
      }
    }
    if (auto copy = skypilot_copy(sky, k.source); copy && copy->second > chosen.fetched) {
      try {
        body = files::read_small_file(copy->first, csv::kMaxBytes, "SkyPilot catalog").bytes;
        chosen = k.source;
        chosen.origin = copy->first;
        chosen.fetched = copy->second;
      } catch (const Error& e) {
        log::warn(e.what());
      }
    }
    if (chosen.origin == "embedded" && k.file.empty()) continue;  // fetched by updates only
    try {
      read.push_back(read_source(body, chosen));
    } catch (const Error& e) {
      if (chosen.origin == "embedded") throw;
      if (k.file.empty()) {
        log::warn(std::string(e.what()) + "; " + k.source.name + " left out");
        continue;
      }
      // A cached version that is not the format at all: the embedded one answers.
      log::warn(std::string(e.what()) + "; using the embedded " + k.source.name);
      read.push_back(read_source(snapshot_file(k.file), k.source));
    }
  }
  c.apply(std::move(read));
  c.changed();  // the planner's index, built once for all the sources
  return c;
}

}  // namespace nubo::cost
