// Checkpoints: a nubo archive (zstd) of meta.json, params.bin and the optimizer state
// (state1.bin: SGD velocity or Adam m; state2.bin: Adam v), raw little-endian fp32 in the
// parameters' order. transfer::pack writes "<path>.part" and renames it when complete, so a
// checkpoint is either whole or absent; every chunk is checksummed, so damage is found on load.
// A checkpoint directory may be a store URL, "s3://BUCKET/PREFIX/" (or gs://, file://): each
// checkpoint is then an archive object (pack -o s3://..., which appears only once whole), followed
// by a small "latest" object naming it; resume lists the prefix and takes the newest that verifies,
// and pruning deletes objects.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "common/env.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"
#include "nubo/version.h"
#include "train/trainer_impl.hpp"
#include "transfer/store/store.hpp"

namespace nubo {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "nubo-checkpoint/1";

std::string widths_text(const std::vector<std::size_t>& w) {
  std::string s;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i) s += '-';
    s += std::to_string(w[i]);
  }
  return s;
}

void write_file(const fs::path& p, const void* data, std::size_t bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) throw Error(Errc::io, p.string() + ": cannot write the checkpoint's staging file");
}

std::vector<float> read_floats(const transfer::Reader& r, const std::string& archive,
                               const std::string& name, std::size_t count) {
  const transfer::Entry* e = r.find(name);
  if (!e) throw Error(Errc::corrupt, archive + ": the checkpoint has no " + name);
  if (e->size != count * sizeof(float))
    throw Error(Errc::corrupt, archive + ": " + name + " holds " + std::to_string(e->size) +
                                   " bytes, expected " + std::to_string(count * sizeof(float)));
  std::vector<float> v(count);
  std::size_t got = r.read(name, 0, std::as_writable_bytes(std::span<float>(v)));
  if (got != e->size) throw Error(Errc::corrupt, archive + ": " + name + " is short");
  return v;
}

// The team a checkpoint was written by: its device kind and worker count ("sim x 4").
nlohmann::json team_of(Team& team) {
  return {{"kind", std::string(backend_name(team.worker(0).device().backend))},
          {"workers", team.size()}};
}

std::string team_text(const nlohmann::json& t) {
  const auto workers = t.is_object() ? t.find("workers") : t.end();
  const auto kind = t.is_object() ? t.find("kind") : t.end();
  return (workers != t.end() && workers->is_number_integer() && workers->get<long long>() >= 0
              ? std::to_string(workers->get<long long>())
              : std::string("?")) +
         " " + (kind != t.end() && kind->is_string() ? printable(kind->get<std::string>()) : "?") +
         " worker(s)";
}

std::string waste_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

bool is_checkpoint_name(const std::string& n) {
  return n.starts_with("ckpt-") && n.ends_with(".nubo");
}

// "s3://B/P" as the prefix URL "s3://B/P/" (any store's).
store::ObjectUrl prefix_of(const std::string& dir) {
  auto url = store::parse_url(dir);
  if (!url.key.empty() && url.key.back() != '/') url.key += '/';
  return url;
}

// The checkpoints under a checkpoint directory in a store, as full URLs, oldest first; none
// when the directory is not there yet.
std::vector<std::string> remote_checkpoints(store::Store& store, const store::ObjectUrl& prefix) {
  std::vector<std::string> all;
  std::vector<std::pair<std::string, std::uint64_t>> objects;
  try {
    objects = store.list_objects(prefix);
  } catch (const Error& e) {
    if (e.code() != Errc::not_found || prefix.scheme != "file") throw;
  }
  for (const auto& [key, size] : objects) {
    const auto name = key.substr(prefix.key.size());
    if (name.find('/') == std::string::npos && is_checkpoint_name(name))
      all.push_back(prefix.with_key(key).text());
  }
  std::sort(all.begin(), all.end());  // zero-padded step numbers
  return all;
}

// After a checkpoint object is in place: the "latest" object names it, and only the newest
// `keep` checkpoints of the directory `dir` stay (when `path` is one of them).
void point_and_prune(const std::string& path, const std::string& dir, int keep) {
  if (dir.empty() || !store::is_url(dir)) return;
  const auto prefix = prefix_of(dir);
  if (path.rfind(prefix.text(), 0) != 0) return;  // saved elsewhere: not fit()'s
  const auto store = store::open(prefix, store::Operation::checkpoint);
  const auto name = path.substr(prefix.text().size());
  store->put_object(prefix.with_key(prefix.key + "latest"), transfer::as_bytes(name + "\n"));
  const auto all = remote_checkpoints(*store, prefix);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < all.size(); ++i)
    store->delete_object(store::parse_url(all[i]));
}

}  // namespace

std::string DataParallelTrainer::checkpoint_path(std::uint64_t step) const {
  if (impl_->opt.checkpoint_dir.empty())
    throw Error(Errc::invalid_argument, "checkpoint_path: no checkpoint_dir was set");
  char name[64];
  std::snprintf(name, sizeof name, "ckpt-%010llu.nubo", static_cast<unsigned long long>(step));
  if (store::is_url(impl_->opt.checkpoint_dir))
    return prefix_of(impl_->opt.checkpoint_dir).text() + name;
  return (fs::path(impl_->opt.checkpoint_dir) / name).string();
}

OptimizerState DataParallelTrainer::Impl::gather_state() {
  OptimizerState st;
  team.run([&](Worker& w) {
    OptimizerState mine = replicas[static_cast<std::size_t>(w.local_rank())]->state();
    if (w.local_rank() == 0) st = std::move(mine);
  });
  return st;
}

void DataParallelTrainer::Impl::snapshot(const std::string& path, OptimizerState&& st,
                                         CheckpointSnapshot& snap) const {
  snap.path = path;
  nlohmann::json meta = {
      {"format", kFormat},
      {"nubo_version", std::to_string(NUBO_VERSION_MAJOR) + "." +
                           std::to_string(NUBO_VERSION_MINOR) + "." +
                           std::to_string(NUBO_VERSION_PATCH)},
      {"layers", layout.widths},
      {"optimizer", opt.optimizer == Optimizer::adam ? "adam" : "sgd"},
      {"global_batch", opt.global_batch},
      {"seed", opt.seed},
      {"step", step},
      {"epoch", epoch},
      {"position", position},
      {"rng_state", epoch_rng_state},
      {"dataset", {{"name", train->name()}, {"rows", train->size()}}},
      {"team", team_of(team)},
      // The optimizer's own count (fp16 skips steps), its loss scale, and how it ran.
      {"optimizer_step", st.step},
      {"loss_scale", st.loss_scale},
      {"clean_steps", st.clean_steps},
      {"zero_stage", opt.zero_stage},
      {"precision", std::string(dtype_name(opt.precision))},
  };
  snap.meta = meta.dump(1);
  // The optimizer's logical state, whole whatever the world size and stage: fp32 master
  // weights, then the rule's state.
  snap.values.clear();
  snap.values.push_back(std::move(st.master));
  snap.values.push_back(std::move(st.m));
  if (!st.v.empty()) snap.values.push_back(std::move(st.v));
  snap.delay_s = env::checkpoint_delay_s();
}

CheckpointWrite write_checkpoint(const CheckpointSnapshot& snap, const TrainerOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (snap.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(snap.delay_s));
  const auto& path = snap.path;
  const bool remote = store::is_url(path);
  const fs::path target(path);
  if (!remote && target.has_parent_path()) fs::create_directories(target.parent_path());
  const fs::path staging =
      remote ? fs::temp_directory_path() / ("nubo-checkpoint-" + std::to_string(::getpid()))
             : fs::path(path + ".staging-" + std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directories(staging);
  write_file(staging / "meta.json", snap.meta.data(), snap.meta.size());
  const char* names[] = {"params.bin", "state1.bin", "state2.bin"};
  for (std::size_t i = 0; i < snap.values.size(); ++i)
    write_file(staging / names[i], snap.values[i].data(), snap.values[i].size() * sizeof(float));
  transfer::PackOptions po;
  // Parameters and optimizer state are fp32 tensors: the float codec stores them in 0.85 of
  // their size where zstd-3 takes 0.94, in the same time (benchmarks/results/float_codec.md).
  po.codec = transfer::Codec::floats;
  po.level = 1;
  po.resume = false;
  po.threads = 1;
  const auto packed = transfer::pack({(staging / ".").string()}, path, po);
  fs::remove_all(staging);
  if (remote) {
    point_and_prune(path, opt.checkpoint_dir, opt.checkpoint_keep);
  } else {
    fs::remove(path + ".journal");
  }
  // Keep the newest checkpoint_keep of fit()'s checkpoints. What a writer killed mid-write left
  // (a staging directory, a partial archive and its journal) belongs to an older step than this
  // one, whose write completed: it goes too.
  if (!remote && !opt.checkpoint_dir.empty() &&
      target.parent_path() == fs::path(opt.checkpoint_dir)) {
    std::vector<fs::path> all;
    const auto done = target.filename().string();
    for (const auto& e : fs::directory_iterator(opt.checkpoint_dir)) {
      const auto name = e.path().filename().string();
      if (is_checkpoint_name(name)) {
        all.push_back(e.path());
      } else if (name.starts_with("ckpt-") && name < done &&
                 (name.ends_with(".nubo.part") || name.ends_with(".nubo.journal") ||
                  name.find(".nubo.staging-") != std::string::npos)) {
        fs::remove_all(e.path());
      }
    }
    std::sort(all.begin(), all.end());
    const auto keep = static_cast<std::size_t>(opt.checkpoint_keep);
    for (std::size_t i = 0; i + keep < all.size(); ++i) fs::remove(all[i]);
  }
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          static_cast<double>(packed.bytes_stored)};
}

void DataParallelTrainer::Impl::count_checkpoint(const CheckpointWrite& w) {
  write_s += w.seconds;
  checkpoint_bytes = w.bytes;
  ++checkpoints;
  if (opt.checkpoint_auto) plan_interval(w.seconds);
}

void DataParallelTrainer::Impl::plan_interval(double delta) {
  if (planned_delta_s > 0 && std::abs(delta - planned_delta_s) <= 0.25 * planned_delta_s) return;
  // The waste is Daly's for a long run (a thousand intervals): a fraction of the work.
  const double interval = cost::checkpoint_plan(0, delta, opt.mtbi_s, 0).daly_interval_s;
  const auto cp = cost::checkpoint_plan(1000 * interval, delta, opt.mtbi_s, 0);
  log::info("checkpoint interval " + format_duration(interval) +
            " (Daly: " + format_duration(delta) + " to write one, an interruption every " +
            format_duration(opt.mtbi_s) + " on average; expected waste " +
            waste_text(cp.overhead_fraction()) + ")");
  planned_interval_s = interval;
  planned_delta_s = delta;
  expected_waste = cp.overhead_fraction();
}

void DataParallelTrainer::Impl::reap_background_write() {
  if (background_write.valid() &&
      background_write.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    finish_background_write();
}

void DataParallelTrainer::Impl::finish_background_write() {
  if (!background_write.valid()) return;
  auto write = std::move(background_write);
  count_checkpoint(write.get());  // rethrows the write's error
}

void DataParallelTrainer::Impl::save_in_background(const std::string& path) {
  OptimizerState st = gather_state();
  if (holds_rank0()) {
    finish_background_write();  // at most one in flight: the last snapshot is free again
    if (!spare_snapshot || spare_snapshot.use_count() > 1)
      spare_snapshot = std::make_shared<CheckpointSnapshot>();
    snapshot(path, std::move(st), *spare_snapshot);
    ++taken;
    background_write = std::async(std::launch::async,
                                  [snap = std::shared_ptr<const CheckpointSnapshot>(spare_snapshot),
                                   o = opt] { return write_checkpoint(*snap, o); });
  }
  last_checkpoint = std::chrono::steady_clock::now();
}

void DataParallelTrainer::save(const std::string& path) {
  Impl& m = *impl_;
  OptimizerState st = m.gather_state();  // every process takes part: the state may be sharded
  if (m.holds_rank0()) {
    m.finish_background_write();  // an older checkpoint never lands after this one
    ++m.taken;
    CheckpointSnapshot snap;
    m.snapshot(path, std::move(st), snap);
    m.count_checkpoint(write_checkpoint(snap, m.opt));
  }
  if (!m.single_process()) m.team.run([](Worker& w) { w.barrier(); });
  m.last_checkpoint = std::chrono::steady_clock::now();
}

void DataParallelTrainer::load(const std::string& path) {
  Impl& m = *impl_;
  std::error_code ec;
  if (!store::is_url(path) && !fs::is_regular_file(path, ec))
    throw Error(Errc::not_found, path + ": no such checkpoint");
  transfer::Reader r(path);
  const transfer::Entry* e = r.find("meta.json");
  if (!e || e->size > (1u << 20))
    throw Error(Errc::corrupt, path + ": not a nubo checkpoint (no meta.json)");
  auto bytes = r.read("meta.json", 0, static_cast<std::size_t>(e->size));
  nlohmann::json meta;
  std::vector<std::size_t> layers;
  std::string optimizer, rng_state;
  std::uint64_t step = 0, position = 0, rows = 0, batch = 0;
  int epoch = 0;
  try {  // a checkpoint that is not well-formed is corrupt (resume falls back), not bad usage
    meta = json::parse({reinterpret_cast<const char*>(bytes.data()), bytes.size()},
                       path + ": meta.json");
  } catch (const Error& x) {
    throw Error(Errc::corrupt, x.what());
  }
  try {
    if (meta.at("format").get<std::string>() != kFormat)
      throw Error(Errc::corrupt, path + ": checkpoint format '" +
                                     meta.at("format").get<std::string>() + "', expected " +
                                     kFormat);
    // Every number checked before it is converted: 1e30 into an int, or -1 into an unsigned, is
    // a malformed file, not a value.
    const auto what = [&](const char* name) { return path + ": meta.json: " + name; };
    if (!meta.at("layers").is_array()) throw Error(Errc::corrupt, what("layers") + ": not a list");
    for (const auto& width : meta.at("layers"))
      layers.push_back(json::number<std::size_t>(width, what("layers")));
    optimizer = meta.at("optimizer").get<std::string>();
    rng_state = meta.at("rng_state").get<std::string>();
    step = json::number<std::uint64_t>(meta.at("step"), what("step"));
    epoch = json::number<int>(meta.at("epoch"), what("epoch"), 0);
    position = json::number<std::uint64_t>(meta.at("position"), what("position"));
    rows = json::number<std::uint64_t>(meta.at("dataset").at("rows"), what("dataset.rows"));
    batch = json::number<std::uint64_t>(meta.at("global_batch"), what("global_batch"));
  } catch (const nlohmann::json::exception& x) {
    throw Error(Errc::corrupt, path + ": meta.json is malformed: " + x.what());
  } catch (const Error& x) {
    if (x.code() == Errc::corrupt) throw;
    throw Error(Errc::corrupt, x.what());
  }
  if (layers != m.layout.widths)
    throw Error(Errc::invalid_argument, path + ": a checkpoint of another model: layers " +
                                            widths_text(layers) + ", this trainer has " +
                                            widths_text(m.layout.widths));
  const std::string ours = m.opt.optimizer == Optimizer::adam ? "adam" : "sgd";
  if (optimizer != ours)
    throw Error(Errc::invalid_argument, path + ": the checkpoint's optimizer is " + optimizer +
                                            ", this trainer uses " + ours);
  if (rows != m.train->size() || batch != m.opt.global_batch)
    throw Error(Errc::invalid_argument,
                path + ": the checkpoint was taken with " + std::to_string(rows) +
                    " training rows and a global batch of " + std::to_string(batch) +
                    "; this trainer has " + std::to_string(m.train->size()) + " and " +
                    std::to_string(m.opt.global_batch) + " (resuming exactly needs the same)");
  // Another team: the replicated state resumes as it is, but the run is no longer the exact
  // repeat of one on the writer's team (the reduction order differs).
  if (meta.contains("team") && meta["team"].is_object() && meta["team"] != team_of(m.team)) {
    const std::string line = path + ": written by " + team_text(meta["team"]) + ", resuming on " +
                             team_text(team_of(m.team));
    if (m.opt.strict_resume)
      throw Error(Errc::invalid_argument,
                  line + "; refused (strict_resume: resume on the same team for an exact repeat)");
    log::warn(line + " (the run continues, not bit for bit as on the original team)");
  }
  // The step, the epoch and the data position follow from each other (run_step advances them
  // together): where they do not, the checkpoint was not written by a run of this data and
  // batch, whatever else it says. It is corrupt, as one whose RNG state does not parse is, and
  // an older one is used instead; a run never "resumes" past its end or mid-row.
  const auto spe = m.steps_per_epoch();
  const bool consistent =
      epoch >= 0 ? position <= rows && step == static_cast<std::uint64_t>(epoch) * spe +
                                                   (position + batch - 1) / batch
                 : epoch == -1 && step == 0 && position == 0;
  if (!consistent)
    throw Error(Errc::corrupt,
                path + ": step " + std::to_string(step) + ", epoch " + std::to_string(epoch) +
                    " and data position " + std::to_string(position) + " do not fit together (" +
                    std::to_string(rows) + " rows, " + std::to_string(spe) + " steps an epoch)");
  std::mt19937_64 rng;
  if (epoch >= 0) {
    std::istringstream s(rng_state);
    s >> rng;
    if (s.fail()) throw Error(Errc::corrupt, path + ": the RNG state does not parse");
  }
  const std::size_t states = m.replicas.at(0)->optimizer_states();
  std::vector<std::vector<float>> values;
  const char* names[] = {"params.bin", "state1.bin", "state2.bin"};
  for (std::size_t i = 0; i <= states; ++i)
    values.push_back(read_floats(r, path, names[i], m.layout.total));
  // Everything was read and checked: only now change the trainer.
  if (epoch >= 0) {
    m.restore_epoch(epoch, rng, static_cast<std::size_t>(position));
  } else {  // taken before the first step
    m.rng.seed(m.opt.seed);
    m.epoch = -1;
    m.position = 0;
  }
  m.step = step;
  OptimizerState st;
  st.slice_sizes = {m.layout.total};
  st.kind = static_cast<int>(train::sharded_options(m.opt).optimizer);
  st.master = std::move(values[0]);
  st.m = std::move(values[1]);
  if (values.size() > 2) st.v = std::move(values[2]);
  // Checkpoints written before these fields: every step was an update at scale 1.
  const auto optional = [&](const char* key, auto fallback) {
    const auto it = meta.find(key);
    return it == meta.end() ? fallback
                            : json::number<decltype(fallback)>(*it, path + ": meta.json: " + key);
  };
  try {
    st.step = optional("optimizer_step", step);
    st.loss_scale = optional("loss_scale", 1.0);
    st.clean_steps = optional("clean_steps", std::int64_t{0});
  } catch (const Error& x) {
    throw Error(Errc::corrupt, x.what());
  }
  m.team.run(
      [&](Worker& w) { m.replicas[static_cast<std::size_t>(w.local_rank())]->load_state(st); });
}

void DataParallelTrainer::Impl::set_aside_earlier_run() {
  const std::string& dir = opt.checkpoint_dir;
  if (!holds_rank0()) return;
  if (store::is_url(dir)) {
    const auto prefix = prefix_of(dir);
    const auto earlier =
        remote_checkpoints(*store::open(prefix, store::Operation::checkpoint), prefix);
    if (!earlier.empty())
      throw Error(Errc::invalid_argument,
                  "fresh: " + prefix.text() + " holds " + std::to_string(earlier.size()) +
                      " checkpoints of an earlier run (the newest " + earlier.back() +
                      "); the new run's would be pruned against them: delete them, or give "
                      "another prefix");
    return;
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> earlier;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_checkpoint_name(e.path().filename().string())) earlier.push_back(e.path());
  if (earlier.empty()) return;
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  auto aside = fs::path(dir) / (std::string("earlier-") + stamp);
  for (int n = 2; fs::exists(aside); ++n)
    aside = fs::path(dir) / (std::string("earlier-") + stamp + "-" + std::to_string(n));
  fs::create_directory(aside);
  for (const auto& p : earlier) fs::rename(p, aside / p.filename());
  log::warn("fresh: " + std::to_string(earlier.size()) + " checkpoints of an earlier run in " +
            dir + " were moved to " + aside.string());
}

std::string DataParallelTrainer::resume_latest() {
  const std::string& dir = impl_->opt.checkpoint_dir;
  if (dir.empty()) throw Error(Errc::invalid_argument, "resume: no checkpoint_dir was set");
  std::vector<std::string> all;
  if (store::is_url(dir)) {
    const auto prefix = prefix_of(dir);
    all = remote_checkpoints(*store::open(prefix, store::Operation::checkpoint), prefix);
  } else {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return "";
    for (const auto& e : fs::directory_iterator(dir))
      if (is_checkpoint_name(e.path().filename().string())) all.push_back(e.path().string());
    std::sort(all.begin(), all.end());  // zero-padded step numbers
  }
  for (auto it = all.rbegin(); it != all.rend(); ++it) {  // newest first
    try {
      transfer::verify(*it);
      load(*it);
      return *it;
    } catch (const Error& x) {
      // Another model's checkpoint is the caller's mistake, not damage: say so.
      if (x.code() == Errc::invalid_argument) throw;
      log::warn("resume: checkpoint " + *it + " is unusable (" + x.what() +
                "); falling back to the previous one");
    }
  }
  return "";
}

}  // namespace nubo
