// kiln: an asynchronous JIT runtime for Triton-compatible tile kernels.
// The umbrella header: everything a host program needs.
#pragma once

#include "kiln/arg.hpp"
#include "kiln/async.hpp"
#include "kiln/autotune.hpp"
#include "kiln/bench.hpp"
#include "kiln/buffer.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"
#include "kiln/grid.hpp"
#include "kiln/hooks.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "kiln/options.hpp"
#include "kiln/tensor.hpp"
#include "kiln/tensor_descriptor.hpp"
#include "kiln/version.hpp"
