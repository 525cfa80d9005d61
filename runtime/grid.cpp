// Grid checks: the slow path of a launch whose grid a launch cannot take.
#include "kiln/grid.hpp"

#include "kiln/error.hpp"

namespace kiln {

void Grid::bad_axis(char name, long long value) {
  throw ArgumentError(std::string("grid axis ") + name + " = " + std::to_string(value) +
                      (value < 0 ? " is negative" : " does not fit in 32 bits") +
                      "; each axis is a count of programs from 0 to " +
                      std::to_string(name == 'x' ? kMaxX : kMaxYZ));
}

std::string grid_limits_message(const Grid &g) {
  return "grid (" + std::to_string(g.x) + ", " + std::to_string(g.y) + ", " + std::to_string(g.z) +
         ") is beyond what a launch takes: x at most " + std::to_string(Grid::kMaxX) +
         ", y and z at most " + std::to_string(Grid::kMaxYZ) +
         " (CUDA's limits, which the CPU keeps too)";
}

} // namespace kiln
