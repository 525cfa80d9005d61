// Compile times by stage over several compiles of one kernel (`kiln compile
// -v --repeat N`): the figures a compile-time change is judged by.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/compiled_kernel.hpp"

namespace kiln::cli {

class StageTimes {
public:
  /// Records the stage times of one more compile.
  void add(const CompiledKernel &k);
  /// A table on `out`: per stage (and the total) the first compile's time
  /// and, from two compiles on, the median (min-max) of all of them.
  void print(std::ostream &out, const std::string &note) const;
  /// {"runs": N, "first_ms": {stage: ms}, "median_ms": {...}, "min_ms": {...}, "max_ms": {...}}
  nlohmann::json json() const;

private:
  std::vector<std::string> stages_;          ///< in the order the compiler ran them
  std::vector<std::vector<double>> samples_; ///< per stage, one per compile
  std::vector<double> totals_;
};

} // namespace kiln::cli
