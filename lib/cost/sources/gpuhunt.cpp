// dstack's gpuhunt catalog (one <provider>.csv per provider in its catalog.zip): one line per
// instance, location and pricing, with `spot` True or False, written by Python (empty fields are
// None). Columns are read by name: older catalogs lack the last ones.
#include "common/csv.hpp"
#include "common/text.hpp"
#include "cost/sources/rows.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

const std::vector<std::string> kRequired = {"instance_name", "location", "price",
                                            "gpu_count",     "gpu_name", "spot"};

}  // namespace

Imported read_gpuhunt(const Input& in) {
  Imported out;
  std::vector<csv::BadLine> bad;
  const auto table = csv::Table::parse(in.text, in.where, kRequired, &bad);
  for (auto& b : bad) out.skipped.push_back({in.where + ":" + std::to_string(b.line), b.reason});
  out.records = bad.size();
  RowBuilder rows(in, out);
  for (const auto& row : table.rows()) {
    const auto& count = row.str("gpu_count");
    if (count.empty() || count == "0") continue;  // a CPU instance
    Quote q;
    q.where = in.where + ":" + std::to_string(row.line());
    q.name = row.str("instance_name");
    q.region = row.str("location");
    q.gpu_name = row.str("gpu_name");
    std::string problem;
    q.gpus = quote_number(count, "gpu_count", problem);
    // "80" for an 80 GB card: the size it is sold as, which is its GiB.
    q.gpu_memory_gib =
        std::max(0.0, quote_number(row.optional("gpu_memory"), "gpu_memory", problem));
    q.vcpus = std::max(0.0, quote_number(row.optional("cpu"), "cpu", problem));
    q.memory_gib = std::max(0.0, quote_number(row.optional("memory"), "memory", problem));
    const double price = quote_number(row.str("price"), "price", problem);
    const auto spot = text::lower(row.str("spot"));
    if (spot != "true" && spot != "false")
      problem = "spot: expected True or False, got '" + row.str("spot") + "'";
    const auto vendor = text::lower(row.optional("gpu_vendor"));
    if (problem.empty() && !vendor.empty() && vendor != "nvidia")
      problem = "gpu_vendor: " + vendor + " GPUs are not in the GPU table";
    if (!problem.empty()) {
      ++out.records;
      out.skipped.push_back({q.where, q.name + ": " + problem});
      continue;
    }
    (spot == "true" ? q.spot : q.on_demand) = price < 0 ? 0 : price;
    rows.add(q);
  }
  rows.finish();
  return out;
}

}  // namespace nubo::cost::sources
