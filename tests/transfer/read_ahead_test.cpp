// Reading ahead of a remote archive: the windows ReadAhead announces tile the records in order,
// within the source's window and bytes-ahead bound, starting small; reads served from windows
// that coalesce many records come back whole; and the window sizes follow the latency and
// bandwidth a source measured (store/fetch_plan.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "helpers.hpp"
#include "nubo/transfer.hpp"
#include "transfer/archive/archive_reader.hpp"
#include "transfer/byte_source.hpp"
#include "transfer/format/format.hpp"
#include "transfer/store/fetch_plan.hpp"
#include "transfer/store/object_source.hpp"

namespace xfer = nubo::transfer;
namespace store = nubo::store;
using nubo_test::TempDir;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// Small files (bundled), empty ones, and large files of many chunks, compressible and not.
void make_tree(const std::string& root) {
  for (int i = 0; i < 400; ++i)
    nubo_test::write_file(root + "/small/f" + std::to_string(i),
                          nubo_test::text_bytes(static_cast<std::size_t>(i * 37 % 9000),
                                                static_cast<std::uint64_t>(i)));
  nubo_test::write_file(root + "/empty", "");
  for (int i = 0; i < 3; ++i) {
    nubo_test::write_file(root + "/large/random" + std::to_string(i),
                          nubo_test::random_bytes(3 * kMiB + 12345, 100 + i));
    nubo_test::write_file(root + "/large/text" + std::to_string(i),
                          nubo_test::text_bytes(2 * kMiB + 777, 200 + i));
  }
}

// A local archive that records what it is told will be needed, and asks for a given read-ahead.
class RecordingSource : public xfer::ByteSource {
 public:
  RecordingSource(const std::string& path, xfer::Prefetch plan)
      : inner_(xfer::open_source(path)), plan_(plan) {}
  const std::string& name() const override { return inner_->name(); }
  std::uint64_t size() const override { return inner_->size(); }
  std::size_t pread(xfer::MutableBytes out, std::uint64_t offset) const override {
    return inner_->pread(out, offset);
  }
  void will_need(std::uint64_t offset, std::uint64_t size) const override {
    announced.push_back({offset, size});
  }
  xfer::Prefetch prefetch() const override { return plan_; }

  struct Range {
    std::uint64_t offset, size;
  };
  mutable std::vector<Range> announced;

 private:
  std::unique_ptr<xfer::ByteSource> inner_;
  xfer::Prefetch plan_;
};

struct Packed {
  TempDir dir;
  std::string archive;
  Packed() : archive(dir / "a.nubo") {
    make_tree(dir / "src");
    xfer::pack({dir / "src"}, archive,
               {.codec = xfer::Codec::zstd, .chunk_size = 256 << 10, .sync = false});
  }
};

// Goes through the archive as unpack and verify do, checking after each record that the bytes
// announced and not yet passed stay within the bound.
void read_in_order(const xfer::ArchiveFile& a, const RecordingSource& source,
                   const xfer::Prefetch& plan) {
  xfer::ReadAhead ahead(a);
  const auto& index = a.index();
  std::uint64_t last_bundle = std::numeric_limits<std::uint64_t>::max();
  auto check_bound = [&](std::uint64_t at) {
    std::uint64_t pending = 0;
    for (const auto& r : source.announced)
      if (r.offset + r.size > at) pending += r.offset + r.size - std::max(r.offset, at);
    // A window is announced while a whole one fits, and one record may exceed a window.
    CHECK(pending <= plan.ahead + plan.window + a.chunk_size() + xfer::ReadAhead::kGap);
  };
  for (std::size_t e = 0; e < index.entries.size(); ++e) {
    const auto& entry = index.entries[e];
    if (entry.bundled) {
      if (entry.first_chunk == last_bundle) continue;
      last_bundle = entry.first_chunk;
      ahead.bundle(e);
      check_bound(index.chunks[entry.first_chunk].record_offset);
      continue;
    }
    for (std::uint64_t k = 0; k < entry.chunk_count; ++k) {
      ahead.chunk(e, k);
      check_bound(index.chunks[entry.first_chunk + k].record_offset);
    }
  }
}

}  // namespace

TEST_CASE("read-ahead windows tile the records in order, start small and stay within bounds") {
  Packed p;
  for (const xfer::Prefetch plan : {xfer::Prefetch{1 * kMiB, 4 * kMiB},
                                    xfer::Prefetch{2 * kMiB, 32 * kMiB}, xfer::Prefetch{}}) {
    CAPTURE(plan.window, plan.ahead);
    auto source = std::make_shared<RecordingSource>(p.archive, plan);
    const auto a = xfer::ArchiveFile::open(source);
    source->announced.clear();  // what opening read is not read ahead
    read_in_order(a, *source, plan);

    const auto& w = source->announced;
    REQUIRE(w.size() >= 2);
    // The first record is read as it is met; the windows follow it, contiguous up to the
    // index: every gap (entry and end records) belongs to a window, no byte is asked for twice.
    const auto& chunks = a.index().chunks;
    CHECK(w.front().offset == chunks[1].record_offset);
    for (std::size_t i = 0; i + 1 < w.size(); ++i) {
      CAPTURE(i);
      CHECK(w[i].offset + w[i].size == w[i + 1].offset);
    }
    CHECK(w.back().offset + w.back().size == a.data_end());
    // Every record lies inside one window: a read never spans two.
    for (std::size_t k = 1; k < chunks.size(); ++k) {
      const auto& c = chunks[k];
      const auto end = c.record_offset + xfer::format::kRecordHeaderSize + c.stored_size;
      std::size_t holding = 0;
      for (const auto& r : w)
        if (c.record_offset >= r.offset && c.record_offset < r.offset + r.size) {
          ++holding;
          CHECK(end <= r.offset + r.size);
        }
      CHECK(holding == 1);
    }
    // Windows stay within the plan, but for one record larger than a window; the first start
    // at kFirstWindow and double.
    const std::uint64_t record_max = a.chunk_size() + 2 * xfer::ReadAhead::kGap;
    for (std::size_t i = 0; i < w.size(); ++i) {
      CAPTURE(i);
      const auto ramp = i < 16 ? xfer::ReadAhead::kFirstWindow << i : plan.window;
      CHECK(w[i].size <= std::max(std::min(plan.window, ramp), record_max) + xfer::ReadAhead::kGap);
    }
    CHECK(w[0].size <= xfer::ReadAhead::kFirstWindow + record_max);
  }
}

TEST_CASE("reads served from coalesced windows come back whole across record boundaries") {
  Packed p;
  // Through a store URL, the archive is read by the object source: ranges announced ahead,
  // coalesced over many records, fetched by its threads and served to reads by slices.
  auto unpacked = xfer::unpack("file://" + p.archive, p.dir / "out", {.sync = false});
  CHECK(unpacked.files == 407);
  std::string why;
  CHECK(nubo_test::same_tree(p.dir / "src", p.dir / "out/src", &why));
  INFO(why);
  auto verified = xfer::verify("file://" + p.archive, {});
  CHECK(verified.bytes == unpacked.bytes);
}

TEST_CASE("the read-ahead follows the measured latency and bandwidth") {
  // Loopback: 0.5 ms, 400 MB/s a connection: the smallest windows, 32 MiB ahead.
  auto loopback = store::plan_prefetch({0.0005, 400e6}, 4);
  CHECK(loopback.window == 2 * kMiB);
  CHECK(loopback.ahead == 32 * kMiB);
  // A store across a region: 30 ms, 90 MB/s: 32 MiB windows, 128 MiB ahead (the bound).
  auto far = store::plan_prefetch({0.030, 90e6}, 4);
  CHECK(far.window == 32 * kMiB);
  CHECK(far.ahead == 128 * kMiB);
  // In between: 10 ms at 50 MB/s wants 4 MB windows: 4 MiB, four per connection.
  auto mid = store::plan_prefetch({0.010, 50e6}, 4);
  CHECK(mid.window == 4 * kMiB);
  CHECK(mid.ahead == 64 * kMiB);
  // Nothing measured, or nonsense: the bounds, never zero.
  for (const auto& m :
       {store::LinkMeasure{0, 0}, store::LinkMeasure{-1, -5}, store::LinkMeasure{1e9, 1e18}}) {
    auto plan = store::plan_prefetch(m, 4);
    CHECK(plan.window >= kMiB);
    CHECK(plan.window <= 32 * kMiB);
    CHECK(plan.ahead >= plan.window);
    CHECK(plan.ahead <= 128 * kMiB);
  }
  CHECK(store::plan_prefetch({0.0005, 400e6}, 0).ahead >= 32 * kMiB);
  // A request is asked for again after four times what it should take, 2 s at least.
  CHECK(store::hedge_after_s({0.0005, 400e6}, 16 * kMiB) == 2.0);
  CHECK(store::hedge_after_s({0.100, 10e6}, 32 * kMiB) == Approx(4 * (0.100 + 32 * kMiB / 10e6)));
  CHECK(store::hedge_after_s({}, 1) == 2.0);
}

TEST_CASE(
    "a link estimate takes its latency from the quickest request and its rate from large ones") {
  store::LinkEstimate link;
  CHECK_FALSE(link.measure());
  link.record(0, std::nan(""));  // nonsense is ignored
  link.record(100, -1);
  link.record(100, 0);
  CHECK_FALSE(link.measure());
  link.record(20000, 0.002);  // small: latency only
  REQUIRE(link.measure());
  CHECK(link.measure()->latency_s == 0.002);
  CHECK(link.measure()->bytes_per_s == 0);
  link.record(10'000'000, 0.102);  // 10 MB in 0.1 s after the latency: 100 MB/s
  CHECK(link.measure()->bytes_per_s == Approx(100e6));
  link.record(10'000'000, 0.052);  // 200 MB/s now: smoothed to 150
  CHECK(link.measure()->bytes_per_s == Approx(150e6));
  link.record(100, 0.001);  // a quicker small request lowers the latency
  CHECK(link.measure()->latency_s == 0.001);
}
