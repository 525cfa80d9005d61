#include "compiler/support/closest_name.hpp"

#include <algorithm>

namespace kiln {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest_name(std::string_view name, const std::vector<std::string_view> &candidates) {
  std::string_view best;
  std::size_t best_distance = name.size() <= 5 ? 2 : 3; // the first distance too far
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance || (d == best_distance && !best.empty() && c < best)) {
      best_distance = d;
      best = c;
    }
  }
  return std::string(best);
}

std::string did_you_mean(std::string_view name, const std::vector<std::string_view> &candidates) {
  const std::string near = closest_name(name, candidates);
  return near.empty() ? std::string() : "; did you mean '" + near + "'?";
}

} // namespace kiln
