#include "runtime/cache_key.hpp"

#include <set>
#include <string_view>
#include <unordered_set>

#include "compiler/support/sha256.hpp"
#include "kiln/version.hpp"

namespace kiln::runtime {

namespace {

using frontend::Body;
using frontend::Expr;
using frontend::ExprKind;

// Views of the AST's own strings: the key is computed on a disk hit's
// path, and a copy of every name (and a std::set of them) cost ~5 us of
// normalize's ~30.
void names_in_expr(const Expr &e, std::vector<std::string_view> &out) {
  if (e.kind == ExprKind::Name)
    out.push_back(e.id);
  for (const auto &c : e.children)
    if (c)
      names_in_expr(*c, out);
  for (const auto &k : e.keywords)
    names_in_expr(*k.value, out);
}

void names_in_body(const Body &body, std::vector<std::string_view> &out) {
  for (const auto &s : body) {
    for (const auto &t : s->targets)
      names_in_expr(*t, out);
    for (const Expr *e : {s->value.get(), s->test.get(), s->annotation.get()})
      if (e)
        names_in_expr(*e, out);
    names_in_body(s->body, out);
    names_in_body(s->orelse, out);
  }
}

struct KeyContext {
  const frontend::ModuleInfo *own = nullptr;
  const compiler::GlobalValues *globals = nullptr; ///< the current values of `own`'s globals
  const compiler::ModuleGlobals *others = nullptr;
  std::set<const frontend::JitFunctionInfo *> visiting;

  const compiler::GlobalValues &globals_of(const frontend::ModuleInfo &mod) const {
    if (&mod == own)
      return *globals;
    if (others)
      if (auto it = others->find(&mod); it != others->end())
        return it->second;
    return mod.globals;
  }
};

std::string key_of(const frontend::JitFunctionInfo &fn, KeyContext &ctx) {
  ctx.visiting.insert(&fn);
  const frontend::ModuleInfo &mod = *fn.module;
  const compiler::GlobalValues &globals = ctx.globals_of(mod);
  Sha256 h;
  h.field(fn.source).field(std::to_string(fn.first_line));
  // Decorator options change the binary of the function and of its callers.
  h.field(fn.noinline ? "noinline" : "inline").field(fn.debug ? "debug" : "nodebug");
  if (&mod != ctx.own)
    h.field("module:" + mod.ast.source->path());
  std::vector<std::string_view> names;
  names_in_body(fn.def->body, names);
  std::unordered_set<std::string_view> seen(names.size());
  for (const std::string_view view : names) {
    if (!seen.insert(view).second)
      continue;
    const std::string n(view);
    if (const frontend::JitFunctionInfo *callee = mod.visible_function(n)) {
      h.field("fn:" + n);
      h.field(ctx.visiting.count(callee) ? "recursion:" + n : key_of(*callee, ctx));
      continue;
    }
    if (auto c = mod.compile_time_functions.find(n);
        c != mod.compile_time_functions.end() && c->second->constexpr_decorated) {
      // A constexpr function may call any plain def of its module.
      h.field("constexpr_fn:" + n);
      for (const auto &[name, f] : mod.compile_time_functions)
        h.field(name).field(f->source);
      continue;
    }
    if (auto m = mod.imported_modules.find(n); m != mod.imported_modules.end()) {
      // `utils.helper(...)`: the imported file's whole source stands for
      // whatever the kernel reaches in it.
      h.field("import:" + n).field(m->second->ast.source->text());
      for (const auto &[name, g] : ctx.globals_of(*m->second))
        if (g.is_constexpr)
          h.field("global:" + n + "." + name + "=" + g.value.repr());
      continue;
    }
    auto it = globals.find(n);
    if (it != globals.end() && it->second.is_constexpr)
      h.field("global:" + n + "=" + it->second.value.repr());
  }
  ctx.visiting.erase(&fn);
  return h.hex_digest();
}

} // namespace

std::string function_cache_key(const frontend::JitFunctionInfo &fn,
                               const compiler::GlobalValues &globals,
                               const compiler::ModuleGlobals *others) {
  KeyContext ctx{fn.module, &globals, others, {}};
  return key_of(fn, ctx);
}

std::string compile_key(const CompileKeyInputs &in) {
  const VersionInfo &v = version_info();
  Sha256 h;
  h.field("kiln").field(v.version).field(v.build_id).field(v.llvm_version);
  h.field(in.function_key).field(in.specialization);
  for (const std::string &k : in.constexpr_function_keys)
    h.field("fn-arg:" + k);
  // Every option by name, not through Options::str(), which is for display.
  const Options &o = in.options;
  h.field("num_warps=" + std::to_string(o.num_warps))
      .field("num_stages=" + std::to_string(o.num_stages))
      .field("num_ctas=" + std::to_string(o.num_ctas))
      .field(o.enable_fp_fusion ? "fp_fusion" : "no_fp_fusion")
      .field(o.debug ? "debug" : "nodebug");
  h.field(in.target.str()).field(in.target.features).field("knobs:" + in.code_knobs);
  return h.hex_digest();
}

} // namespace kiln::runtime
