// The preflight report's verdict names, exit status and JSON (docs/preflight.schema.json).
#include <algorithm>
#include <cmath>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/json.hpp"
#include "common/small_file.hpp"
#include "common/utf8.hpp"
#include "device/health/finding_json.hpp"
#include "nubo/error.hpp"
#include "nubo/preflight.hpp"

namespace nubo::device {

std::string_view verdict_name(Verdict v) noexcept {
  switch (v) {
    case Verdict::healthy:
      return "healthy";
    case Verdict::degraded:
      return "degraded";
    case Verdict::unusable:
      return "unusable";
  }
  return "?";
}

int PreflightReport::exit_status() const noexcept {
  switch (verdict) {
    case Verdict::healthy:
      return 0;
    case Verdict::degraded:
      return 4;
    case Verdict::unusable:
      return 5;
  }
  return 5;
}

const DeviceVerdict* PreflightReport::find(int device) const {
  for (const auto& v : devices)
    if (v.device == device) return &v;
  return nullptr;
}

SelectRequest exclude_unhealthy(SelectRequest request, const PreflightReport& preflight) {
  for (const auto& v : preflight.devices)
    if (v.verdict != Verdict::healthy)
      request.exclude.push_back(
          {v.device, "preflight: " + std::string(verdict_name(v.verdict)) + ", " + v.reason});
  return request;
}

namespace {

using nlohmann::json;

json index_or_null(int i) {
  return i < 0 ? json() : json(i);
}

Verdict parse_verdict(const json& j, const std::string& where) {
  if (!j.is_string()) throw Error(Errc::invalid_argument, where + ": expected a verdict name");
  for (Verdict v : {Verdict::healthy, Verdict::degraded, Verdict::unusable})
    if (j.get<std::string>() == verdict_name(v)) return v;
  throw Error(Errc::invalid_argument,
              where + ": '" + j.get<std::string>() + "' is not healthy, degraded or unusable");
}

// A field of an object, of the type asked for; errors name the place.
template <class T>
T field(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end())
    throw Error(Errc::invalid_argument, where + ": the field '" + name + "' is missing");
  if constexpr (std::is_arithmetic_v<T>) {
    return nubo::json::number<T>(*it, where + "." + name);
  } else {
    try {
      return it->get<T>();
    } catch (const json::exception&) {
      throw Error(Errc::invalid_argument, where + "." + name + ": has the wrong type");
    }
  }
}

// A text field (a check's name, a model, a reason): one line of printable UTF-8, checked where
// it enters since it is printed later; "" when absent unless `required`.
std::string text_field(const json& object, const char* name, const std::string& where,
                       bool required) {
  const auto it = object.find(name);
  if (it == object.end() || (!required && it->is_null())) {
    if (required)
      throw Error(Errc::invalid_argument, where + ": the field '" + name + "' is missing");
    return {};
  }
  if (!it->is_string())
    throw Error(Errc::invalid_argument, where + "." + name + ": expected a string");
  const auto value = it->get<std::string>();
  utf8::check_plain(value, where + "." + name, 4096);
  return value;
}

int index_field(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return -1;
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1 << 20)
    throw Error(Errc::invalid_argument, where + "." + name + ": expected a device index or null");
  return static_cast<int>(it->get<long long>());
}

}  // namespace

std::string PreflightReport::to_json() const {
  json ms = json::array(), ds = json::array(), fs = json::array();
  for (const auto& m : measurements)
    ms.push_back({{"check", m.check},
                  {"device", index_or_null(m.device)},
                  {"peer", index_or_null(m.peer)},
                  {"measured", m.measured},
                  {"expected", m.expected},
                  {"unit", m.unit},
                  {"ratio", m.ratio},
                  {"verdict", verdict_name(m.verdict)},
                  {"basis", m.basis},
                  {"note", m.note}});
  for (const auto& d : devices)
    ds.push_back({{"device", d.device},
                  {"model", d.model},
                  {"verdict", verdict_name(d.verdict)},
                  {"reason", d.reason}});
  for (const auto& f : findings) fs.push_back(detail::finding_json(f));
  return json{{"verdict", verdict_name(verdict)},
              {"threshold", threshold},
              {"seconds", seconds},
              {"devices", ds},
              {"measurements", ms},
              {"findings", fs}}
      .dump(2);
}

PreflightReport PreflightReport::from_json(std::string_view text, const std::string& source) {
  // The one JSON reader: 1e400 and a key given twice are errors, not a crash or a silent pick.
  const auto j = nubo::json::parse(text, source);
  if (!j.is_object())
    throw Error(Errc::invalid_argument, source + ": expected a preflight report object");
  PreflightReport r;
  r.verdict = parse_verdict(j.value("verdict", json()), source + ".verdict");
  r.threshold = field<double>(j, "threshold", source);
  if (!(r.threshold > 0 && r.threshold <= 1))
    throw Error(Errc::invalid_argument, source + ".threshold: a fraction in (0, 1] is needed");
  r.seconds = field<double>(j, "seconds", source);
  if (!(r.seconds >= 0)) throw Error(Errc::invalid_argument, source + ".seconds: must be >= 0");
  const auto devices = field<json>(j, "devices", source);
  const auto measurements = field<json>(j, "measurements", source);
  if (!devices.is_array() || !measurements.is_array())
    throw Error(Errc::invalid_argument, source + ": devices and measurements must be arrays");
  std::set<int> seen;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string where = source + ".devices[" + std::to_string(i) + "]";
    if (!devices[i].is_object())
      throw Error(Errc::invalid_argument, where + ": expected an object");
    DeviceVerdict v;
    v.device = index_field(devices[i], "device", where);
    if (v.device < 0) throw Error(Errc::invalid_argument, where + ".device: missing");
    // One verdict per GPU: a second would exclude it twice, or contradict the first.
    if (!seen.insert(v.device).second)
      throw Error(Errc::invalid_argument,
                  where + ".device: GPU " + std::to_string(v.device) + " appears twice");
    v.verdict = parse_verdict(devices[i].value("verdict", json()), where + ".verdict");
    v.reason = text_field(devices[i], "reason", where, false);
    v.model = text_field(devices[i], "model", where, false);
    r.devices.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string where = source + ".measurements[" + std::to_string(i) + "]";
    const auto& o = measurements[i];
    if (!o.is_object()) throw Error(Errc::invalid_argument, where + ": expected an object");
    Measurement m;
    m.check = text_field(o, "check", where, true);
    m.device = index_field(o, "device", where);
    m.peer = index_field(o, "peer", where);
    m.measured = field<double>(o, "measured", where);
    m.expected = field<double>(o, "expected", where);
    m.unit = text_field(o, "unit", where, true);
    m.ratio = field<double>(o, "ratio", where);
    m.verdict = parse_verdict(o.value("verdict", json()), where + ".verdict");
    m.basis = text_field(o, "basis", where, false);
    m.note = text_field(o, "note", where, false);
    if (!(m.measured >= 0) || !(m.expected >= 0))
      throw Error(Errc::invalid_argument, where + ": measured and expected must be >= 0");
    // A report says what was measured against what was expected; its ratio is their quotient
    // (0 without an expected figure), which the cost model prices by. One that disagrees was
    // edited: the figures it claims and the rate it would set do not match.
    const double quotient = m.expected > 0 ? m.measured / m.expected : 0;
    if (!(std::fabs(m.ratio - quotient) <= 1e-9 * std::max(1.0, quotient)))
      throw Error(Errc::invalid_argument, where + ".ratio: " + std::to_string(m.ratio) +
                                              " is not measured / expected (" +
                                              std::to_string(quotient) + ")");
    r.measurements.push_back(std::move(m));
  }
  return r;
}

PreflightReport PreflightReport::load(const std::string& path) {
  // A report of 64 GPUs with every pair is well under a megabyte.
  return from_json(files::read_small_file(path, 16u << 20, "preflight report").bytes, path);
}

}  // namespace nubo::device
