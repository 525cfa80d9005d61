// `kiln run FILE KERNEL --grid G [options] [NAME=VALUE ...]` (shared/CLI.md):
// load a kernel file, bind arguments given on the command line, compile or
// hit a cache, launch, and report.
//
// The parsing pieces are declared here so tests can check them without a
// kernel file; add_run_command is all that main needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "kiln/device.hpp"
#include "kiln/grid.hpp"
#include "kiln/tensor.hpp"
#include "tools/kiln/host_tensor.hpp"

namespace CLI {
class App;
}

namespace kiln::cli {

struct CommonOptions;

/// Adds the `run` subcommand to `app`. `common` must outlive app.parse().
void add_run_command(CLI::App &app, CommonOptions &common);

/// Adds `tune`: `run`'s words for an autotuned kernel, printing its tuning
/// (KILN_PRINT_AUTOTUNING) and storing the choice in the tuning cache.
void add_tune_command(CLI::App &app, CommonOptions &common);

/// `--grid`: "10", "4,8" or "4,8,2" (zeros allowed: an empty launch).
/// Throws UsageError for anything else.
Grid parse_grid(std::string_view text);

/// One "NAME=VALUE" word (an argument, or the value of --out).
struct Assignment {
  std::string name;
  std::string value;
};

/// Splits "NAME=VALUE" at the first '='. NAME must be an identifier (with
/// `element`, also a tuple element's path: "ptrs.1") and VALUE non-empty;
/// `what` names the word in the UsageError otherwise ("argument", "--out").
Assignment parse_assignment(std::string_view text, std::string_view what, bool element = false);

/// VALUE naming a jit function of the module: a higher-order kernel's
/// constexpr parameter (`ACT=relu`).
struct FunctionRef {
  std::string name;
  friend bool operator==(const FunctionRef &, const FunctionRef &) = default;
};

/// VALUE of a constexpr parameter that is no number, tensor or function: a
/// string constexpr (`ACTIVATION=leaky_relu`).
struct StringValue {
  std::string text;
  friend bool operator==(const StringValue &, const StringValue &) = default;
};

struct TupleValue;

/// `tensordesc(TENSOR, [B0, B1, ...])`, `..., nan)` for NaN padding: a host
/// tensor descriptor (Triton's TensorDescriptor.from_tensor) over a tensor
/// VALUE, which `--out NAME=` writes back.
struct DescriptorValue {
  TensorSpec tensor;
  std::vector<int64_t> block_shape;
  bool nan_padding = false;
  friend bool operator==(const DescriptorValue &, const DescriptorValue &) = default;
};

/// What a VALUE of the command line is, in the order they are tried:
/// None Python's None (`AB_DTYPE=None`); true/false (also True/False) a bool; an integer literal
/// (decimal or 0x hex, optionally signed) an int64, or a uint64 above INT64_MAX; a float literal
/// ('.', an exponent, inf, nan) a double (the kernel sees fp32); a tensor spec (@file.npy[:bf16],
/// zeros:SHAPE:DT, empty:SHAPE:DT); the name of a jit function among `function_names`; `tl.float16`
/// a dtype; for a constexpr parameter, any other word a string; "(4, @x.npy, (1, 2))" a tuple of
/// values (Triton specializes each element); "tensordesc(...)" a tensor descriptor.
using ArgValue = std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, TensorSpec,
                              FunctionRef, StringValue, DType, TupleValue, DescriptorValue>;

/// A tuple VALUE; its tensors are named `NAME.i` (`--out ptrs.1=out.npy`).
struct TupleValue {
  std::vector<ArgValue> elems;
  friend bool operator==(const TupleValue &, const TupleValue &) = default;
};

/// Classifies the VALUE of argument `name`. Throws UsageError naming the
/// argument when it is none of the above or out of range.
ArgValue classify_value(std::string_view name, std::string_view value,
                        std::span<const std::string> function_names, bool constexpr_param = false);

/// Where a launch's tensors live, and the copies between there and the
/// HostTensors the command reads and writes. This is the seam for the cuda
/// backend, which will allocate device buffers in to_device, copy in upload
/// and out in download, and wait on the stream in synchronize. The cpu
/// backend runs on the host buffers themselves, so its copies are no-ops.
/// One per launch; not thread-safe.
class TensorStaging {
public:
  virtual ~TensorStaging() = default;
  /// The backend the launch runs on (it picks the runtime's KILN_BACKEND).
  virtual Backend backend() const = 0;
  /// The tensor the kernel receives for `host`, holding its contents.
  /// Valid until this object is destroyed.
  virtual Tensor to_device(HostTensor &host) = 0;
  /// Copies `host` into `device` (to restore inputs between --repeat launches).
  virtual void upload(const HostTensor &host, const Tensor &device) = 0;
  /// Copies the kernel's results in `device` back into `host`.
  virtual void download(const Tensor &device, HostTensor &host) = 0;
  /// Blocks until every launch made so far has finished.
  virtual void synchronize() = 0;
};

/// The staging for `--backend` ("cpu", "cuda", "auto"). Until the cuda
/// staging exists, "auto" is cpu and "cuda" throws kiln::RuntimeError.
std::unique_ptr<TensorStaging> make_tensor_staging(std::string_view backend);

} // namespace kiln::cli
