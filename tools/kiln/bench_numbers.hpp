// How `kiln bench` writes a number: rounded in the JSON (no false
// precision), fixed decimals in the human report, a median with its spread.
// One place for every section's file (bench_command, bench_cpu, bench_gpu,
// bench_dot).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/kiln/summary.hpp"

namespace kiln::cli {

/// `v` rounded to `decimals` places.
inline double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// "12.3 (11.9-13.0)": a median with its spread, for the human report.
inline std::string with_spread(const Summary &s, int decimals) {
  return fixed(s.median, decimals) + " (" + fixed(s.min, decimals) + "-" + fixed(s.max, decimals) +
         ")";
}

/// [min, max], for a "spread" key.
inline nlohmann::ordered_json spread_json(const Summary &s, int decimals) {
  return nlohmann::ordered_json::array({rounded(s.min, decimals), rounded(s.max, decimals)});
}

} // namespace kiln::cli
