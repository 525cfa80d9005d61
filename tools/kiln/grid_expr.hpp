// `--grid` of kiln run and kiln tune when it depends on the arguments, as a
// Triton file's `grid = lambda meta: (triton.cdiv(M, meta["BM"]), ...)`
// does: each axis a product of integers, parameter names and cdiv(a, b),
// evaluated at each launch on the bound arguments, so an autotuned kernel
// gets the grid of the config being timed.
//   --grid 'cdiv(n,BLOCK)'   --grid 'cdiv(M,BM),cdiv(N,BN)'   --grid 'cdiv(M,BM)*cdiv(N,BN)'
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/grid.hpp"
#include "kiln/kernel.hpp"

namespace kiln::cli {

class GridExpr {
public:
  /// Throws UsageError naming the mistake; accepts 1 to 3 axes.
  static GridExpr parse(std::string_view text);
  /// Throws ArgumentError for a name that is not a bound integer argument,
  /// UsageError for a result beyond the grid limits or a cdiv by zero.
  Grid eval(const BoundArgs &args) const;
  const std::string &text() const { return text_; }
  /// The parameter names it reads.
  const std::vector<std::string> &names() const { return names_; }

private:
  std::string text_;
  std::vector<std::string> axes_, names_;
};

/// Whether `text` uses names or cdiv (else it is a plain grid of integers).
bool is_grid_expr(std::string_view text);

} // namespace kiln::cli
