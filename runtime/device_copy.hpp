// Synchronous copies between host memory and memory of any device: what
// kiln::Buffer's copies do, for memory kiln does not own (the autotuner's
// reset_to_zero / restore_value buffers).
#pragma once

#include <cstddef>

#include "kiln/device.hpp"

namespace kiln::runtime {

void copy_to_host(Device device, void *dst, const void *src, std::size_t bytes);
void copy_from_host(Device device, void *dst, const void *src, std::size_t bytes);

} // namespace kiln::runtime
