// Binding a launch's arguments to parameters (the seed's binder): positional
// and named arguments, options, decorator-supplied values, defaults.
#include <cstring>
#include <string_view>
#include <vector>

#include "compiler/support/closest_name.hpp"
#include "kiln/error.hpp"
#include "runtime/jit_function.hpp"

namespace kiln::runtime {

using frontend::ConstValue;

bool named_arg(std::span<const Arg> args, const char *name) {
  for (const Arg &a : args)
    if (a.name() && std::strcmp(a.name(), name) == 0)
      return true;
  return false;
}

std::optional<Arg> arg_from_const(const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::None:
    return Arg(nullptr);
  case ConstValue::Kind::Int:
    return Arg(c.i);
  case ConstValue::Kind::Float:
    return Arg(c.f);
  case ConstValue::Kind::Bool:
    return Arg(c.b);
  case ConstValue::Kind::DType:
    return Arg(c.dtype);
  // A config's string must outlive the launch: the module's tree keeps it.
  case ConstValue::Kind::Str:
    return Arg(c.s.c_str());
  default:
    return std::nullopt; // functions have no C++ argument form here
  }
}

namespace {

const char *arg_kind_name(Arg::Kind k) {
  switch (k) {
  case Arg::Kind::None:
    return "None";
  case Arg::Kind::Int:
  case Arg::Kind::UInt:
    return "an integer";
  case Arg::Kind::Float:
    return "a float";
  case Arg::Kind::Bool:
    return "a bool";
  case Arg::Kind::Pointer:
    return "a tensor";
  case Arg::Kind::Function:
    return "a jit function";
  case Arg::Kind::Str:
    return "a string";
  case Arg::Kind::DType:
    return "a dtype";
  case Arg::Kind::Tuple:
    return "a tuple";
  }
  return "?";
}

int option_int(const Arg &a, const char *name, const std::string &fn) {
  if (a.kind() != Arg::Kind::Int)
    throw ArgumentError(fn + ": option " + name + " must be an integer, not " +
                        arg_kind_name(a.kind()));
  return static_cast<int>(a.as_int());
}

bool option_bool(const Arg &a, const char *name, const std::string &fn) {
  if (a.kind() == Arg::Kind::Bool)
    return a.as_bool();
  if (a.kind() == Arg::Kind::Int)
    return a.as_int() != 0;
  throw ArgumentError(fn + ": option " + name + " must be a bool");
}

bool apply_option(const Arg &a, Options &o, const std::string &fn) {
  const char *n = a.name();
  if (!std::strcmp(n, "num_warps")) {
    o.num_warps = option_int(a, n, fn);
    if (o.num_warps < 1 || o.num_warps > 32 || (o.num_warps & (o.num_warps - 1)))
      throw ArgumentError(fn + ": num_warps must be a power of two from 1 to 32, not " +
                          std::to_string(o.num_warps));
  } else if (!std::strcmp(n, "num_stages")) {
    o.num_stages = option_int(a, n, fn);
    if (o.num_stages < 1)
      throw ArgumentError(fn + ": num_stages must be at least 1");
  } else if (!std::strcmp(n, "num_ctas")) {
    o.num_ctas = option_int(a, n, fn);
    if (o.num_ctas != 1)
      throw ArgumentError(fn + ": num_ctas other than 1 is not supported");
  } else if (!std::strcmp(n, "enable_fp_fusion")) {
    o.enable_fp_fusion = option_bool(a, n, fn);
  } else if (!std::strcmp(n, "debug")) {
    o.debug = option_bool(a, n, fn);
  } else if (!std::strcmp(n, "maxnreg") || !std::strcmp(n, "launch_cooperative_grid") ||
             !std::strcmp(n, "launch_pdl")) {
    // Triton's launch options that kiln's launch does not implement: their
    // defaults (None, False) are what kiln does, so they pass; asking for
    // the feature is refused rather than silently dropped.
    const bool asked = a.kind() == Arg::Kind::None   ? false
                       : a.kind() == Arg::Kind::Bool ? a.as_bool()
                       : a.kind() == Arg::Kind::Int  ? a.as_int() != 0
                                                     : true;
    if (asked)
      throw ArgumentError(fn + ": option " + n +
                          " is a Triton launch option kiln does not support yet (only its "
                          "default, None or False, is accepted)");
  } else {
    return false;
  }
  return true;
}

/// What a keyword may name, for "did you mean" (an error path only).
std::vector<std::string_view> names_and_options(const std::vector<KernelParam> &params) {
  std::vector<std::string_view> names = {"num_warps",
                                         "num_stages",
                                         "num_ctas",
                                         "enable_fp_fusion",
                                         "debug",
                                         "maxnreg",
                                         "launch_cooperative_grid",
                                         "launch_pdl"};
  for (const KernelParam &p : params)
    names.push_back(p.name);
  return names;
}

} // namespace

void JitFunction::bind(std::span<const Arg> args, Bound &b) const {
  const unsigned np = static_cast<unsigned>(params_.size());
  for (unsigned i = 0; i < np; ++i)
    b.args[i] = nullptr;
  unsigned pos = 0;
  for (const Arg &a : args) {
    if (!a.name()) {
      if (pos >= np)
        arg_error("takes " + std::to_string(np) + " arguments but more were given");
      b.args[pos++] = &a;
      continue;
    }
    unsigned i = 0;
    while (i < np && std::strcmp(params_[i].name.c_str(), a.name()) != 0)
      ++i;
    if (i < np) {
      if (b.args[i])
        arg_error("got multiple values for argument '" + params_[i].name + "'");
      b.args[i] = &a;
      continue;
    }
    if (!apply_option(a, b.options, info_.name))
      throw ArgumentError(std::string("Keyword argument ") + a.name() +
                          " was specified but unrecognised (" + info_.name +
                          " has no parameter or option of that name" +
                          did_you_mean(a.name(), names_and_options(params_)) + ")");
  }
  // @jit(debug=True) and KILN_DEBUG turn debug on unless the launch says
  // otherwise (as in Triton, the launch's own option wins).
  if ((info_.debug || default_debug_) && !named_arg(args, "debug"))
    b.options.debug = true;
  if (autotune_ || !info_.heuristics.empty())
    apply_decorators(args, b);
  for (unsigned i = 0; i < np; ++i) {
    if (b.args[i])
      continue;
    if (!defaults_[i])
      arg_error("missing a required argument: '" + params_[i].name + "'" +
                (i < info_.params.size() && !info_.params[i].unevaluated_default.empty()
                     ? "; its default (" + info_.params[i].unevaluated_default +
                           ") is computed by host code kiln does not run, so pass it explicitly"
                 : info_.heuristics_error.empty()
                     ? std::string()
                     : "; its @triton.heuristics could not be read, so "
                       "pass what they compute explicitly: " +
                           info_.heuristics_error));
    b.args[i] = &*defaults_[i];
  }
}

} // namespace kiln::runtime
