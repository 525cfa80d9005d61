// A launch's compile request and its compile key: the specialization, the
// options, the globals the compile reads (a snapshot of every module it may
// reach) and the full keys of the jit functions passed as arguments.
#include "compiler/compile.hpp"
#include "kiln/error.hpp"
#include "runtime/cache_key.hpp"
#include "runtime/context.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/module_state.hpp"

namespace kiln::runtime {

compiler::CompileRequest JitFunction::make_request(const Bound &b,
                                                   const compiler::Target &target) const {
  compiler::CompileRequest req;
  req.module = module_->info();
  req.function = &info_;
  for (unsigned i = 0; i < params_.size(); ++i)
    req.params.push_back(param_spec(i, *b.args[i]));
  for (unsigned i = 0; i < params_.size(); ++i)
    if (!req.params[i].is_constexpr && !req.params[i].is_pointer && !req.params[i].is_tuple &&
        (req.params[i].dtype == DType::f16 || req.params[i].dtype == DType::bf16))
      arg_error("scalar parameter '" + params_[i].name + "' of type " +
                std::string(dtype_name(req.params[i].dtype)) + " is not supported; use fp32");
  req.options = b.options;
  req.target = target;
  req.dump_dir = Context::get().knobs().dump_dir;
  req.override_dir = Context::get().knobs().override_dir;
  return req;
}

CompiledKernel JitFunction::compile_only(std::span<const Arg> args,
                                         const compiler::Target &target) {
  Bound b;
  bind(args, b);
  compiler::CompileRequest req = make_request(b, target);
  const GlobalsSnapshot globals = globals_snapshot(b);
  req.globals = &globals.own;
  req.other_globals = &globals.others;
  CompiledKernel k = compiler::compile(req).kernel;
  k.key = compile_key(key_inputs(b, globals, k.specialization, target));
  return k;
}

namespace {

/// The jit functions among `a` (a tuple's elements too).
void function_args(const Arg &a, std::vector<const JitFunction *> &out) {
  if (a.kind() == Arg::Kind::Function)
    out.push_back(a.as_function());
  else if (a.kind() == Arg::Kind::Tuple)
    for (const Arg &e : a.as_tuple())
      function_args(e, out);
}

} // namespace

GlobalsSnapshot JitFunction::globals_snapshot(const Bound &b) const {
  GlobalsSnapshot g = module_->snapshot();
  // A jit function passed as an argument reads its own module's globals.
  std::vector<const JitFunction *> fns;
  for (unsigned i = 0; i < params_.size(); ++i)
    function_args(*b.args[i], fns);
  for (const JitFunction *f : fns)
    if (&f->module() != module_)
      g.add(f->module());
  return g;
}

CompileKeyInputs JitFunction::key_inputs(const Bound &b, const GlobalsSnapshot &g,
                                         const std::string &specialization,
                                         const compiler::Target &target) const {
  CompileKeyInputs in;
  in.function_key = function_cache_key(info_, g.own, &g.others);
  in.specialization = specialization;
  std::vector<const JitFunction *> fns;
  for (unsigned i = 0; i < params_.size(); ++i)
    function_args(*b.args[i], fns);
  for (const JitFunction *f : fns) {
    const frontend::ModuleInfo *mod = f->info().module;
    auto it = g.others.find(mod);
    const compiler::GlobalValues &own = mod == info_.module    ? g.own
                                        : it != g.others.end() ? it->second
                                                               : mod->globals;
    in.constexpr_function_keys.push_back(function_cache_key(f->info(), own, &g.others));
  }
  in.options = b.options;
  in.target = target;
  in.code_knobs = Context::get().knobs().code_knobs();
  return in;
}

} // namespace kiln::runtime
