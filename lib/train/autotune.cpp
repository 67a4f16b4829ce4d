// Bucket-size autotuning, the trainer's cudnn.benchmark: a few candidate sizes are measured on
// one global batch (gradients computed and all-reduced, never applied, so training is
// unchanged) and the fastest is cached on disk under a key of the device model, the shapes, the
// team size and the library versions (as PyTorch's TunableOp keys its results). A corrupt cache,
// or one written by another nubo, is ignored with a warning and rewritten.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/env.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "common/small_file.hpp"
#include "device/host/openblas.hpp"
#include "nubo/error.hpp"
#include "nubo/version.h"
#include "train/trainer_impl.hpp"

namespace nubo {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSchema = "nubo-autotune/1";
constexpr std::uint64_t kMaxCacheBytes = 16u << 20;  // a few hundred bytes an entry

// Concatenation by += steps: GCC 12 reports a false -Werror=restrict for chains of
// std::string operator+ with literals (GCC bug 105329).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s += p;
  return s;
}

std::string version() {
  return cat({std::to_string(NUBO_VERSION_MAJOR), ".", std::to_string(NUBO_VERSION_MINOR), ".",
              std::to_string(NUBO_VERSION_PATCH)});
}

// The cache's entries, or an empty object (with a warning) when the file is unusable.
nlohmann::json read_cache(const std::string& path, bool warn = true) {
  if (path.empty()) return nlohmann::json::object();
  nlohmann::json j;
  try {
    const auto file = files::read_small_file_if_present(path, kMaxCacheBytes, "autotune cache");
    if (!file) return nlohmann::json::object();
    j = json::parse(file->bytes, "autotune cache " + path);
    if (!j.is_object() || j.value("schema", "") != kSchema || !j.contains("entries") ||
        !j["entries"].is_object())
      throw std::runtime_error(cat({"not a ", kSchema, " file"}));
  } catch (const std::exception& x) {
    if (warn)
      log::warn(cat({"autotune cache ", path, " is corrupt (", x.what(), "); ignoring it"}));
    return nlohmann::json::object();
  }
  if (j.value("nubo_version", "") != version()) {
    if (warn)
      log::warn(cat({"autotune cache ", path, " is stale (written by nubo ",
                     j.value("nubo_version", "?"), ", this is ", version(), "); ignoring it"}));
    return nlohmann::json::object();
  }
  return j["entries"];
}

void write_cache(const std::string& path, nlohmann::json entries) {
  if (path.empty()) return;
  try {
    fs::path p(path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    nlohmann::json j = {{"schema", kSchema}, {"nubo_version", version()}, {"entries", entries}};
    // Readers see the old file or the new one, never half of one; never written through a link.
    files::write_small_file(p.has_parent_path() ? p.parent_path().string() : ".",
                            p.filename().string(), j.dump(1) + "\n", 0644, "autotune cache");
  } catch (const std::exception& x) {
    log::warn(cat({"autotune cache ", path, " could not be written: ", x.what()}));
  }
}

}  // namespace

static std::string autotune_key(const Device& d, const train::Layout& layout, std::size_t batch,
                                int team_size) {
  std::string k(backend_name(d.backend));
  k += ':';
  k += d.model.empty() ? d.name : d.model;
  k += "|layers=";
  for (std::size_t i = 0; i < layout.widths.size(); ++i) {
    if (i) k += '-';
    k += std::to_string(layout.widths[i]);
  }
  k += "|batch=";
  k += std::to_string(batch);
  k += "|team=";
  k += std::to_string(team_size);
  k += "|nubo=";
  k += version();
  k += "|blas=";
  k += detail::openblas_description();
  return k;
}

void DataParallelTrainer::Impl::autotune() {
  const std::string path = env::autotune_cache_path();
  std::string key;
  std::int64_t cached = -1;
  // Rank 0 decides (its cache, its measurement) and the others take its word: every rank must
  // end with the same buckets, since the all-reduces must match.
  team.run([&](Worker& w) {
    auto word = w.alloc<std::int64_t>(1);
    std::int64_t v = -1;
    if (w.rank() == 0) {
      key = autotune_key(w.device(), layout, opt.global_batch, team.size());
      auto entries = read_cache(path);
      if (entries.contains(key) && entries[key].is_object() &&
          entries[key].contains("bucket_bytes")) {
        try {  // a size no bucket has (negative, fractional, past 2^40) is no cached answer
          v = json::number<std::int64_t>(entries[key]["bucket_bytes"], "autotune cache", 0,
                                         std::int64_t{1} << 40);
        } catch (const Error&) {
          v = -1;
        }
      }
    }
    word.write(std::span<const std::int64_t>(&v, 1));
    w.broadcast(word, 0);
    word.read(std::span<std::int64_t>(&v, 1));
    if (w.local_rank() == 0) cached = v;
  });
  if (cached >= 0) {
    autotune_outcome = "hit";
    apply_bucket_bytes(static_cast<std::size_t>(cached));
    return;
  }
  autotune_outcome = "miss";
  // Candidates: no buckets, the default, and cuts of the model into about 2, 4 and 8 buckets;
  // sizes giving the same buckets are measured once.
  const std::size_t model_bytes = layout.total * sizeof(float);
  std::vector<std::size_t> candidates = {0, kDefaultBucketBytes, model_bytes / 2, model_bytes / 4,
                                         model_bytes / 8};
  std::vector<std::size_t> plans_seen, chosen;
  for (std::size_t c : candidates) {
    if (c == 1) continue;
    std::size_t n = train::plan_buckets(layout, c).size();
    if (std::find(plans_seen.begin(), plans_seen.end(), n) != plans_seen.end()) continue;
    plans_seen.push_back(n);
    chosen.push_back(c);
  }
  std::vector<std::size_t> rows(std::min(opt.global_batch, train->size()));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  std::size_t best = opt.bucket_bytes;
  double best_t = 1e300;
  for (std::size_t c : chosen) {
    apply_bucket_bytes(c);
    double t = 0;
    team.run([&](Worker& w) {
      auto& r = *replicas[static_cast<std::size_t>(w.local_rank())];
      train::StepTimes st;
      r.train_step(w, *train, rows, opt.lr, 0, 0, false, st);  // warm-up
      std::vector<float> samples;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        r.train_step(w, *train, rows, opt.lr, 0, 0, false, st);
        samples.push_back(
            std::chrono::duration<float>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(samples.begin(), samples.end());
      // The slowest rank sets the pace; all ranks see the same maximum and pick alike.
      auto m = w.alloc<float>(1);
      m.write(std::span<const float>(&samples[2], 1));
      w.all_reduce(m, ReduceOp::max);
      float v = 0;
      m.read(std::span<float>(&v, 1));
      if (w.local_rank() == 0) t = v;
    });
    if (t < best_t) {
      best_t = t;
      best = c;
    }
  }
  apply_bucket_bytes(best);
  log::info(cat({"autotune: bucket size ", std::to_string(best), " bytes (",
                 std::to_string(best_t * 1e3), " ms per step)"}));
  if (holds_rank0()) {
    auto entries = read_cache(path, false);
    entries[key] = {{"bucket_bytes", best}, {"step_s", best_t}};
    write_cache(path, entries);
  }
}

}  // namespace nubo
