// "Did you mean": the known name closest to a misspelt one, for builtins,
// kernel parameters, `kiln` commands and options.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// Edit distance with adjacent transpositions counted as one edit (optimal
/// string alignment): "laod" is one edit from "load".
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name`, or "" when none is close: within one
/// edit for a name of up to 5 characters, two for a longer one. Ties go to
/// the alphabetically first, so a message never depends on an order.
std::string closest_name(std::string_view name, const std::vector<std::string_view> &candidates);

/// "; did you mean 'X'?" for the closest candidate, or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string_view> &candidates);

} // namespace kiln
