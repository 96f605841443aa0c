#include "ir/device_calibration.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "util/errors.h"
#include "util/json_reader.h"
#include "util/text_file.h"

namespace memplan::ir {
namespace {

using nlohmann::json;

class MeasurementReader {
 public:
  explicit MeasurementReader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw InputError(path_ + ": " + std::string(key) + ": " + message);
  }

  // A rate or time that must be a finite number above zero (or at least zero).
  std::optional<double> number(const json& obj, std::string_view key, bool zero_ok) const {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_number()) fail(key, "expected a number, got " + it->dump());
    double x = it->get<double>();
    if (!std::isfinite(x)) fail(key, "not a finite number: " + it->dump());
    if (x < 0 || (x == 0 && !zero_ok)) fail(key, "must be positive, got " + it->dump());
    return x;
  }

  double required_rate(const json& obj, std::string_view key) const {
    std::optional<double> x = number(obj, key, false);
    if (!x) fail(key, "missing (run scripts/gpu_bandwidth.py to measure it)");
    return *x;
  }

  std::string text(const json& obj, std::string_view key) const {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  }

  CopyMeasurement read(const json& doc) const {
    if (!doc.is_object()) throw InputError(path_ + ": expected a JSON object at the top level");
    CopyMeasurement m;
    m.path = path_;
    m.gpu = text(doc, "gpu");
    if (auto p = doc.find("preset"); p != doc.end() && p->is_object()) m.preset = text(*p, "name");
    m.h2d_bytes_per_s = required_rate(doc, "h2d_bytes_per_s");
    m.d2h_bytes_per_s = required_rate(doc, "d2h_bytes_per_s");
    m.launch_seconds = number(doc, "launch_seconds", true);
    if (auto both = doc.find("both_at_once"); both != doc.end()) {
      if (!both->is_object()) fail("both_at_once", "expected an object, got " + both->dump());
      m.both_at_once_bytes_per_s = number(*both, "bytes_per_s_each", false);
    }
    return m;
  }

 private:
  const std::string& path_;
};

}  // namespace

CopyMeasurement read_copy_measurement(const std::string& path) {
  return MeasurementReader(path).read(util::parse_json_text(
      path, util::read_text_file(path), {.max_depth = 16, .user_named_sections = {}}));
}

DeviceSpec calibrated_device(const DeviceSpec& base, const CopyMeasurement& m,
                             const CalibrationOptions& options) {
  DeviceSpec d = base;
  d.h2d_bytes_per_s = m.h2d_bytes_per_s;
  d.d2h_bytes_per_s = m.d2h_bytes_per_s;
  if (options.concurrent && m.both_at_once_bytes_per_s) {
    d.h2d_bytes_per_s = std::min(d.h2d_bytes_per_s, *m.both_at_once_bytes_per_s);
    d.d2h_bytes_per_s = std::min(d.d2h_bytes_per_s, *m.both_at_once_bytes_per_s);
  }
  if (m.launch_seconds) d.launch_seconds = *m.launch_seconds;
  std::string what = options.concurrent && m.both_at_once_bytes_per_s
                         ? "copy rates (both directions at once)"
                         : "copy rates (each direction alone)";
  if (m.launch_seconds) what += " and launch floor";
  d.source = base.source + "; " + what + " measured" + (m.gpu.empty() ? "" : " on " + m.gpu) +
             " (" + m.path + ")";
  return d;
}

json calibrated_costs_json(const DeviceSpec& base, const DeviceSpec& calibrated,
                           const CopyMeasurement& m, const CalibrationOptions& options) {
  json device = {{"name", calibrated.name},
                 {"memory_bytes", calibrated.memory_bytes},
                 {"h2d_bytes_per_s", calibrated.h2d_bytes_per_s},
                 {"d2h_bytes_per_s", calibrated.d2h_bytes_per_s},
                 {"peak_flops", calibrated.peak_flops},
                 {"memory_bytes_per_s", calibrated.memory_bytes_per_s},
                 {"launch_seconds", calibrated.launch_seconds}};
  json from = {{"measurement", m.path},
               {"gpu", m.gpu},
               {"preset", base.name},
               {"preset_h2d_bytes_per_s", base.h2d_bytes_per_s},
               {"preset_d2h_bytes_per_s", base.d2h_bytes_per_s},
               {"preset_launch_seconds", base.launch_seconds},
               {"concurrent", options.concurrent},
               {"source", calibrated.source}};
  if (m.both_at_once_bytes_per_s) from["both_at_once_bytes_per_s"] = *m.both_at_once_bytes_per_s;
  return {{"format", "memplan.costs"},
          {"version", 1},
          {"device", device},
          {"nodes", json::object()},
          {"calibration", from}};
}

}  // namespace memplan::ir
