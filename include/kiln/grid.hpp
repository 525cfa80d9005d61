// Launch grids: how many programs run, on up to three axes.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln {

class BoundArgs;

/// prod(x, y, z) programs; a zero on any axis makes the launch a no-op.
struct Grid {
  uint32_t x = 1, y = 1, z = 1;

  constexpr Grid() = default;
  constexpr Grid(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr uint64_t size() const { return uint64_t{x} * y * z; }
  friend constexpr bool operator==(const Grid &, const Grid &) = default;
};

/// A grid computed from the bound arguments, as Triton's `grid=lambda meta: ...`.
using GridFn = std::function<Grid(const BoundArgs &)>;

/// ceil(a / b) for positive b, as tl.cdiv / triton.cdiv.
constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace kiln
