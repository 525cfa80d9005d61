#include "compiler/frontend/decorators.hpp"

#include "compiler/frontend/module_info.hpp"
#include "compiler/frontend/py_eval.hpp"

namespace kiln::frontend {

namespace {

[[noreturn]] void fail(const JitFunctionInfo &fn, Loc loc, const std::string &msg) {
  throw fn.module->ast.source->error(loc, msg);
}

bool is_none(const Expr &e) { return e.kind == ExprKind::None; }

/// A list of parameter names (`key=["M", "N"]`), each checked against `fn`
/// unless `ignore_unknown` (Triton's tuner skips key names that are not
/// parameters, so files with such a typo run under Triton).
std::vector<std::string> param_names(const JitFunctionInfo &fn, const Expr &e, PyEval &eval, const char *what,
                                     bool ignore_unknown = false) {
  if (is_none(e))
    return {};
  PyValue v = eval.eval(e);
  if (v.kind != PyValue::Kind::List && v.kind != PyValue::Kind::Tuple)
    fail(fn, e.loc, std::string(what) + " must be a list of parameter names");
  std::vector<std::string> names;
  for (const PyValue &item : v.items) {
    if (item.kind != PyValue::Kind::Const || item.c.kind != ConstValue::Kind::Str)
      fail(fn, e.loc, std::string(what) + " must list parameter names as strings");
    bool found = false;
    for (const ParamInfo &p : fn.params)
      found |= p.name == item.c.s;
    if (!found && ignore_unknown)
      continue;
    if (!found)
      fail(fn, e.loc, std::string(what) + " names '" + item.c.s + "', which is not a parameter of '" + fn.name + "'");
    names.push_back(item.c.s);
  }
  return names;
}

/// `**kwargs` in triton.autotune(...): flash-linear-attention passes its
/// tuner-cache choice this way (`**autotune_cache_kwargs`, a dict host code
/// builds from the Triton version). Those are choices of Triton's Python
/// tuner that kiln's tuner makes itself; the arguments that shape the
/// kernel's configs must be written out.
void read_autotune_splat(const JitFunctionInfo &fn, AutotuneInfo &info, const Expr &value,
                         PyEval &eval) {
  PyValue d;
  try {
    d = eval.eval(value);
  } catch (const CompileError &) {
    return; // built by host code, which kiln does not run: taken as tuner choices
  }
  if (d.kind != PyValue::Kind::Dict)
    fail(fn, value.loc, "triton.autotune's ** argument must be a dict");
  for (size_t k = 0; k + 1 < d.items.size(); k += 2) {
    const PyValue &key = d.items[k];
    if (key.kind != PyValue::Kind::Const || key.c.kind != ConstValue::Kind::Str)
      fail(fn, value.loc, "triton.autotune's ** argument must map argument names to values");
    const std::string &name = key.c.s;
    const PyValue &v = d.items[k + 1];
    if (name == "cache_results" || name == "use_cuda_graph")
      continue;
    if ((name == "warmup" || name == "rep") && v.kind == PyValue::Kind::Const &&
        v.c.kind == ConstValue::Kind::Int) {
      (name == "warmup" ? info.warmup : info.rep) = v.c.i;
      continue;
    }
    fail(fn, value.loc,
         "triton.autotune's '" + name + "' passed through ** is not read by kiln; write it as " +
             name + "=...");
  }
}

void read_autotune(JitFunctionInfo &fn, const Expr &d, PyEval &eval) {
  AutotuneInfo info;
  info.loc = d.loc;
  static const char *const kPositional[] = {"configs", "key", "prune_configs_by", "reset_to_zero", "restore_value"};
  std::vector<std::pair<std::string, const Expr *>> args;
  for (size_t i = 1; i < d.children.size(); ++i) {
    if (i - 1 >= std::size(kPositional))
      fail(fn, d.children[i]->loc, "triton.autotune takes at most 5 positional arguments");
    args.emplace_back(kPositional[i - 1], d.children[i].get());
  }
  for (const Keyword &k : d.keywords) {
    if (k.name.empty()) {
      read_autotune_splat(fn, info, *k.value, eval);
      continue;
    }
    args.emplace_back(k.name, k.value.get());
  }
  bool has_configs = false;
  for (const auto &[name, value] : args) {
    if (name == "configs") {
      has_configs = true;
      try {
        PyValue list = eval.eval(*value);
        if (list.kind != PyValue::Kind::List && list.kind != PyValue::Kind::Tuple)
          fail(fn, value->loc, "triton.autotune's configs must be a list of triton.Config");
        for (const PyValue &c : list.items) {
          if (c.kind != PyValue::Kind::Config)
            fail(fn, value->loc, "triton.autotune's configs must be a list of triton.Config");
          info.configs.push_back(*c.config);
        }
      } catch (const CompileError &e) {
        info.error = e.what();
      }
    } else if (name == "key") {
      info.key = param_names(fn, *value, eval, "triton.autotune's key", true);
    } else if (name == "reset_to_zero") {
      info.reset_to_zero = param_names(fn, *value, eval, "reset_to_zero");
    } else if (name == "restore_value") {
      info.restore_value = param_names(fn, *value, eval, "restore_value");
    } else if (name == "warmup" || name == "rep") {
      if (is_none(*value))
        continue;
      PyValue v = eval.eval(*value);
      if (v.kind != PyValue::Kind::Const || v.c.kind != ConstValue::Kind::Int)
        fail(fn, value->loc, "triton.autotune's " + name + " must be an int (milliseconds)");
      (name == "warmup" ? info.warmup : info.rep) = v.c.i;
    } else if (name == "prune_configs_by" || name == "pre_hook" || name == "post_hook" || name == "do_bench" ||
               name == "perf_model") {
      if (!is_none(*value))
        info.callables.push_back(name);
    } else if (name == "use_cuda_graph" || name == "cache_results") {
      // Benchmarking choices of Triton's Python tuner; kiln's tuner decides these itself.
    } else {
      fail(fn, value->loc, "triton.autotune has no argument '" + name + "'");
    }
  }
  if (!has_configs)
    fail(fn, d.loc, "triton.autotune needs configs=[triton.Config(...), ...]");
  if (info.error.empty() && info.configs.empty())
    fail(fn, d.loc, "triton.autotune's configs list is empty");
  fn.autotune = std::move(info);
}

void read_heuristics(JitFunctionInfo &fn, const Expr &d, PyEval &eval) {
  const Expr *values = d.children.size() == 2 ? d.children[1].get() : nullptr;
  for (const Keyword &k : d.keywords)
    if (k.name == "values")
      values = k.value.get();
  if (!values)
    fail(fn, d.loc, "triton.heuristics takes one dict {\"NAME\": lambda args: ...}");
  // A dict written in place, or one that module-level data builds. One
  // that host code builds (FlagGems reads its heuristics from a config
  // file) leaves the kernel usable with those values given explicitly.
  PyValue dict;
  try {
    dict = eval.eval(*values);
  } catch (const CompileError &e) {
    fn.heuristics_error = e.what();
    return;
  }
  if (dict.kind != PyValue::Kind::Dict)
    fail(fn, values->loc, "triton.heuristics takes one dict {\"NAME\": lambda args: ...}");
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue &key = dict.items[i], &v = dict.items[i + 1];
    if (key.kind != PyValue::Kind::Const || key.c.kind != ConstValue::Kind::Str)
      fail(fn, values->loc, "triton.heuristics' keys must be parameter names as strings");
    const std::string &name = key.c.s;
    const Loc loc = v.lambda ? v.lambda->loc : v.def ? v.def->loc : values->loc;
    const bool lambda = v.kind == PyValue::Kind::Lambda && v.lambda->params.size() == 1;
    if (v.kind == PyValue::Kind::Function && v.home) {
      // A function of another file: the launch-time evaluator runs on this
      // module's names only; a value passed at launch stands in for it.
      fn.heuristics_error = "the heuristic for '" + name +
                            "' is a function imported from another file, "
                            "which kiln does not run at launch";
      return;
    }
    const bool def = v.kind == PyValue::Kind::Function && v.def->params.size() == 1;
    if (!lambda && !def)
      fail(fn, loc,
           "the heuristic for '" + name +
               "' must be a lambda or a function of one argument (the arguments)");
    bool known = name == "num_warps" || name == "num_stages";
    for (const ParamInfo &p : fn.params)
      known |= p.name == name;
    if (!known)
      fail(fn, loc, "the heuristic '" + name + "' names no parameter of '" + fn.name + "'");
    fn.heuristics.push_back(
        Heuristic{name, lambda ? v.lambda : nullptr, def ? v.def : nullptr, loc});
  }
}

} // namespace

void read_decorator(JitFunctionInfo &fn, const std::string &path, const Expr &decorator, PyEval &eval) {
  if (decorator.kind != ExprKind::Call)
    fail(fn, decorator.loc, "@" + path + " needs arguments");
  if (path == "triton.autotune")
    read_autotune(fn, decorator, eval);
  else
    read_heuristics(fn, decorator, eval);
}

} // namespace kiln::frontend
