#include "device/backend/gpu_catalog.hpp"

#include <cctype>

#include "common/csv.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"

namespace nubo::embedded {
std::string_view gpu_models_csv();  // generated from gpu_models.csv
}

namespace nubo::detail {

double peak_rate(const PeakRates& peak, DType type) {
  switch (type) {
    case DType::f32:
      return peak.fp32;
    case DType::tf32:
      return peak.tf32;
    case DType::f16:
      return peak.fp16;
    case DType::bf16:
      return peak.bf16;
    case DType::i32:
    case DType::i64:
      break;  // integer work has no peak column
  }
  return 0;
}
namespace {

const std::vector<std::string> kColumns = {
    "model",      "cuda_name",    "architecture", "cc",       "sms",      "boost_mhz",
    "memory_mib", "memory_gbs",   "fp32",         "tf32",     "fp16",     "bf16",
    "form",       "nvlink_links", "nvlink_gbs",   "nvswitch", "pcie_gen", "tdp_w"};

GpuModel parse_row(const csv::Row& row) {
  GpuModel m;
  m.model = row.str("model");
  if (m.model.empty()) row.fail("model: missing value");
  for (char c : m.model)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
      row.fail("model: '" + m.model + "' may hold only letters, digits, '-' and '_'");
  m.cuda_name = row.str("cuda_name");
  m.architecture = row.str("architecture");
  auto cc = text::split(row.str("cc"), '.');
  if (cc.size() != 2) row.fail("cc: expected MAJOR.MINOR, got '" + row.str("cc") + "'");
  try {
    m.cc_major = static_cast<int>(text::parse_int(cc[0], "cc", 1, 99));
    m.cc_minor = static_cast<int>(text::parse_int(cc[1], "cc", 0, 9));
  } catch (const Error& e) {
    row.fail(e.what());
  }
  m.sms = static_cast<int>(row.integer("sms", 1, 10000));
  m.boost_mhz = static_cast<int>(row.integer("boost_mhz", 1, 10000));
  m.memory_bytes = static_cast<std::uint64_t>(row.integer("memory_mib", 1, 1 << 24)) << 20;
  m.memory_gbs = row.number("memory_gbs", 1, 1e5);
  m.peak.fp32 = row.number("fp32", 0.001, 1e5);
  m.peak.tf32 = row.number("tf32", 0, 1e5);
  m.peak.fp16 = row.number("fp16", 0, 1e5);
  m.peak.bf16 = row.number("bf16", 0, 1e5);
  const auto& form = row.str("form");
  if (form != "sxm" && form != "pcie") row.fail("form: expected sxm or pcie, got '" + form + "'");
  m.sxm = form == "sxm";
  m.nvlink_links = static_cast<int>(row.integer("nvlink_links", 0, 64));
  m.nvlink_gbs = row.number("nvlink_gbs", 0, 1e5);
  if ((m.nvlink_links == 0) != (m.nvlink_gbs == 0))
    row.fail("nvlink_links and nvlink_gbs must both be zero or both positive");
  m.nvswitch = row.integer("nvswitch", 0, 1) == 1;
  if (m.nvswitch && m.nvlink_links == 0) row.fail("nvswitch: a model without NVLink");
  m.pcie_gen = static_cast<int>(row.integer("pcie_gen", 1, 9));
  m.tdp_w = static_cast<int>(row.integer("tdp_w", 1, 100000));
  return m;
}

}  // namespace

const GpuCatalog& GpuCatalog::builtin() {
  static const GpuCatalog catalog = parse(embedded::gpu_models_csv(), "gpu_models.csv");
  return catalog;
}

GpuCatalog GpuCatalog::parse(std::string_view csv_text, const std::string& source) {
  auto table = csv::Table::parse(csv_text, source, kColumns);
  GpuCatalog catalog;
  for (const auto& row : table.rows()) {
    auto model = parse_row(row);
    if (catalog.find(model.model)) row.fail("model '" + model.model + "' appears more than once");
    catalog.models_.push_back(std::move(model));
  }
  if (catalog.models_.empty())
    throw Error(Errc::invalid_argument, source + ": the table has no models");
  return catalog;
}

const GpuModel* GpuCatalog::find(std::string_view model) const {
  for (const auto& m : models_)
    if (text::iequals(m.model, model)) return &m;
  return nullptr;
}

const GpuModel& GpuCatalog::get(std::string_view model) const {
  if (const auto* m = find(model)) return *m;
  throw Error(Errc::not_found,
              "unknown GPU model '" + std::string(model) + "'; known models: " + known_models());
}

const GpuModel* GpuCatalog::find_by_device_name(std::string_view cuda_name) const {
  auto name = text::trim(cuda_name);
  for (const auto& m : models_)
    if (text::iequals(m.cuda_name, name)) return &m;
  return nullptr;
}

std::string GpuCatalog::known_models() const {
  std::vector<std::string> names;
  for (const auto& m : models_) names.push_back(m.model);
  return text::join(names, ", ");
}

}  // namespace nubo::detail
