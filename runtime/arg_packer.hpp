// Argument packing: a launch's bound arguments to the array of pointers a
// driver takes, one slot per runtime value (tuples unpacked, constexprs
// folded away). On the launch hot path: no allocation, no strings.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/specialization.hpp"
#include "kiln/arg.hpp"
#include "runtime/loaded_kernel.hpp"

namespace kiln::runtime {

/// Appends the launch slots of parameter `param`: one for a runtime value,
/// one per runtime leaf of a tuple (numbered over all its leaves, depth first).
void add_slots(std::vector<PackSlot> &slots, uint16_t param, const compiler::ParamSpec &s);

/// Writes the value of each of `slots` from `args` (one per parameter) into
/// `storage[i]` and points `ptrs[i]` at it. Both hold slots.size() entries.
void pack_args(const std::vector<PackSlot> &slots, const Arg *const *args, uint64_t *storage,
               void **ptrs);

} // namespace kiln::runtime
