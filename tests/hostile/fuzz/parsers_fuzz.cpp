// The readers of data from outside that nubo added last, under attack. The first byte picks the
// reader, the rest is its input: a queue file, a queue update, a preflight report, a KMS record
// (as an archive or object metadata holds it), a KMS key or region name, a GpuInfo cell, a JSON
// document with checked numbers, and the emitters (a YAML value, a shell word, a name checked
// where it enters). Each either reads it or throws nubo::Error; never crashes, hangs or reads
// without bound, and what an emitter writes holds no line break of its own.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "common/shell.hpp"
#include "common/utf8.hpp"
#include "common/yaml.hpp"
#include "cost/sources/python_literal.hpp"
#include "nubo/error.hpp"
#include "nubo/preflight.hpp"
#include "nubo/schedule.hpp"
#include "transfer/format/format.hpp"
#include "transfer/store/s3/aws_names.hpp"

namespace {

void numbers(std::string_view text) {
  const auto doc = nubo::json::parse(text, "fuzz");
  const auto visit = [](const nlohmann::json& v) {
    if (!v.is_number()) return;
    try {
      (void)nubo::json::number<int>(v, "n");
    } catch (const nubo::Error&) {
    }
    try {
      (void)nubo::json::number<std::uint64_t>(v, "n");
    } catch (const nubo::Error&) {
    }
    try {
      (void)nubo::json::number<double>(v, "n", 0, 1);
    } catch (const nubo::Error&) {
    }
  };
  visit(doc);
  if (doc.is_array() || doc.is_object())
    for (const auto& v : doc) visit(v);
}

void emitters(std::string_view text) {
  // A quoted YAML value is one line, whatever it holds.
  try {
    if (nubo::yaml::quoted(text).find('\n') != std::string::npos) std::abort();
  } catch (const nubo::Error&) {
  }
  try {
    if (nubo::shell::quote(text).size() < text.size() + 2) std::abort();
  } catch (const nubo::Error&) {
  }
  for (const auto& line : nubo::utf8::ascii_lines(text))
    if (line.find_first_of("\r\n") != std::string::npos) std::abort();
  try {
    nubo::utf8::check_plain(text, "name", 256);
    if (text.find_first_of("\r\n") != std::string_view::npos) std::abort();
  } catch (const nubo::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 9) {
      case 0:
        (void)nubo::cost::parse_queue(text, "queue.json");
        break;
      case 1:
        (void)nubo::cost::parse_queue_update(text, "update.json");
        break;
      case 2:
        (void)nubo::device::PreflightReport::from_json(text, "preflight.json");
        break;
      case 3:
        (void)nubo::transfer::format::decode_kms_record(
            {reinterpret_cast<const std::byte*>(text.data()), text.size()}, "a.nubo");
        break;
      case 4:
        (void)nubo::s3::parse_kms_key(text);
        break;
      case 5:
        nubo::s3::check_region(text, "region");
        (void)nubo::s3::kms_endpoint(text);
        break;
      case 6:
        (void)nubo::cost::sources::parse_python_literal(text);
        break;
      case 7:
        numbers(text);
        break;
      default:
        emitters(text);
    }
  } catch (const nubo::Error&) {
  }
  return 0;
}
