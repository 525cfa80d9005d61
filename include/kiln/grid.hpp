// Launch grids: how many programs run, on up to three axes.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

namespace kiln {

class BoundArgs;

/// prod(x, y, z) programs; a zero on any axis makes the launch a no-op.
struct Grid {
  /// The most programs per axis a launch takes: CUDA's limits, which the
  /// CPU keeps too so that a grid means the same on both.
  static constexpr uint32_t kMaxX = 0x7fffffff, kMaxYZ = 0xffff;

  uint32_t x = 1, y = 1, z = 1;

  constexpr Grid() = default;
  /// Any integers; a negative one, or one beyond 32 bits, is an
  /// ArgumentError rather than a wrapped count (Grid(-1) is not 2^32-1).
  template <std::integral X, std::integral Y = uint32_t, std::integral Z = uint32_t>
  constexpr Grid(X x_, Y y_ = 1, Z z_ = 1) : x(axis(x_, 'x')), y(axis(y_, 'y')), z(axis(z_, 'z')) {}
  constexpr uint64_t size() const { return uint64_t{x} * y * z; }
  /// Whether a launch takes it (see kMaxX); then size() cannot overflow.
  constexpr bool within_limits() const { return x <= kMaxX && y <= kMaxYZ && z <= kMaxYZ; }
  friend constexpr bool operator==(const Grid &, const Grid &) = default;

private:
  template <std::integral T> static constexpr uint32_t axis(T v, char name) {
    if constexpr (std::is_signed_v<T>) {
      if (v < 0)
        bad_axis(name, static_cast<long long>(v));
    }
    if (static_cast<unsigned long long>(v) > 0xffffffffull)
      bad_axis(name, static_cast<long long>(v));
    return static_cast<uint32_t>(v);
  }
  [[noreturn]] static void bad_axis(char name, long long value);
};

/// Why a launch refuses `g` (!g.within_limits()), as a sentence.
std::string grid_limits_message(const Grid &g);

/// A grid computed from the bound arguments, as Triton's `grid=lambda meta: ...`.
using GridFn = std::function<Grid(const BoundArgs &)>;

/// ceil(a / b) for positive b, as tl.cdiv / triton.cdiv.
constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace kiln
