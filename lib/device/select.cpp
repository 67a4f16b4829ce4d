// DeviceReport::select: the best-connected group of GPUs that meets a request.
//
// A group is as fast as its slowest pair in collectives (a ring all-reduce runs at the speed
// of its weakest hop), so groups are ranked by their weakest link first and by the sum of
// their links second; ties go to the lowest indices, which keeps the choice stable.
#include <algorithm>
#include <numeric>

#include "common/text.hpp"
#include "device/backend/gpu_catalog.hpp"
#include "nubo/device.hpp"
#include "nubo/error.hpp"
#include "nubo/units.hpp"

namespace nubo {
namespace {

// Approximate bidirectional GB/s of a link; only the order matters much.
double link_score(const Link& l, const Device& a) {
  switch (l.kind) {
    case LinkKind::self:
      return 1e9;
    case LinkKind::nvlink: {
      double per_link = 25;  // NVLink 2 per-link bidirectional rate when the model is unknown
      if (const auto* m = detail::GpuCatalog::builtin().find(a.model); m && m->nvlink_links)
        per_link = m->nvlink_gbs / m->nvlink_links;
      return per_link * l.nvlinks;
    }
    case LinkKind::pix:
      return 24;
    case LinkKind::pxb:
      return 20;
    case LinkKind::phb:
      return 16;
    case LinkKind::node:
      return 12;
    case LinkKind::sys:
      return 8;
    case LinkKind::unknown:
      break;
  }
  return 1;
}

struct Score {
  double weakest = 1e18, total = 0;
  bool operator>(const Score& o) const {
    return weakest != o.weakest ? weakest > o.weakest : total > o.total;
  }
};

Score score_group(const std::vector<int>& g, const std::vector<std::vector<double>>& bw) {
  Score s;
  for (std::size_t x = 0; x < g.size(); ++x)
    for (std::size_t y = x + 1; y < g.size(); ++y) {
      s.weakest = std::min(s.weakest, bw[g[x]][g[y]]);
      s.total += bw[g[x]][g[y]];
    }
  return s;
}

// Exhaustive search over combinations while they are few, greedy growth from every seed after.
std::vector<int> best_group(const std::vector<int>& pool, int k,
                            const std::vector<std::vector<double>>& bw) {
  const int n = static_cast<int>(pool.size());
  double combos = 1;
  for (int i = 0; i < k; ++i) combos = combos * (n - i) / (i + 1);
  std::vector<int> best;
  Score best_score{-1, -1};
  auto consider = [&](std::vector<int> g) {
    std::sort(g.begin(), g.end());
    Score s = score_group(g, bw);
    if (s > best_score || (!(best_score > s) && g < best)) {
      best_score = s;
      best = std::move(g);
    }
  };
  if (combos <= 200000) {
    std::vector<int> idx(k);
    std::iota(idx.begin(), idx.end(), 0);
    for (;;) {
      std::vector<int> g;
      for (int i : idx) g.push_back(pool[i]);
      consider(g);
      int i = k - 1;
      while (i >= 0 && idx[i] == n - k + i) --i;
      if (i < 0) break;
      ++idx[i];
      for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
    }
    return best;
  }
  for (int seed : pool) {
    std::vector<int> g{seed};
    while (static_cast<int>(g.size()) < k) {
      int pick = -1;
      Score pick_score{-1, -1};
      for (int c : pool) {
        if (std::find(g.begin(), g.end(), c) != g.end()) continue;
        auto trial = g;
        trial.push_back(c);
        Score s = score_group(trial, bw);
        if (s > pick_score) {
          pick_score = s;
          pick = c;
        }
      }
      g.push_back(pick);
    }
    consider(g);
  }
  return best;
}

}  // namespace

std::vector<Device> DeviceReport::select(const SelectRequest& req) const {
  if (req.count < 0)
    throw Error(Errc::invalid_argument,
                "select: count must be 0 (all) or positive, got " + std::to_string(req.count));
  std::vector<int> pool;
  std::vector<std::string> excluded;
  for (const auto& d : devices) {
    std::string why;
    const auto left_out = std::find_if(req.exclude.begin(), req.exclude.end(),
                                       [&](const LeftOut& e) { return e.device == d.index; });
    if (left_out != req.exclude.end())
      why = left_out->reason.empty() ? "left out by the request" : left_out->reason;
    else if (d.memory_total < req.min_memory)
      why = format_bytes(static_cast<double>(d.memory_total)) + " of memory < " +
            format_bytes(static_cast<double>(req.min_memory));
    else if (std::pair(d.cc_major, d.cc_minor) < std::pair(req.min_cc_major, req.min_cc_minor))
      why = "compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
            " < " + std::to_string(req.min_cc_major) + "." + std::to_string(req.min_cc_minor);
    if (why.empty())
      pool.push_back(d.index);
    else
      excluded.push_back("device " + std::to_string(d.index) + " (" + d.name + "): " + why);
  }
  int k = req.count == 0 ? static_cast<int>(pool.size()) : req.count;
  if (k == 0 || k > static_cast<int>(pool.size())) {
    std::string msg = "select: asked for " +
                      (req.count == 0 ? std::string("every qualifying GPU")
                                      : std::to_string(req.count) + " GPU(s)") +
                      ", but " + std::to_string(pool.size()) + " of " +
                      std::to_string(devices.size()) + " qualify";
    if (!excluded.empty()) msg += "; excluded: " + text::join(excluded, "; ");
    if (devices.empty()) {
      msg += "; no GPU was found";
      for (const auto& d : diagnoses)
        if (d.severity == Severity::error) msg += "; " + d.message + " " + d.advice;
    }
    throw Error(Errc::unavailable, msg);
  }
  std::vector<std::vector<double>> bw(devices.size(), std::vector<double>(devices.size()));
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < devices.size(); ++j) bw[i][j] = link_score(links[i][j], devices[i]);
  std::vector<Device> out;
  for (int i : best_group(pool, k, bw)) out.push_back(devices[i]);
  return out;
}

}  // namespace nubo
