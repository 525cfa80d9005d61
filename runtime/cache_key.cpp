#include "runtime/cache_key.hpp"

#include <set>

#include "compiler/support/sha256.hpp"

namespace kiln::runtime {

namespace {

using frontend::Body;
using frontend::Expr;
using frontend::ExprKind;

void names_in_expr(const Expr &e, std::vector<std::string> &out) {
  if (e.kind == ExprKind::Name)
    out.push_back(e.id);
  for (const auto &c : e.children)
    if (c)
      names_in_expr(*c, out);
  for (const auto &k : e.keywords)
    names_in_expr(*k.value, out);
}

void names_in_body(const Body &body, std::vector<std::string> &out) {
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
  const frontend::ModuleInfo *own = nullptr; ///< the module whose globals the host may change
  const compiler::GlobalValues *globals = nullptr;
  std::set<const frontend::JitFunctionInfo *> visiting;
};

std::string key_of(const frontend::JitFunctionInfo &fn, KeyContext &ctx) {
  ctx.visiting.insert(&fn);
  const frontend::ModuleInfo &mod = *fn.module;
  const compiler::GlobalValues &globals = &mod == ctx.own ? *ctx.globals : mod.globals;
  Sha256 h;
  h.field(fn.source).field(std::to_string(fn.first_line));
  if (&mod != ctx.own)
    h.field("module:" + mod.ast.source->path());
  std::vector<std::string> names;
  names_in_body(fn.def->body, names);
  std::set<std::string> seen;
  for (const std::string &n : names) {
    if (!seen.insert(n).second)
      continue;
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

std::string function_cache_key(const frontend::JitFunctionInfo &fn, const compiler::GlobalValues &globals) {
  KeyContext ctx{fn.module, &globals, {}};
  return key_of(fn, ctx);
}

std::string compile_key(const std::string &function_key, const std::string &specialization,
                        const Options &options, const compiler::Target &target) {
  return Sha256()
      .field("kiln-0.1.0")
      .field(function_key)
      .field(specialization)
      .field(options.str())
      .field(target.str())
      .field(target.features)
      .hex_digest();
}

} // namespace kiln::runtime
