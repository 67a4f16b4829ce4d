// nubo::copy: a file or a tree between this machine and a store, file by file with
// copy.hpp.
#include <sys/stat.h>

#include <chrono>

#include "nubo/copy.hpp"
#include "nubo/error.hpp"
#include "transfer/copy/copy.hpp"
#include "transfer/copy/copy_between.hpp"
#include "transfer/copy/places.hpp"
#include "transfer/file_io.hpp"
#include "transfer/paths.hpp"
#include "transfer/store/parts.hpp"
#include "transfer/store/store.hpp"

namespace nubo::transfer {
namespace {

using Clock = std::chrono::steady_clock;

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string leaf_of(const std::string& path) {
  auto p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Adds one file's summary to the whole's, and shows the whole's progress to the caller.
struct Totals {
  CopySummary summary;
  std::uint64_t total = 0;
  std::uint64_t files_total = 0;
  const CopyOptions& options;
  CopyOptions for_file(const std::string& name) {
    CopyOptions o = options;
    if (!options.progress) return o;
    const auto before = summary.bytes_sent + summary.bytes_resumed;
    o.progress = [this, before, name](const Progress& p) {
      Progress all = p;
      all.bytes_total = total;
      all.bytes_done = before + p.bytes_done;
      all.files_total = files_total;
      all.files_done = summary.files;
      all.current_file = name;
      return options.progress(all);
    };
    return o;
  }
  void add(const CopySummary& s) { store::add_summary(summary, s); }
};

// An object, or every object under a prefix, from one store to another (copy_between.hpp).
CopySummary copy_stores(store::Store& source, const store::ObjectUrl& from,
                        store::Store& destination, const store::ObjectUrl& to,
                        const CopyOptions& options) {
  std::vector<std::pair<store::ObjectUrl, store::ObjectUrl>> pairs;
  if (!from.is_prefix()) {
    pairs.emplace_back(from, to.is_prefix() ? to.with_key(to.key + leaf_of(from.key)) : to);
    return store::copy_many(source, destination, pairs, options);
  }
  if (!to.is_prefix())
    throw Error(Errc::invalid_argument, "copying the prefix " + from.text() +
                                            " needs a prefix to copy into: " + to.text() +
                                            "/ (with its '/')");
  // A prefix inside the other, however spelled, would copy its own copies.
  store::check_apart(from.text(), store::place_key(from.text(), &source), to.text(),
                     store::place_key(to.text(), &destination));
  for (const auto& [key, size] : source.list_objects(from)) {
    const auto rest = key.substr(from.key.size());
    if (rest.empty() || rest.back() == '/') continue;  // a "directory" marker
    paths::check_entry(rest);  // a key with ".." would leave the prefix (in file://, the folder)
    pairs.emplace_back(from.with_key(key), to.with_key(to.key + rest));
  }
  return store::copy_many(source, destination, pairs, options);
}

}  // namespace

bool is_store_url(std::string_view text) noexcept {
  return store::is_url(text);
}

CopySummary copy(const std::string& from, const std::string& to, const CopyOptions& options) {
  const auto started = Clock::now();
  const auto plan = store::plan_stores(options, store::Operation::cp);
  const bool up = store::is_url(to), down = store::is_url(from);
  if (!up && !down)
    throw Error(Errc::invalid_argument, "neither '" + from + "' nor '" + to + "' is a store URL (" +
                                            store::schemes_text() + ")");
  if (up && down) {
    if (!options.key_file.empty())
      throw Error(Errc::invalid_argument,
                  "a key file is for copies to or from this machine: between stores, objects "
                  "move as they are stored (an encrypted object stays encrypted, under its key)");
    const auto source_url = store::parse_url(from), destination_url = store::parse_url(to);
    const auto source = store::open(source_url, plan.source);
    const auto destination = store::open(destination_url, plan.destination);
    auto summary = copy_stores(*source, source_url, *destination, destination_url, options);
    summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return summary;
  }
  // The URL before the credentials: a malformed one is the same mistake with or without keys.
  const auto remote = store::parse_url(up ? to : from);
  const auto store = store::open(remote, plan.destination);
  Totals totals{{}, 0, 0, options};

  if (up) {
    auto url = remote;
    const bool prefix = url.key.empty() || url.key.back() == '/';
    if (!is_directory(from)) {
      if (prefix) url.key += leaf_of(from);
      totals.total = 0;
      totals.files_total = 1;
      totals.add(store::upload_file(*store, from, url, totals.for_file(from)));
    } else {
      if (!prefix)
        throw Error(Errc::invalid_argument, "copying the directory " + from +
                                                " needs a prefix: " + to + "/ (with its '/')");
      // Each entry's path starts with the directory's own name, as in an archive ("." gives the
      // contents without it); links as the options say, counted.
      const auto tree = store::copy_walk(from, options, totals.summary);
      for (const auto& e : tree) totals.total += e.meta.size;
      totals.files_total = tree.size();
      for (const auto& e : tree) {
        const auto object = url.with_key(url.key + e.meta.path);
        if (e.meta.kind == format::EntryKind::symlink)
          totals.add(store::upload_link(*store, e.meta.link_target, object));
        else
          totals.add(
              store::upload_file(*store, e.source_path, object, totals.for_file(e.meta.path)));
      }
    }
  } else {
    const auto& url = remote;
    const bool prefix = url.key.empty() || url.key.back() == '/';
    if (!prefix) {
      const auto path = is_directory(to) ? to + "/" + leaf_of(url.key) : to;
      totals.files_total = 1;
      totals.add(store::download_file(*store, url, path, totals.for_file(url.key)));
    } else {
      auto objects = store->list_objects(url);
      for (const auto& [key, size] : objects) totals.total += size;
      totals.files_total = objects.size();
      // Every folder below `to` reached without following a link: a symlink planted in the
      // destination never takes a file outside it.
      TargetDir target(to, false, 0777);
      for (const auto& [key, size] : objects) {
        const auto rest = key.substr(url.key.size());
        if (rest.empty() || rest.back() == '/') continue;  // a "directory" marker
        totals.add(
            store::download_into(*store, url.with_key(key), target, rest, totals.for_file(key)));
      }
    }
  }
  totals.summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return totals.summary;
}

}  // namespace nubo::transfer
