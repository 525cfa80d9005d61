// What @triton.autotune and @triton.heuristics add to a launch: the
// parameters a config or a heuristic gives a value, before defaults apply.
//
// A launch that leaves a config's meta-parameters unset takes the config
// the autotuner chooses for its key (tuning first if the key is new); a
// warmup takes the stored choice, or the first config and marks the bind
// untuned (JitFunction::warmup then compiles every config); arguments given
// explicitly always win over a config.
#include <cstring>

#include "compiler/frontend/py_eval.hpp"
#include "kiln/error.hpp"
#include "runtime/autotuner.hpp"
#include "runtime/jit_function.hpp"

namespace kiln::runtime {

namespace {

using frontend::ConstValue;
using frontend::PyValue;

PyValue py_value(const Arg &a, const std::string &param) {
  switch (a.kind()) {
  case Arg::Kind::None: return PyValue::of(ConstValue::none());
  case Arg::Kind::Int: return PyValue::of(ConstValue::of_int(a.as_int()));
  case Arg::Kind::UInt: return PyValue::opaque("the unsigned integer argument '" + param + "'");
  case Arg::Kind::Float: return PyValue::of(ConstValue::of_float(a.as_float()));
  case Arg::Kind::Bool: return PyValue::of(ConstValue::of_bool(a.as_bool()));
  case Arg::Kind::Pointer: return PyValue::opaque("the tensor argument '" + param + "'");
  case Arg::Kind::Function: return PyValue::opaque("the jit function argument '" + param + "'");
  case Arg::Kind::Str: return PyValue::of(ConstValue::of_str(a.as_str()));
  case Arg::Kind::DType: return PyValue::of(ConstValue::of_dtype(a.dtype()));
  case Arg::Kind::Tuple: {
    PyValue t;
    t.kind = PyValue::Kind::Tuple;
    for (const Arg &e : a.as_tuple())
      t.items.push_back(py_value(e, param));
    return t;
  }
  }
  return PyValue::opaque("?");
}

} // namespace

void JitFunction::apply_decorators(std::span<const Arg> args, Bound &b) const {
  const unsigned np = static_cast<unsigned>(params_.size());
  b.derived.emplace();
  auto set_param = [&](const std::string &name, const ConstValue &v, const char *from) {
    for (unsigned i = 0; i < np; ++i) {
      if (params_[i].name != name)
        continue;
      std::optional<Arg> a = v.kind == ConstValue::Kind::Str
                                 ? Arg(b.derived->strings.emplace_front(v.s).c_str())
                                 : arg_from_const(v);
      if (!a)
        throw ArgumentError(info_.name + ": " + from + " gives '" + name + "' the value " + v.repr() +
                            ", which kiln cannot pass as an argument");
      b.derived->args[i] = *a;
      b.args[i] = &b.derived->args[i];
      return true;
    }
    return false;
  };

  if (const frontend::AutotuneInfo *tune = autotune_) {
    bool missing = false;
    if (tune->configs.empty()) {
      for (unsigned i = 0; i < np; ++i)
        missing |= !b.args[i] && !defaults_[i] && params_[i].is_constexpr;
      if (missing)
        throw ArgumentError(info_.name + " is autotuned over configs kiln could not read, so its meta-parameters "
                            "must be given explicitly: " + tune->error);
    } else {
      // Tune only for a launch that leaves a config's meta-parameter unset
      // (a tuning run sets them all, so it never tunes again).
      bool unset = false;
      for (const auto &[name, value] : tune->configs.front().kwargs)
        for (unsigned i = 0; i < np; ++i)
          unset |= params_[i].name == name && !b.args[i];
      size_t chosen = 0;
      if (unset && autotuner_ && b.spec && b.spec->warmup) {
        const std::optional<size_t> stored = autotuner_->stored(b.args);
        b.untuned = !stored && autotuner_->enabled();
        chosen = stored.value_or(0);
      } else if (unset && autotuner_ && b.spec && !b.spec->dispatch_only) {
        // run() is safe to call from here: its caches are synchronized, and
        // the tuning runs bind every meta-parameter themselves.
        auto *self = const_cast<JitFunction *>(this);
        const LaunchSpec &outer = *b.spec;
        chosen = autotuner_->choose(args, b.args, [self, &outer](std::span<const Arg> a, bool warmup) {
          LaunchSpec s = outer;
          s.warmup = warmup;
          return self->run(a, s);
        });
      }
      const frontend::AutotuneConfig &c = tune->configs[chosen];
      for (const auto &[name, value] : c.kwargs) {
        unsigned i = 0;
        while (i < np && params_[i].name != name)
          ++i;
        if (i == np)
          throw ArgumentError(info_.name + ": the autotune config sets '" + name + "', which is not a parameter");
        if (!b.args[i])
          set_param(name, value, "the autotune config");
      }
      if (c.num_warps && !named_arg(args, "num_warps"))
        b.options.num_warps = static_cast<int>(*c.num_warps);
      if (c.num_stages && !named_arg(args, "num_stages"))
        b.options.num_stages = static_cast<int>(*c.num_stages);
    }
  }

  if (info_.heuristics.empty())
    return;
  // The lambdas see every argument bound so far, by name, as Triton's
  // Heuristics does; each heuristic also sees the ones before it.
  PyValue dict;
  dict.kind = PyValue::Kind::Dict;
  for (unsigned i = 0; i < np; ++i) {
    const Arg *a = b.args[i] ? b.args[i] : defaults_[i] ? &*defaults_[i] : nullptr;
    if (!a)
      continue;
    dict.items.push_back(PyValue::of(ConstValue::of_str(params_[i].name)));
    dict.items.push_back(py_value(*a, params_[i].name));
  }
  // `lambda nargs: num_warps(nargs["N"])` may call a plain helper, its own
  // module's or an imported one.
  frontend::PyEval eval = frontend::module_evaluator(*info_.module);
  auto update = [&](const std::string &name, PyValue v) {
    for (size_t k = 0; k < dict.items.size(); k += 2)
      if (dict.items[k].c.s == name) {
        dict.items[k + 1] = std::move(v);
        return;
      }
    dict.items.push_back(PyValue::of(ConstValue::of_str(name)));
    dict.items.push_back(std::move(v));
  };
  auto given = [&](const std::string &name) {
    for (unsigned i = 0; i < np; ++i)
      if (params_[i].name == name)
        return b.args[i] != nullptr;
    return false;
  };
  for (const frontend::Heuristic &h : info_.heuristics) {
    PyValue v;
    try {
      v = h.lambda ? eval.call_lambda(*h.lambda, dict) : eval.call_function(*h.def, {dict}, h.loc);
      if (v.kind == PyValue::Kind::Unknown) // `lambda _: torch.cuda.is_available()`
        throw info_.module->ast.source->error(h.loc, "it depends on " + v.c.s +
                                                         ", which only the host knows");
    } catch (const CompileError &e) {
      // A heuristic that asks host code (attorch's `lambda _: allow_tf32()`
      // reads torch's device capability): Triton would run it; kiln cannot,
      // so a value the caller passed stands in for it.
      if (given(h.name))
        continue;
      throw ArgumentError(info_.name + ": kiln cannot evaluate the heuristic for '" + h.name +
                          "'; pass " + h.name + "= explicitly (" + e.what() + ")");
    }
    if (v.kind != PyValue::Kind::Const)
      throw ArgumentError(info_.name + ": the heuristic for '" + h.name + "' gave a value that is not a number, "
                          "bool or None");
    if (h.name == "num_warps" || h.name == "num_stages") {
      if (v.c.kind != ConstValue::Kind::Int)
        throw ArgumentError(info_.name + ": the heuristic for " + h.name + " must give an int, not " + v.c.repr());
      (h.name == "num_warps" ? b.options.num_warps : b.options.num_stages) = static_cast<int>(v.c.i);
      continue;
    }
    set_param(h.name, v.c, "a heuristic");
    update(h.name, std::move(v));
  }
}

} // namespace kiln::runtime
