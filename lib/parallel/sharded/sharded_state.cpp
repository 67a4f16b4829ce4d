// ShardedOptimizer's logical state: gathered from the shards (whatever the world size), spread
// back into the shards of another world size, and its file form: "NUBOOPT1", the header's
// length (u64) and JSON, the vectors (master, then the rule's state) as little-endian f32 without
// padding, and a CRC-32C of everything before it. Written to PATH.part and renamed, so a file is
// whole or absent.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/crc32c.hpp"
#include "common/json.hpp"
#include "common/small_file.hpp"
#include "nubo/error.hpp"
#include "parallel/sharded/sharded_impl.hpp"

namespace nubo {
namespace {

constexpr char kMagic[8] = {'N', 'U', 'B', 'O', 'O', 'P', 'T', '1'};
constexpr const char* kFormat = "nubo-optimizer/1";
constexpr std::uint64_t kMaxHeader = 1u << 20;

std::string shape_text(const std::vector<std::size_t>& sizes) {
  std::size_t total = 0;
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
    total += sizes[i];
  }
  return s + "] (" + std::to_string(total) + " parameters)";
}

const char* kind_name(int kind) {
  switch (kind) {
    case 0:
      return "sgd";
    case 1:
      return "adam";
    case 2:
      return "adamw";
    default:
      return "?";
  }
}

int kind_from_name(const std::string& name, const std::string& path) {
  for (int k = 0; k < 3; ++k)
    if (name == kind_name(k)) return k;
  throw Error(Errc::corrupt, path + ": unknown optimizer rule \"" + name + "\"");
}

std::size_t state_vectors(int kind) {
  return kind == 0 ? 1 : 2;  // SGD's velocity; Adam's m and v
}

// "" when the state is one an update could have made, else the first value that is not: a
// weight or moment that is not finite, a negative second moment (Adam's v is a mean of
// squares), a loss scale that is not a positive float, a negative count.
std::string implausible_values(const OptimizerState& st) {
  const auto first_bad = [](const std::vector<float>& v, const char* name,
                            bool non_negative) -> std::string {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]) || (non_negative && v[i] < 0))
        return std::string(name) + "[" + std::to_string(i) + "] is " + std::to_string(v[i]);
    return {};
  };
  for (auto why : {first_bad(st.master, "master", false), first_bad(st.m, "m", false),
                   first_bad(st.v, "v", st.kind != 0)})
    if (!why.empty()) return why;
  if (!(st.loss_scale > 0 && st.loss_scale <= std::numeric_limits<float>::max()))
    return "its loss scale " + std::to_string(st.loss_scale) + " is not a positive float";
  if (st.clean_steps < 0)
    return "its clean steps count " + std::to_string(st.clean_steps) + " is negative";
  return {};
}

}  // namespace

void ShardedOptimizer::Impl::publish_parameters() {
  if (!plan.state_sharded) {
    if (!master.empty()) w.cast(master, params_view);
    return;
  }
  for (std::size_t i = 0; i < layout.slices(); ++i) {
    DeviceBuffer mast = master_of(i);
    if (plan.parameters_sharded) {
      DeviceBuffer p = param_shard.slice(layout.shard_offset(i), layout.shard(i));
      w.cast(mast, p);
      gathering[i].wait();
      gathered[i] = {};
      continue;
    }
    DeviceBuffer g = grad_shard.slice(layout.shard_offset(i), layout.shard(i));
    w.cast(mast, g);
    DeviceBuffer all = params_view.slice(layout.offset(i), layout.padded(i));
    w.all_gather(g, all);
  }
}

OptimizerState ShardedOptimizer::state() {
  Impl& s = *impl_;
  if (!s.in_flight.empty())
    detail::sharded_refusal("state: gradients are being reduced; call step() first");
  OptimizerState st;
  const ShardLayout& L = s.layout;
  for (std::size_t i = 0; i < L.slices(); ++i) st.slice_sizes.push_back(L.size(i));
  st.kind = static_cast<int>(s.o.optimizer);
  st.step = s.steps;
  st.loss_scale = s.scale;
  st.clean_steps = s.clean_steps;
  const auto collect = [&](DeviceBuffer& vec, std::vector<float>& out) {
    out.resize(L.parameters());
    std::size_t at = 0;
    for (std::size_t i = 0; i < L.slices(); ++i) {
      const std::size_t n = L.size(i);
      if (!s.plan.state_sharded) {
        vec.read(out.data() + at, n * sizeof(float), L.offset(i) * sizeof(float));
      } else {
        DeviceBuffer whole = s.w.alloc(DType::f32, L.padded(i));
        DeviceBuffer mine = vec.slice(L.shard_offset(i), L.shard(i));
        s.w.all_gather(mine, whole);
        whole.read(out.data() + at, n * sizeof(float));
      }
      at += n;
    }
  };
  collect(!s.plan.state_sharded && s.master.empty() ? s.params_view : s.master, st.master);
  collect(s.m, st.m);
  if (!s.v.empty()) collect(s.v, st.v);
  return st;
}

void ShardedOptimizer::load_state(const OptimizerState& st) {
  Impl& s = *impl_;
  const ShardLayout& L = s.layout;
  if (!s.in_flight.empty())
    detail::sharded_refusal("load_state: gradients are being reduced; call step() first");
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < L.slices(); ++i) mine.push_back(L.size(i));
  // One logical vector: how it is cut into slices may differ (a trainer's buckets), its length
  // may not.
  std::size_t theirs = 0;
  for (std::size_t n : st.slice_sizes) theirs += n;
  if (theirs != L.parameters())
    detail::sharded_refusal("the state is of a model of slices " + shape_text(st.slice_sizes) +
                            " but this optimizer's is " + shape_text(mine));
  const int kind = static_cast<int>(s.o.optimizer);
  if (state_vectors(st.kind) != state_vectors(kind))
    detail::sharded_refusal(std::string("the state is of ") + kind_name(st.kind) +
                            " but this optimizer runs " + kind_name(kind) +
                            ", whose state differs");
  const std::size_t P = L.parameters();
  if (st.master.size() != P || st.m.size() != P || st.v.size() != (kind == 0 ? 0 : P))
    detail::sharded_refusal("the state's vectors do not hold " + std::to_string(P) +
                            " values each");
  if (const auto why = implausible_values(st); !why.empty())
    detail::sharded_refusal("the state is not one an update makes: " + why);
  const auto spread = [&](DeviceBuffer& vec, const std::vector<float>& src) {
    s.w.fill(vec, 0.0);  // the padding
    std::size_t at = 0;
    for (std::size_t i = 0; i < L.slices(); ++i) {
      const std::size_t n = L.size(i);
      if (!s.plan.state_sharded) {
        vec.write(src.data() + at, n * sizeof(float), L.offset(i) * sizeof(float));
      } else {
        // This rank's part of the slice: [r * shard, min((r + 1) * shard, n)).
        const std::size_t first = static_cast<std::size_t>(s.rank) * L.shard(i);
        if (first < n) {
          const std::size_t count = std::min(L.shard(i), n - first);
          vec.write(src.data() + at + first, count * sizeof(float),
                    L.shard_offset(i) * sizeof(float));
        }
      }
      at += n;
    }
  };
  if (!s.plan.state_sharded && s.master.empty()) {
    spread(s.params_view, st.master);
  } else {
    spread(s.master, st.master);
  }
  spread(s.m, st.m);
  if (!s.v.empty()) spread(s.v, st.v);
  s.steps = st.step;
  if (s.scaling) s.scale = static_cast<float>(st.loss_scale);
  s.clean_steps = st.clean_steps;
  s.publish_parameters();
}

void ShardedOptimizer::save(const std::string& path) {
  const OptimizerState st = state();
  Impl& s = *impl_;
  if (s.rank == 0) {
    const nlohmann::json header = {{"format", kFormat},           {"kind", kind_name(st.kind)},
                                   {"slices", st.slice_sizes},    {"step", st.step},
                                   {"loss_scale", st.loss_scale}, {"clean_steps", st.clean_steps}};
    const std::string h = header.dump();
    std::string bytes(kMagic, sizeof kMagic);
    const std::uint64_t hl = h.size();
    bytes.append(reinterpret_cast<const char*>(&hl), sizeof hl);
    bytes += h;
    const auto append = [&](const std::vector<float>& v) {
      bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    };
    append(st.master);
    append(st.m);
    append(st.v);
    const std::uint32_t crc = crc32c::extend(0, bytes.data(), bytes.size());
    bytes.append(reinterpret_cast<const char*>(&crc), sizeof crc);
    // Whole or not at all, and never through a link planted beside it.
    const auto slash = path.rfind('/');
    files::write_small_file(slash == std::string::npos ? "." : path.substr(0, slash + 1),
                            slash == std::string::npos ? path : path.substr(slash + 1), bytes, 0644,
                            "optimizer state");
  }
  s.w.barrier();
}

void ShardedOptimizer::load(const std::string& path) {
  // A regular file only, checked on its descriptor: a FIFO once hung the load in its open.
  auto file = files::open_regular_file_if_present(path, "optimizer state");
  if (!file) throw Error(Errc::not_found, path + ": cannot open the optimizer state");
  const std::uint64_t size = file->size();
  const auto corrupt = [&](const std::string& why) {
    return Error(Errc::corrupt, path + ": not a whole optimizer state: " + why);
  };
  std::uint64_t at = 0;
  const auto read = [&](void* out, std::size_t n, const char* what) {
    if (file->read_at(out, n, at) != n) throw corrupt(std::string("it is short (") + what + ")");
    at += n;
  };
  char magic[8];
  std::uint64_t hl = 0;
  if (size < sizeof magic + sizeof hl + 4) throw corrupt("it does not start with NUBOOPT1");
  read(magic, sizeof magic, "magic");
  if (std::memcmp(magic, kMagic, sizeof magic) != 0)
    throw corrupt("it does not start with NUBOOPT1");
  read(&hl, sizeof hl, "header length");
  if (hl > kMaxHeader || hl > size) throw corrupt("its header length is " + std::to_string(hl));
  std::string h(hl, '\0');
  read(h.data(), h.size(), "header");
  OptimizerState st;
  try {
    // The one JSON reader, and every number checked before it is converted: a step of -1 or
    // 1e30, a fractional slice, a key given twice were all once taken.
    const auto header = json::parse(h, path + ": its header");
    if (!header.is_object()) throw corrupt("its header is not an object");
    const auto field = [&](const char* name) -> const nlohmann::json& {
      const auto it = header.find(name);
      if (it == header.end()) throw corrupt(std::string("its header has no \"") + name + "\"");
      return *it;
    };
    const auto what = [&](const char* name) { return path + ": its header's " + name; };
    if (!field("format").is_string() || field("format").get<std::string>() != kFormat)
      throw corrupt("format " + field("format").dump() + ", expected " + kFormat);
    if (!field("kind").is_string()) throw corrupt("its kind is not a name");
    st.kind = kind_from_name(field("kind").get<std::string>(), path);
    const auto& slices = field("slices");
    if (!slices.is_array()) throw corrupt("its slices are not a list");
    for (const auto& n : slices)
      st.slice_sizes.push_back(json::number<std::size_t>(n, what("slices")));
    st.step = json::number<std::uint64_t>(field("step"), what("step"), 0, std::uint64_t{1} << 53);
    st.loss_scale =
        json::number<double>(field("loss_scale"), what("loss_scale"),
                             std::numeric_limits<float>::min(), std::numeric_limits<float>::max());
    st.clean_steps = json::number<std::int64_t>(field("clean_steps"), what("clean_steps"), 0);
  } catch (const Error& e) {
    if (e.code() == Errc::corrupt) throw;
    throw Error(Errc::corrupt, e.what());
  }
  // The size the header implies, checked against the file before anything is allocated.
  std::uint64_t P = 0;
  for (std::size_t n : st.slice_sizes) {
    if (n > (std::numeric_limits<std::uint64_t>::max() >> 4) - P) throw corrupt("a slice's size");
    P += n;
  }
  const std::uint64_t vectors = 1 + state_vectors(st.kind);
  const std::uint64_t body = sizeof magic + sizeof hl + hl;
  if (P > (size - body) / (vectors * sizeof(float)) ||
      body + vectors * P * sizeof(float) + 4 != size)
    throw corrupt("it holds " + std::to_string(size) + " bytes, which " +
                  std::to_string(st.slice_sizes.size()) + " slice(s) of " + std::to_string(P) +
                  " parameters do not explain");
  const auto read_vec = [&](std::vector<float>& v) {
    v.resize(P);
    read(v.data(), P * sizeof(float), "its vectors");
  };
  read_vec(st.master);
  read_vec(st.m);
  if (st.kind != 0) read_vec(st.v);
  std::uint32_t stored = 0;
  read(&stored, sizeof stored, "its checksum");
  // The checksum over what was read, in the order it was written.
  std::uint32_t crc = crc32c::extend(0, magic, sizeof magic);
  crc = crc32c::extend(crc, &hl, sizeof hl);
  crc = crc32c::extend(crc, h.data(), h.size());
  for (const auto* v : {&st.master, &st.m, &st.v})
    crc = crc32c::extend(crc, v->data(), v->size() * sizeof(float));
  if (crc != stored) throw corrupt("its checksum does not match (the file is damaged)");
  // A checksum says the file is whole, not that it is a state: values no update makes are
  // refused too.
  if (const auto why = implausible_values(st); !why.empty()) throw corrupt(why);
  load_state(st);
}

}  // namespace nubo
