#include "runtime/autotune_spec.hpp"

#include <algorithm>

#include "kiln/error.hpp"
#include "runtime/jit_function.hpp"

namespace kiln::runtime {

using frontend::ConstValue;

namespace {

std::optional<int> narrow(const std::optional<int64_t> &v) {
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}
std::optional<int64_t> widen(const std::optional<int> &v) {
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

/// A config value as the decorator would have written it; nullopt for what
/// no constexpr can be.
std::optional<ConstValue> const_of(const Arg &a) {
  switch (a.kind()) {
  case Arg::Kind::None:
    return ConstValue::none();
  case Arg::Kind::Int:
    return ConstValue::of_int(a.as_int());
  case Arg::Kind::Float:
    return ConstValue::of_float(a.as_float());
  case Arg::Kind::Bool:
    return ConstValue::of_bool(a.as_bool());
  case Arg::Kind::Str:
    return ConstValue::of_str(a.as_str());
  case Arg::Kind::DType:
    return ConstValue::of_dtype(a.dtype());
  default:
    return std::nullopt;
  }
}

} // namespace

Config public_config(const frontend::AutotuneConfig &c) {
  Config out;
  for (const auto &[name, value] : c.kwargs) {
    if (std::optional<Arg> a = arg_from_const(value))
      out.meta.emplace_back(name, *a);
    else
      out.unsupported.push_back(name);
  }
  out.num_warps = narrow(c.num_warps);
  out.num_stages = narrow(c.num_stages);
  out.num_ctas = narrow(c.num_ctas);
  out.maxnreg = narrow(c.maxnreg);
  out.has_pre_hook = c.has_pre_hook;
  return out;
}

AutotuneSpec public_spec(const frontend::AutotuneInfo &info) {
  AutotuneSpec spec;
  for (const frontend::AutotuneConfig &c : info.configs)
    spec.configs.push_back(public_config(c));
  spec.key = info.key;
  spec.reset_to_zero = info.reset_to_zero;
  spec.restore_value = info.restore_value;
  spec.warmup_ms = narrow(info.warmup);
  spec.rep_ms = narrow(info.rep);
  spec.callables = info.callables;
  spec.error = info.error;
  return spec;
}

frontend::AutotuneInfo frontend_info(const AutotuneSpec &spec, const std::string &name,
                                     const std::vector<KernelParam> &params) {
  auto fail = [&](const std::string &msg) { throw ArgumentError(name + ": autotune: " + msg); };
  auto check_names = [&](const std::vector<std::string> &names, const char *what) {
    for (const std::string &n : names)
      if (std::none_of(params.begin(), params.end(),
                       [&](const KernelParam &p) { return p.name == n; }))
        fail(std::string(what) + " names '" + n + "', which is not a parameter");
  };
  if (spec.configs.empty())
    fail("no configs; give at least one");
  if (!spec.callables.empty() || !spec.error.empty())
    fail("callables and error describe a file's decorator; from C++ use set_autotune_callbacks");
  frontend::AutotuneInfo info;
  for (const Config &c : spec.configs) {
    if (c.has_pre_hook)
      fail("has_pre_hook is a file's Python hook; from C++ use AutotuneCallbacks::pre_hook");
    if (!c.unsupported.empty())
      fail("'" + c.unsupported.front() + "' is listed as unsupported; give its value in meta");
    frontend::AutotuneConfig out;
    for (const auto &[n, value] : c.meta) {
      check_names({n}, "a config");
      const std::optional<ConstValue> v = const_of(value);
      if (!v)
        fail("a config's value of '" + n +
             "' is not a constant (an int, float, bool, string or dtype)");
      out.kwargs.emplace_back(n, *v);
    }
    out.num_warps = widen(c.num_warps);
    out.num_stages = widen(c.num_stages);
    out.num_ctas = widen(c.num_ctas);
    out.maxnreg = widen(c.maxnreg);
    info.configs.push_back(std::move(out));
  }
  check_names(spec.key, "the key");
  check_names(spec.reset_to_zero, "reset_to_zero");
  check_names(spec.restore_value, "restore_value");
  info.key = spec.key;
  info.reset_to_zero = spec.reset_to_zero;
  info.restore_value = spec.restore_value;
  info.warmup = widen(spec.warmup_ms);
  info.rep = widen(spec.rep_ms);
  return info;
}

} // namespace kiln::runtime
