// Argument packing: a launch's bound arguments to the array of pointers a
// driver takes, one slot per runtime value (tuples unpacked, constexprs
// folded away). On the launch hot path: no allocation, no strings.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/specialization.hpp"
#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"
#include "runtime/loaded_kernel.hpp"

namespace kiln::runtime {

/// Appends the launch slots of parameter `param`: one for a runtime value,
/// one per runtime leaf of a tuple (numbered over all its leaves, depth first).
void add_slots(std::vector<PackSlot> &slots, uint16_t param, const compiler::ParamSpec &s);

/// Writes the value of each of `slots` from `args` (one per parameter) into
/// `storage[i]` and points `ptrs[i]` at it; `extents[i]` is a pointer's
/// tensor size in bytes (-1: unknown or not a pointer), for debug-mode
/// bounds checks. All hold slots.size() entries. Throws ArgumentError for a
/// value out of its integer type's range or a mock tensor (`kernel` and
/// `params` name them).
void pack_args(const std::vector<PackSlot> &slots, const Arg *const *args, uint64_t *storage,
               void **ptrs, int64_t *extents, const std::string &kernel,
               std::span<const KernelParam> params);

} // namespace kiln::runtime
