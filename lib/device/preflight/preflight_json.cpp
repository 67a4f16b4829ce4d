// The preflight report's verdict names, exit status and JSON (docs/preflight.schema.json).
#include <nlohmann/json.hpp>

#include "common/small_file.hpp"
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
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(Errc::invalid_argument, where + "." + name + ": has the wrong type");
  }
}

int index_field(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return -1;
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1 << 20)
    throw Error(Errc::invalid_argument, where + "." + name + ": expected a device index or null");
  return it->get<int>();
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
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(Errc::invalid_argument, source + ": not JSON: " + e.what());
  }
  if (!j.is_object())
    throw Error(Errc::invalid_argument, source + ": expected a preflight report object");
  PreflightReport r;
  r.verdict = parse_verdict(j.value("verdict", json()), source + ".verdict");
  r.threshold = field<double>(j, "threshold", source);
  r.seconds = field<double>(j, "seconds", source);
  const auto devices = field<json>(j, "devices", source);
  const auto measurements = field<json>(j, "measurements", source);
  if (!devices.is_array() || !measurements.is_array())
    throw Error(Errc::invalid_argument, source + ": devices and measurements must be arrays");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string where = source + ".devices[" + std::to_string(i) + "]";
    if (!devices[i].is_object())
      throw Error(Errc::invalid_argument, where + ": expected an object");
    DeviceVerdict v;
    v.device = index_field(devices[i], "device", where);
    if (v.device < 0) throw Error(Errc::invalid_argument, where + ".device: missing");
    v.verdict = parse_verdict(devices[i].value("verdict", json()), where + ".verdict");
    v.reason = devices[i].value("reason", std::string());
    v.model = devices[i].value("model", std::string());
    r.devices.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string where = source + ".measurements[" + std::to_string(i) + "]";
    const auto& o = measurements[i];
    if (!o.is_object()) throw Error(Errc::invalid_argument, where + ": expected an object");
    Measurement m;
    m.check = field<std::string>(o, "check", where);
    m.device = index_field(o, "device", where);
    m.peer = index_field(o, "peer", where);
    m.measured = field<double>(o, "measured", where);
    m.expected = field<double>(o, "expected", where);
    m.unit = field<std::string>(o, "unit", where);
    m.ratio = field<double>(o, "ratio", where);
    m.verdict = parse_verdict(o.value("verdict", json()), where + ".verdict");
    m.basis = o.value("basis", std::string());
    m.note = o.value("note", std::string());
    if (!(m.measured >= 0) || !(m.expected >= 0))
      throw Error(Errc::invalid_argument, where + ": measured and expected must be >= 0");
    r.measurements.push_back(std::move(m));
  }
  return r;
}

PreflightReport PreflightReport::load(const std::string& path) {
  // A report of 64 GPUs with every pair is well under a megabyte.
  return from_json(files::read_small_file(path, 16u << 20, "preflight report").bytes, path);
}

}  // namespace nubo::device
