// SkyPilot's catalog format (skypilot-org/skypilot-catalog, catalogs/v8/<cloud>/vms.csv): one
// line per instance type, region and availability zone. Columns are read by their header name,
// since their order differs per cloud. GCP prices GPUs apart from the host they attach to: a
// line without an instance type is a GPU's price, added to its host's here (gcp_hosts below).
#include <cmath>
#include <map>
#include <unordered_map>

#include "common/csv.hpp"
#include "common/text.hpp"
#include "cost/sources/python_literal.hpp"
#include "cost/sources/rows.hpp"
#include "cost/sources/source.hpp"
#include "nubo/error.hpp"

namespace nubo::cost::sources {
namespace {

const std::vector<std::string> kRequired = {"InstanceType", "AcceleratorName", "AcceleratorCount",
                                            "Price", "Region"};

// Per-GPU memory from GpuInfo, GiB (and the GPU's name there, in `name`); 0 when it states none. A
// GpuInfo that is a dict but cannot be read is an error: the row's GPU would be unchecked. Some
// clouds' rows write GB where the field says MiB (80 for an 80 GB card): no GPU has under 1 GiB, so
// a figure under 1024 is GB.
double gpu_memory_gib(const std::string& info, double count, std::string& name,
                      std::string& problem) {
  auto text = text::trim(info);
  if (text.empty() || text.front() != '{') return 0;  // some clouds write the bare name
  auto doc = parse_python_literal(text);
  if (!doc || !doc->is_object()) {
    problem = "GpuInfo: not a readable Python dict";
    return 0;
  }
  if (auto gpus = doc->find("Gpus"); gpus != doc->end() && gpus->is_array() && !gpus->empty()) {
    const auto& first = (*gpus)[0];
    if (first.is_object())
      if (auto n = first.find("Name"); n != first.end() && n->is_string())
        name = n->get<std::string>();
    if (first.is_object())
      if (auto mem = first.find("MemoryInfo"); mem != first.end() && mem->is_object())
        if (auto mib = mem->find("SizeInMiB"); mib != mem->end() && mib->is_number())
          return mib->get<double>() < 1024 ? mib->get<double>() : mib->get<double>() / 1024;
  }
  if (auto total = doc->find("TotalGpuMemoryInMiB");
      total != doc->end() && total->is_number() && count > 0)
    return total->get<double>() / 1024 / count;
  return 0;
}

// A number field; -1 when empty or absent; `problem` set when malformed.
double number(const csv::Row& row, const char* column, std::string& problem) {
  return quote_number(row.optional(column), column, problem);
}

// The GCP machine type a GPU line's GPUs come in, as SkyPilot pairs them: the accelerator-
// optimised families carry their GPUs in the type's name (a2-highgpu-8g), and the older GPUs
// attach to an n1 host (n1-highmem-8, which takes up to 4 of them; 8 take a larger one). ""
// when GCP has no such machine.
std::string gcp_host_for(const std::string& gpu, int n) {
  const auto count = std::to_string(n);
  const bool one_to_eight = n == 1 || n == 2 || n == 4 || n == 8;
  if (gpu == "A100")
    return n == 16 ? "a2-megagpu-16g" : one_to_eight ? "a2-highgpu-" + count + "g" : "";
  if (gpu == "A100-80GB") return one_to_eight ? "a2-ultragpu-" + count + "g" : "";
  if (gpu == "H100") return one_to_eight ? "a3-highgpu-" + count + "g" : "";
  if (gpu == "H100-MEGA") return n == 8 ? "a3-megagpu-8g" : "";
  if (gpu == "H200") return n == 8 ? "a3-ultragpu-8g" : "";
  if (gpu == "B200") return n == 8 ? "a4-highgpu-8g" : "";
  if (gpu == "L4") {
    static const char* const g2[] = {
        "", "g2-standard-8", "g2-standard-24", "", "g2-standard-48", "", "", "", "g2-standard-96"};
    return n >= 1 && n <= 8 ? g2[n] : "";
  }
  if (n <= 4) return "n1-highmem-8";
  return n == 8 ? "n1-highmem-64" : "";
}

}  // namespace

Imported read_skypilot(const Input& in) {
  Imported out;
  std::vector<csv::BadLine> bad;
  const auto table = csv::Table::parse(in.text, in.where, kRequired, &bad);
  for (auto& b : bad) out.skipped.push_back({in.where + ":" + std::to_string(b.line), b.reason});
  out.records = bad.size();

  // GCP's host prices by (type, region, zone), for its GPU lines without an instance type.
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> hosts;
  for (const auto& row : table.rows())
    if (!row.str("InstanceType").empty() && row.str("AcceleratorName").empty()) {
      std::string problem;
      const double price = number(row, "Price", problem);
      const double spot = number(row, "SpotPrice", problem);
      if (problem.empty())
        hosts[{row.str("InstanceType"), row.str("Region"), row.optional("AvailabilityZone")}] = {
            price, spot};
    }

  // Lines of one instance type repeat their GpuInfo in every zone: read each text once.
  struct GpuInfo {
    double memory_gib = 0;
    std::string name, problem;
  };
  std::unordered_map<std::string, GpuInfo> gpu_infos;
  RowBuilder rows(in, out);
  for (const auto& row : table.rows()) {
    if (row.str("AcceleratorName").empty()) continue;  // a CPU instance, or a GCP host
    Quote q;
    q.where = in.where + ":" + std::to_string(row.line());
    q.name = row.str("InstanceType");
    q.region = row.str("Region");
    q.zone = row.optional("AvailabilityZone");
    q.gpu_name = row.str("AcceleratorName");
    std::string problem;
    q.gpus = number(row, "AcceleratorCount", problem);
    q.on_demand = number(row, "Price", problem);
    q.spot = number(row, "SpotPrice", problem);
    if (q.spot == 0) q.spot = -1;  // clouds without a spot market write 0.00
    q.vcpus = std::max(0.0, number(row, "vCPUs", problem));
    q.memory_gib = std::max(0.0, number(row, "MemoryGiB", problem));
    if (problem.empty()) {
      const auto info_text = row.optional("GpuInfo");
      auto [it, fresh] = gpu_infos.try_emplace(info_text + '\n' + row.str("AcceleratorCount"));
      if (fresh)
        it->second.memory_gib =
            gpu_memory_gib(info_text, q.gpus, it->second.name, it->second.problem);
      q.gpu_memory_gib = it->second.memory_gib;
      q.hint = it->second.name;
      problem = it->second.problem;
    }
    if (!problem.empty()) {
      ++out.records;
      out.skipped.push_back({q.where, (q.name.empty() ? q.gpu_name : q.name) + ": " + problem});
      continue;
    }
    if (q.name.empty() && q.gpus >= 1) {
      // A GCP GPU: priced with its host, in the same zone.
      q.name = gcp_host_for(q.gpu_name, static_cast<int>(q.gpus));
      auto host = hosts.find({q.name, q.region, q.zone});
      if (host == hosts.end()) {
        ++out.records;
        out.skipped.push_back(
            {q.where, std::to_string(static_cast<int>(q.gpus)) + "x " + q.gpu_name + ": " +
                          (q.name.empty() ? "no GCP machine type takes this many"
                                          : "no " + q.name + " host price in " +
                                                (q.zone.empty() ? q.region : q.zone))});
        continue;
      }
      q.on_demand =
          q.on_demand >= 0 && host->second.first >= 0 ? q.on_demand + host->second.first : -1;
      q.spot = q.spot >= 0 && host->second.second >= 0 ? q.spot + host->second.second : -1;
      if (q.name.starts_with("n1-"))  // the type alone does not say which GPUs it has
        q.name += "+" + std::to_string(static_cast<int>(q.gpus)) + "x" + q.gpu_name;
    }
    rows.add(q);
  }
  rows.finish();
  return out;
}

}  // namespace nubo::cost::sources
