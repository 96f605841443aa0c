#include "util/units.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "util/errors.h"

namespace memplan::util {

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  }
  return buf;
}

std::string human_seconds(double s) {
  char buf[48];
  if (s >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  } else if (s >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  }
  return buf;
}

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
  std::string s(text);
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw UsageError(std::string(what) + ": '" + s + "' is not a size (e.g. 12GiB, 800MB, 4096)");
  }
  std::string unit = s.substr(pos);
  struct U {
    const char* name;
    double factor;
  };
  static constexpr U kUnits[] = {{"", 1},
                                 {"B", 1},
                                 {"K", 1e3},
                                 {"KB", 1e3},
                                 {"KiB", 1024.0},
                                 {"M", 1e6},
                                 {"MB", 1e6},
                                 {"MiB", 1048576.0},
                                 {"G", 1e9},
                                 {"GB", 1e9},
                                 {"GiB", 1073741824.0},
                                 {"T", 1e12},
                                 {"TB", 1e12},
                                 {"TiB", 1099511627776.0}};
  for (const auto& u : kUnits) {
    if (unit == u.name) {
      double bytes = value * u.factor;
      if (!std::isfinite(bytes) || bytes < 0 || bytes >= 9.2e18)
        throw UsageError(std::string(what) + ": '" + s + "' is out of range");
      return static_cast<std::uint64_t>(std::llround(bytes));
    }
  }
  throw UsageError(std::string(what) + ": unknown unit '" + unit + "' in '" + s +
                   "' (use B, KB, KiB, MB, MiB, GB, GiB, TB, TiB)");
}

}  // namespace memplan::util
