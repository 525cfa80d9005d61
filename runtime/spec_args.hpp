// Specializations as text and back: the seed's serialize_specialization_data
// and preload, and the NAME=SPEC form of `kiln compile` and `kiln warmup`.
//
// A spec is "*fp32:D", "*kfp16", "i32", "i32:D", "i64", "u64", "fp32", "u1"
// for runtime parameters, or a JSON value (number, bool, null, a function
// name; a quoted string, "'gelu'", is a str even where a function has that
// name) for constexprs and for an integer specialized as 1; a tuple
// parameter is a JSON array of specs (nested as the tuple is); a host tensor
// descriptor is "tensordesc<fp16[64, 64]>" (",nan" before the `>` for NaN padding).
#pragma once

#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/arg.hpp"
#include "kiln/tensor_descriptor.hpp"
#include "runtime/loaded_kernel.hpp"

namespace kiln::runtime {

class JitFunction;

/// What Args built from specs point into (names, strings, jit functions,
/// tuple elements); keep it alive while the Args are used.
struct SpecStorage {
  std::deque<std::string> strings;
  std::deque<Kernel> functions;
  std::deque<std::vector<Arg>> tuples;
  std::deque<TensorDescriptor> descriptors;
};

/// Arguments that specialize exactly as `spec` says, by name. Pointers are
/// mock tensors (never dereferenced).
std::vector<Arg> args_from_specs(const JitFunction &fn, const nlohmann::json &specs,
                                 SpecStorage &storage);

/// One spec (see above) of a parameter.
nlohmann::json spec_json(const compiler::ParamSpec &s);

/// {"kernel", "file", "args": {name: spec}, "options": {...}, "key"}: also a
/// valid `kiln warmup` line.
nlohmann::json specialization_data(const JitFunction &fn, const std::vector<compiler::ParamSpec> &specs,
                                   const Options &o, const std::string &key);

/// Named Args for the options in a JSON object ({"num_warps": 4, ...}).
void append_option_args(const nlohmann::json &options, SpecStorage &storage, std::vector<Arg> &out);

} // namespace kiln::runtime
