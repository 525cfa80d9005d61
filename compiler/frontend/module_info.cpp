// Module-level analysis of a kernel file, as Triton resolves a kernel's
// names: imports of triton under any alias, constexpr globals, jit functions
// (decorated or made with `triton.jit(fn)`), and jit functions and globals
// of other kernel files reached by imports. Anything else at module level is
// host code: it is recorded by name and never an error by itself.
#include "compiler/frontend/module_info.hpp"

#include <algorithm>
#include <optional>

#include "compiler/frontend/import_demand.hpp"
#include "compiler/frontend/ir_gen_impl.hpp"
#include "compiler/frontend/module_set.hpp"
#include "compiler/frontend/py_eval.hpp"

namespace kiln::frontend {

namespace {

// The canonical spelling of each triton module kiln models, longest first.
struct TritonModule {
  std::string_view path;
  ModuleAlias alias;
};
constexpr TritonModule kTritonModules[] = {
    {"triton.language.extra.cuda.libdevice", ModuleAlias::Libdevice},
    {"triton.language.extra.libdevice", ModuleAlias::Libdevice},
    {"triton.language.extra.cuda", ModuleAlias::Extra},
    {"triton.language.extra", ModuleAlias::Extra},
    {"triton.language.math", ModuleAlias::LanguageMath},
    // Submodules whose public members triton.language re-exports.
    {"triton.language.standard", ModuleAlias::Language},
    {"triton.language.core", ModuleAlias::Language},
    {"triton.language", ModuleAlias::Language},
    {"triton", ModuleAlias::Triton},
};

std::string_view alias_path(ModuleAlias a) {
  switch (a) {
  case ModuleAlias::Triton: return "triton";
  case ModuleAlias::Language: return "triton.language";
  case ModuleAlias::LanguageMath: return "triton.language.math";
  case ModuleAlias::Extra: return "triton.language.extra";
  case ModuleAlias::Libdevice: return "triton.language.extra.libdevice";
  case ModuleAlias::Math: return "math";
  }
  return "";
}

/// Which modelled module a canonical path is, exactly.
std::optional<ModuleAlias> module_of_path(std::string_view path) {
  if (path == "math")
    return ModuleAlias::Math;
  for (const TritonModule &m : kTritonModules)
    if (path == m.path)
      return m.alias;
  return std::nullopt;
}

/// `path` split into (modelled module, member), e.g.
/// "triton.language.extra.cuda.libdevice.tanh" -> (LanguageMath, "tanh").
std::optional<std::pair<ModuleAlias, std::string>> member_of_path(std::string_view path) {
  for (const TritonModule &m : kTritonModules)
    if (path.size() > m.path.size() && path.substr(0, m.path.size()) == m.path && path[m.path.size()] == '.') {
      std::string_view member = path.substr(m.path.size() + 1);
      if (member.find('.') != std::string_view::npos)
        return std::nullopt;
      return std::make_pair(m.alias, std::string(member));
    }
  if (path.substr(0, 5) == "math." && path.find('.', 5) == std::string_view::npos)
    return std::make_pair(ModuleAlias::Math, std::string(path.substr(5)));
  return std::nullopt;
}

/// The (module, name) pairs being evaluated across modules.
using EvalGuard = std::set<std::pair<const ModuleInfo *, std::string>>;

/// An evaluator of `m`'s module-level data: constants, data assigned to
/// names, and plain functions (its own and imported ones) that build data.
/// `evaluating` is shared with the evaluators of the modules it calls into.
PyEval module_evaluator(const ModuleInfo &m, std::shared_ptr<EvalGuard> evaluating) {
  const ModuleInfo *mod = &m;
  return PyEval(
      *m.ast.source,
      [mod, evaluating](const std::string &name, std::string &why) -> std::optional<PyValue> {
        if (auto g = mod->globals.find(name); g != mod->globals.end())
          return PyValue::of(g->second.value);
        // Data (a config list), its own or imported, evaluated on its home
        // module's names; a name already being evaluated (a cycle) has no value.
        const std::pair<const ModuleInfo *, const Expr *> data =
            [&]() -> std::pair<const ModuleInfo *, const Expr *> {
          if (auto e = mod->data_exprs.find(name); e != mod->data_exprs.end())
            return {mod, e->second};
          if (auto e = mod->imported_data.find(name); e != mod->imported_data.end())
            return e->second;
          return {nullptr, nullptr};
        }();
        if (data.second && evaluating->insert({mod, name}).second) {
          struct Done {
            EvalGuard &s;
            std::pair<const ModuleInfo *, std::string> key;
            ~Done() { s.erase(key); }
          } done{*evaluating, {mod, name}};
          PyEval home = module_evaluator(*data.first, evaluating);
          return home.eval(*data.second);
        }
        PyValue f;
        f.kind = PyValue::Kind::Function;
        if (auto d = mod->plain_functions.find(name); d != mod->plain_functions.end()) {
          f.def = d->second;
          return f;
        }
        if (auto d = mod->imported_plain_functions.find(name);
            d != mod->imported_plain_functions.end()) {
          f.def = d->second.second;
          f.home = std::make_shared<const PyEval>(module_evaluator(*d->second.first, evaluating));
          return f;
        }
        if (auto h = mod->host_names.find(name); h != mod->host_names.end())
          why = h->second.what + " (line " + std::to_string(h->second.loc.line) + ")";
        return std::nullopt;
      },
      [mod](const std::string &d) { return mod->canonical(d); });
}

class Analyzer {
public:
  Analyzer(ModuleInfo &m, ModuleSet &set, const FileDemand *demand)
      : m_(m), set_(set), src_(*m.ast.source), demand_(demand) {}

  void run() {
    for (const StmtPtr &s : m_.ast.body)
      top_level(*s);
    // Decorator arguments may name anything the module binds, also below
    // the function, as Python evaluates them when the module is imported.
    for (const Decorator &d : decorators_) {
      JitFunctionInfo *fn = d.fn;
      if (std::none_of(m_.functions.begin(), m_.functions.end(), [&](const auto &f) { return f.get() == fn; }))
        continue; // rebound to something else later in the file
      if (fn->error)
        continue;
      PyEval eval = evaluator();
      const Expr &callee = d.expr->kind == ExprKind::Call ? *d.expr->children[0] : *d.expr;
      const size_t before = fn->heuristics.size();
      try {
        read_decorator(*fn, canonical(dotted_name(callee)), *d.expr, eval);
      } catch (const CompileError &e) {
        fn->error = std::make_shared<const CompileError>(e);
      }
      // `k = triton.heuristics(...)(k)` wraps what is there already: its
      // heuristics run before the ones decorated nearer the function.
      if (d.outer)
        std::rotate(fn->heuristics.begin(), fn->heuristics.begin() + static_cast<std::ptrdiff_t>(before),
                    fn->heuristics.end());
    }
    // The helpers a constexpr function may call: every other plain def.
    if (!m_.compile_time_functions.empty())
      for (const auto &[name, def] : plain_defs_)
        if (!m_.compile_time_functions.count(name))
          m_.compile_time_functions[name] = compile_time_function(name, *def, false);
  }

  /// An evaluator of module-level data: constants, data assigned to
  /// names, and plain functions that build data.
  PyEval evaluator() { return module_evaluator(m_, evaluating_); }

private:
  [[noreturn]] void fail(Loc loc, const std::string &msg) { throw src_.error(loc, msg); }

  // ---- names -------------------------------------------------------------

  std::string canonical(const std::string &name) const { return m_.canonical(name); }

  bool is_path(const Expr &e, std::string_view path) const { return canonical(dotted_name(e)) == path; }

  /// Whether a binding at this point may replace an earlier one. Inside a
  /// module-level `if`/`try` that kiln cannot decide, the first binding of
  /// a name wins (`try: from triton.language.extra.cuda import libdevice`
  /// followed by a fallback import in `except`).
  bool may_bind(const std::string &name) const {
    if (conditional_ == 0)
      return true;
    // A host value bound first (`triton_tanh = tl.extra.intel.libdevice.tanh`
    // on one branch of a version check) gives way to one kiln can use.
    return !m_.aliases.count(name) && !m_.language_names.count(name) && !m_.globals.count(name) &&
           !m_.imported_functions.count(name) && !m_.imported_modules.count(name) && !m_.function(name);
  }

  /// Removes every earlier binding of `name` (Python rebinding).
  void unbind(const std::string &name) {
    m_.aliases.erase(name);
    m_.language_names.erase(name);
    m_.globals.erase(name);
    m_.imported_functions.erase(name);
    m_.imported_modules.erase(name);
    m_.host_names.erase(name);
    plain_defs_.erase(name);
    m_.imported_plain_functions.erase(name);
    m_.compile_time_functions.erase(name);
    m_.data_exprs.erase(name);
    m_.imported_data.erase(name);
    std::erase_if(m_.functions, [&](const auto &f) { return f->name == name; });
  }

  /// False when an earlier binding stands (see may_bind).
  bool bind_host(const std::string &name, std::string what, Loc loc, std::string module = "") {
    if (!may_bind(name) || (conditional_ > 0 && m_.host_names.count(name)))
      return false;
    unbind(name);
    m_.host_names[name] = HostName{std::move(what), loc, std::move(module)};
    return true;
  }

  void bind_alias(const std::string &name, ModuleAlias a) {
    if (!may_bind(name))
      return;
    unbind(name);
    m_.aliases[name] = a;
  }

  void bind_member(const std::string &name, ModuleAlias a, std::string member) {
    if (!may_bind(name))
      return;
    unbind(name);
    m_.language_names[name] = {a, std::move(member)};
  }

  /// Binds `name` to the module at canonical path `path` or to a member of one.
  /// False when `path` is not part of what kiln models.
  bool bind_triton_path(const std::string &name, const std::string &path) {
    if (auto a = module_of_path(path)) {
      bind_alias(name, *a);
      return true;
    }
    if (auto mem = member_of_path(path)) {
      bind_member(name, mem->first, mem->second);
      return true;
    }
    return false;
  }

  // ---- statements --------------------------------------------------------

  void top_level(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Import: return import(s);
    case StmtKind::ImportFrom: return import_from(s);
    case StmtKind::Assign: return assign(s);
    case StmtKind::AnnAssign: return ann_assign(s);
    case StmtKind::AugAssign:
      if (s.targets[0]->kind == ExprKind::Name)
        bind_host(s.targets[0]->id, "a value changed by an augmented assignment", s.loc);
      return;
    case StmtKind::FunctionDef: return function_def(s);
    case StmtKind::If: {
      if (is_name_main_test(*s.test))
        return; // the file's own main program: never part of a kernel
      std::optional<ConstValue> test = try_constant(*s.test);
      if (test) {
        for (const StmtPtr &c : test->truthy() ? s.body : s.orelse)
          top_level(*c);
        return;
      }
      return conditional(s);
    }
    case StmtKind::ClassDef:
      bind_host(s.id, "a class", s.loc);
      return;
    case StmtKind::AsyncFunctionDef:
      bind_host(s.id, "an async function", s.loc);
      return;
    case StmtKind::Try:
    case StmtKind::TryStar:
      // `try: from triton.language.extra.cuda import libdevice` with a
      // fallback import in `except`: the first binding of a name wins.
      ++conditional_;
      for (const StmtPtr &c : s.body)
        top_level(*c);
      for (const ExceptHandler &h : s.handlers)
        for (const StmtPtr &c : h.body)
          top_level(*c);
      for (const StmtPtr &c : s.orelse)
        top_level(*c);
      for (const StmtPtr &c : s.finalbody)
        top_level(*c);
      --conditional_;
      return;
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::With:
    case StmtKind::AsyncWith:
    case StmtKind::AsyncFor: return conditional(s);
    default:
      // Host code kiln never runs (expressions, raise, del, match, ...); the
      // names such statements bind stay unknown to kernels.
      return;
    }
  }

  /// The bodies of a statement kiln cannot decide, read for the names they
  /// bind with the first binding winning.
  void conditional(const Stmt &s) {
    ++conditional_;
    for (const StmtPtr &c : s.body)
      top_level(*c);
    for (const StmtPtr &c : s.orelse)
      top_level(*c);
    --conditional_;
  }

  void import(const Stmt &s) {
    for (const ImportName &n : s.names) {
      // `import a.b.c` binds `a`; `import a.b.c as x` binds x to a.b.c.
      const std::string path = n.alias.empty() ? n.name.substr(0, n.name.find('.')) : n.name;
      const std::string as = n.alias.empty() ? path : n.alias;
      if (is_modelled_import(n.name)) {
        if (!bind_triton_path(as, path))
          bind_host(as, "the module '" + path + "', which kernels cannot use", s.loc);
        continue;
      }
      if (!needed(as)) {
        bind_host(as, "the module '" + path + "', " + kNotLoaded, s.loc, path);
        continue;
      }
      import_module(as, path, 0, s.loc);
    }
  }

  /// Whether an import binding `name` must be loaded (import_demand.hpp).
  bool needed(const std::string &name) const { return !demand_ || demand_->needs(name); }
  static constexpr const char *kNotLoaded =
      "which no kernel reads (kiln did not load it; a bug if a kernel reads it: please report it)";

  void import_from(const Stmt &s) {
    const int level = import_level(s);
    const std::string module = s.module.substr(level);
    for (const ImportName &n : s.names) {
      const std::string as = n.alias.empty() ? n.name : n.alias;
      if (n.name == "*") {
        import_star(module, level, s.loc);
        continue;
      }
      if (level == 0 && is_modelled_import(module)) {
        if (!bind_triton_path(as, module + "." + n.name))
          bind_host(as, "'" + module + "." + n.name + "', which kernels cannot use", s.loc);
        continue;
      }
      if (!needed(as)) {
        bind_host(as,
                  "'" + std::string(static_cast<size_t>(level), '.') + module + "." + n.name +
                      "', " + kNotLoaded,
                  s.loc);
        continue;
      }
      import_member(as, module, n.name, level, s.loc);
    }
  }

  /// The analysed module `dotted` imported from this file, or null with
  /// `why` set when it is not a kernel file kiln can load.
  const ModuleInfo *load_module(const std::string &dotted, int level, std::string &why) {
    auto file = set_.find_file(src_.path(), dotted, level);
    const std::string shown = std::string(static_cast<size_t>(level), '.') + dotted;
    if (!file) {
      why = "the module '" + shown + "', which is not a file on kiln's module search path " +
            "(the kernel file's folder, its package root and KILN_PATH)";
      return nullptr;
    }
    try {
      return &set_.load(*file);
    } catch (const Error &e) {
      why = "the module '" + shown + "' (" + *file + "), which kiln could not load: " + e.what();
      return nullptr;
    }
  }

  void import_module(const std::string &as, const std::string &dotted, int level, Loc loc) {
    std::string why;
    if (const ModuleInfo *mod = load_module(dotted, level, why)) {
      if (!may_bind(as))
        return;
      unbind(as);
      m_.imported_modules[as] = mod;
    } else {
      bind_host(as, why, loc, dotted);
    }
  }

  void import_member(const std::string &as, const std::string &module, const std::string &name, int level,
                     Loc loc) {
    std::string why;
    const ModuleInfo *mod = load_module(module, level, why);
    if (!mod) {
      // `from . import utils` names a module, not a member.
      std::string sub = module.empty() ? name : module + "." + name;
      std::string why2;
      if (const ModuleInfo *m2 = load_module(sub, level, why2)) {
        if (may_bind(as)) {
          unbind(as);
          m_.imported_modules[as] = m2;
        }
        return;
      }
      bind_host(as, why, loc);
      return;
    }
    if (!may_bind(as))
      return;
    if (!bind_member_of(as, *mod, name, loc)) {
      std::string sub = module.empty() ? name : module + "." + name;
      std::string why2;
      if (const ModuleInfo *m2 = load_module(sub, level, why2)) {
        unbind(as);
        m_.imported_modules[as] = m2;
      } else {
        bind_host(as,
                  "'" + name + "', which " + mod->ast.source->path() +
                      " does not define at module level",
                  loc);
      }
    }
  }

  /// `from module import *` of a kernel file: every public name it binds
  /// (those of its `__all__` when it has one, else those not starting with
  /// '_'), as Python binds them. A star import of a module that is not a
  /// kernel file (`from torch import *`) binds names kiln cannot list; reads
  /// of them stay unknown.
  void import_star(const std::string &module, int level, Loc loc) {
    std::string why;
    const ModuleInfo *mod = load_module(module, level, why);
    if (!mod)
      return;
    std::vector<std::string> names;
    if (mod->all_names) {
      names = *mod->all_names;
    } else {
      for (const std::string &n : mod->bound_names())
        if (n.empty() || n[0] != '_')
          names.push_back(n);
    }
    for (const std::string &n : names)
      if (may_bind(n))
        bind_member_of(n, *mod, n, loc);
  }

  /// Binds `as` to what `mod` binds to `name`; false when `mod` binds no such name.
  bool bind_member_of(const std::string &as, const ModuleInfo &from, const std::string &name,
                      Loc loc) {
    const ModuleInfo *mod = &from;
    if (const JitFunctionInfo *fn = mod->visible_function(name)) {
      unbind(as);
      m_.imported_functions[as] = fn;
    } else if (auto g = mod->globals.find(name); g != mod->globals.end()) {
      unbind(as);
      GlobalInfo copy = g->second; // `from m import X` binds a copy, as in Python
      copy.name = as;
      m_.globals[as] = std::move(copy);
    } else if (auto a = mod->aliases.find(name); a != mod->aliases.end()) {
      bind_alias(as, a->second);
    } else if (auto l = mod->language_names.find(name); l != mod->language_names.end()) {
      bind_member(as, l->second.first, l->second.second);
    } else if (auto sm = mod->imported_modules.find(name); sm != mod->imported_modules.end()) {
      unbind(as);
      m_.imported_modules[as] = sm->second;
    } else if (auto h = mod->host_names.find(name); h != mod->host_names.end()) {
      const bool bound =
          bind_host(as, h->second.what + " (imported from " + mod->ast.source->path() + ")", loc,
                    h->second.module);
      // A plain function stays callable by host code here, and data readable,
      // on its own module's names.
      if (auto f = mod->plain_functions.find(name); bound && f != mod->plain_functions.end())
        m_.imported_plain_functions[as] = {mod, f->second};
      else if (auto g = mod->imported_plain_functions.find(name);
               bound && g != mod->imported_plain_functions.end())
        m_.imported_plain_functions[as] = g->second;
      else if (auto d = mod->data_exprs.find(name); bound && d != mod->data_exprs.end())
        m_.imported_data[as] = {mod, d->second};
      else if (auto i = mod->imported_data.find(name); bound && i != mod->imported_data.end())
        m_.imported_data[as] = i->second;
    } else {
      return false;
    }
    return true;
  }

  void assign(const Stmt &s) {
    const Expr &v = *s.value;
    if (s.targets.size() == 1 && s.targets[0]->kind == ExprKind::Name &&
        s.targets[0]->id == "__all__")
      all_names(v);
    for (const ExprPtr &t : s.targets) {
      if (t->kind != ExprKind::Name) {
        bind_targets_host(*t, s.loc);
        continue;
      }
      const std::string &name = t->id;
      // `k = triton.jit(_k)` and `k = triton.jit(_k, noinline=True)`
      if (v.kind == ExprKind::Call && is_path(*v.children[0], "triton.jit")) {
        jit_call(name, v);
        continue;
      }
      if (decorator_call(name, v))
        continue;
      // `tanh = libdevice.tanh`, `tl = triton.language`
      if (const std::string path = canonical(dotted_name(v)); !path.empty() && bind_triton_path(name, path))
        continue;
      if (v.kind == ExprKind::Name) {
        if (auto fn = m_.visible_function(v.id); fn && may_bind(name)) {
          unbind(name);
          m_.imported_functions[name] = fn;
          continue;
        }
      }
      if (v.kind == ExprKind::IfExp)
        if (auto c = constexpr_either_way(v)) {
          bind_global(name, *c, true, s.loc);
          continue;
        }
      if (v.kind == ExprKind::Call && is_path(*v.children[0], "triton.language.constexpr")) {
        std::string why;
        if (v.children.size() == 2)
          if (auto c = try_constant(*v.children[1], &why)) {
            bind_global(name, *c, true, s.loc);
            continue;
          }
        bind_host(name,
                  "a tl.constexpr(...) whose value kiln cannot evaluate" +
                      (why.empty() ? "" : " (" + why + ")"),
                  s.loc);
        continue;
      }
      std::string why;
      if (std::optional<PyValue> value = try_value(v, &why)) {
        if (value->kind == PyValue::Kind::Const) {
          bind_global(name, value->c, false, s.loc);
          continue;
        }
        // `rsqrt = libdevice_find("rsqrt")`: host code that picks a triton member.
        if (value->kind == PyValue::Kind::Triton && bind_triton_path(name, value->c.s))
          continue;
      }
      bind_host(name, "a value computed by host code" + (why.empty() ? "" : " (" + why + ")"),
                s.loc);
      if (s.targets.size() == 1)
        m_.data_exprs[name] = &v; // data a decorator may read (a config list)
    }
  }

  /// `__all__ = [...]`: the names `from this import *` binds, when it is a
  /// list of strings kiln can evaluate (otherwise star imports bind every
  /// public name).
  void all_names(const Expr &v) {
    m_.all_names.reset();
    try {
      PyEval eval = evaluator();
      PyValue list = eval.eval(v);
      if (list.kind != PyValue::Kind::List && list.kind != PyValue::Kind::Tuple)
        return;
      std::vector<std::string> names;
      for (const PyValue &n : list.items) {
        if (n.kind != PyValue::Kind::Const || n.c.kind != ConstValue::Kind::Str)
          return;
        names.push_back(n.c.s);
      }
      m_.all_names = std::move(names);
    } catch (const CompileError &) {
    }
  }

  void bind_targets_host(const Expr &t, Loc loc) {
    if (t.kind == ExprKind::Name) {
      bind_host(t.id, "a value computed by host code", loc);
      return;
    }
    if (t.kind == ExprKind::Tuple || t.kind == ExprKind::List)
      for (const ExprPtr &c : t.children)
        bind_targets_host(*c, loc);
  }

  void ann_assign(const Stmt &s) {
    if (s.targets[0]->kind != ExprKind::Name || !s.value)
      return;
    const std::string &name = s.targets[0]->id;
    const Expr &v = *s.value;
    if (v.kind == ExprKind::Call && is_path(*v.children[0], "triton.language.constexpr") && v.children.size() == 2)
      if (auto c = try_constant(*v.children[1]))
        return bind_global(name, *c, true, s.loc);
    // As in Triton, `NAME: tl.constexpr = 4` does not make a global readable.
    if (auto c = try_constant(v))
      return bind_global(name, *c, false, s.loc);
    bind_host(name, "a value computed by host code", s.loc);
  }

  /// `tl.constexpr(v) if HAS_TRITON else v` (vLLM's samplers): both
  /// branches the same number, one of them a tl.constexpr, so the test
  /// (host code that probes Triton's drivers) cannot change what a kernel
  /// reads; a process that compiles kernels has Triton.
  std::optional<ConstValue> constexpr_either_way(const Expr &if_exp) {
    auto branch = [&](const Expr &e, bool &wrapped) -> std::optional<ConstValue> {
      wrapped = e.kind == ExprKind::Call && is_path(*e.children[0], "triton.language.constexpr");
      if (wrapped)
        return e.children.size() == 2 ? try_constant(*e.children[1]) : std::nullopt;
      return try_constant(e);
    };
    bool wa = false, wb = false;
    const std::optional<ConstValue> a = branch(*if_exp.children[1], wa),
                                    b = branch(*if_exp.children[2], wb);
    if (!a || !b || !(wa || wb) || a->repr() != b->repr())
      return std::nullopt;
    return a;
  }

  void bind_global(const std::string &name, ConstValue value, bool is_constexpr, Loc loc) {
    if (!may_bind(name))
      return;
    unbind(name);
    m_.globals[name] = GlobalInfo{name, std::move(value), is_constexpr, loc};
  }

  /// A module-level value as PyEval gives it, or nullopt when kiln cannot
  /// evaluate it (`why` says why).
  std::optional<PyValue> try_value(const Expr &e, std::string *why) {
    try {
      PyEval eval = evaluator();
      return eval.eval(e);
    } catch (const CompileError &err) {
      if (why)
        *why = err.message();
      return std::nullopt;
    }
  }

  /// A module-level constant expression, or nullopt when kiln cannot
  /// evaluate it (a call into host code, a name it does not know, ...).
  std::optional<ConstValue> try_constant(const Expr &e, std::string *why = nullptr) {
    try {
      return constant(e);
    } catch (const CompileError &err) {
      if (why)
        *why = err.message();
      return std::nullopt;
    }
  }

  /// A module-level value that is a constant (a number, bool, string, None
  /// or dtype), evaluated as Python would without running host code.
  ConstValue constant(const Expr &e) {
    PyEval eval = evaluator();
    PyValue v = eval.eval(e);
    if (v.kind == PyValue::Kind::Unknown)
      fail(e.loc, "it depends on " + v.c.s + ", which only the host knows when the kernel runs");
    if (v.kind != PyValue::Kind::Const)
      fail(e.loc, "expected a constant (a number, a bool, a string or an expression of them)");
    return v.c;
  }

  // ---- jit functions -----------------------------------------------------

  std::vector<std::string> name_list(const Expr &e, const JitFunctionInfo &fn, const char *what) {
    std::vector<std::string> out;
    if (e.kind != ExprKind::List && e.kind != ExprKind::Tuple)
      fail(e.loc, std::string(what) + " must be a list of parameter names or indices");
    for (const ExprPtr &c : e.children) {
      if (c->kind == ExprKind::Str) {
        out.push_back(c->id);
      } else if (c->kind == ExprKind::Int) {
        if (c->int_value >= fn.params.size())
          fail(c->loc, std::string(what) + " index " + std::to_string(c->int_value) + " is out of range");
        out.push_back(fn.params[c->int_value].name);
      } else {
        fail(c->loc, std::string(what) + " must list parameter names (strings) or indices");
      }
      // Triton matches these against the parameters and ignores a name
      // that is none of them (FlagGems leaves such names behind).
      bool found = false;
      for (const ParamInfo &p : fn.params)
        found |= p.name == out.back();
      if (!found)
        out.pop_back();
    }
    return out;
  }

  void function_def(const Stmt &s) {
    const Expr *jit = nullptr;
    for (const ExprPtr &d : s.decorators) {
      const Expr *callee = d->kind == ExprKind::Call ? d->children[0].get() : d.get();
      if (is_path(*callee, "triton.jit"))
        jit = d.get();
    }
    if (!jit) {
      if (!may_bind(s.id))
        return;
      bind_host(s.id, "a plain Python function (not @triton.jit)", s.loc);
      plain_defs_[s.id] = &s;
      for (const ExprPtr &d : s.decorators) {
        const std::string path = canonical(dotted_name(*d));
        if (path == "triton.language.constexpr" || path == "triton.constexpr_function" ||
            path == "triton.language.constexpr_function")
          m_.compile_time_functions[s.id] = compile_time_function(s.id, s, true);
      }
      return;
    }
    auto fn = make_function(s.id, s);
    lazily(*fn, [&] { jit_options(*fn, *jit, false); });
    for (const ExprPtr &d : s.decorators) {
      const Expr *callee = d->kind == ExprKind::Call ? d->children[0].get() : d.get();
      const std::string path = canonical(dotted_name(*callee));
      if (path == "triton.autotune" || path == "triton.heuristics")
        decorators_.push_back({fn.get(), d.get(), false});
      // Other decorators (Python wrappers kiln does not run) do not change the kernel.
    }
    add_function(std::move(fn));
  }

  /// `name = triton.jit(fn, option=...)` over a plain `def fn`.
  void jit_call(const std::string &name, const Expr &call) {
    if (call.children.size() != 2 || call.children[1]->kind != ExprKind::Name ||
        !plain_defs_.count(call.children[1]->id)) {
      bind_host(name, "a triton.jit(...) of something that is not a function of this file", call.loc);
      return;
    }
    auto fn = make_function(name, *plain_defs_.at(call.children[1]->id));
    lazily(*fn, [&] { jit_options(*fn, call, true); });
    add_function(std::move(fn));
  }

  /// `k = triton.heuristics({...})(k)`, `k = triton.autotune(...)(triton.jit(k))`,
  /// `k = triton.jit(noinline=True)(k)`: decorators applied by calls. True
  /// when `v` is one (and `name` is now bound to the jit function).
  bool decorator_call(const std::string &name, const Expr &v) {
    if (v.kind != ExprKind::Call || v.children.size() != 2 || v.children[0]->kind != ExprKind::Call)
      return false;
    const Expr &dec = *v.children[0];
    const std::string path = canonical(dotted_name(*dec.children[0]));
    const Expr &inner = *v.children[1];
    if (path == "triton.jit") {
      if (inner.kind != ExprKind::Name || !plain_defs_.count(inner.id))
        return false;
      auto fn = make_function(name, *plain_defs_.at(inner.id));
      lazily(*fn, [&] { jit_options(*fn, dec, false); });
      add_function(std::move(fn));
      return true;
    }
    if (path != "triton.autotune" && path != "triton.heuristics")
      return false;
    // What is wrapped: a jit function bound to a name, or a nested call.
    JitFunctionInfo *wrapped = nullptr;
    if (inner.kind == ExprKind::Name) {
      for (auto &f : m_.functions)
        if (f->name == inner.id)
          wrapped = f.get();
    } else if (inner.kind == ExprKind::Call && (is_path(*inner.children[0], "triton.jit") ||
                                                 inner.children[0]->kind == ExprKind::Call)) {
      const std::string tmp = "\x01" + name; // a name no Python code can spell
      if (is_path(*inner.children[0], "triton.jit"))
        jit_call(tmp, inner);
      else if (!decorator_call(tmp, inner))
        return false;
      for (auto &f : m_.functions)
        if (f->name == tmp)
          wrapped = f.get();
    }
    if (!wrapped)
      return false;
    if (wrapped->name != name) {
      // A new binding of the same function with more decorators; the old
      // name keeps the function as it was.
      auto copy = std::make_unique<JitFunctionInfo>(*wrapped);
      const bool temporary = wrapped->name[0] == '\x01';
      copy->name = name;
      for (const Decorator &d : std::vector<Decorator>(decorators_))
        if (d.fn == wrapped)
          decorators_.push_back({copy.get(), d.expr, d.outer});
      if (temporary)
        std::erase_if(m_.functions, [&](const auto &f) { return f.get() == wrapped; });
      wrapped = copy.get();
      add_function(std::move(copy));
    }
    decorators_.push_back({wrapped, &dec, true});
    return true;
  }

  void add_function(std::unique_ptr<JitFunctionInfo> fn) {
    if (!may_bind(fn->name))
      return;
    unbind(fn->name);
    m_.functions.push_back(std::move(fn));
  }

  std::unique_ptr<JitFunctionInfo> compile_time_function(const std::string &name, const Stmt &s,
                                                         bool decorated) {
    auto fn = make_function(name, s);
    fn->compile_time = true;
    fn->constexpr_decorated = decorated;
    return fn;
  }

  std::unique_ptr<JitFunctionInfo> make_function(const std::string &name, const Stmt &s) {
    auto fn = std::make_unique<JitFunctionInfo>();
    fn->module = &m_;
    fn->name = name;
    fn->def = &s;
    fn->first_line = s.def_line;
    fn->source = src_.text().substr(s.source_begin, s.source_end - s.source_begin);
    lazily(*fn, [&] {
      for (size_t i = 0; i < s.params.size(); ++i) {
        const Param &p = s.params[i];
        if (p.kind != ParamKind::Positional)
          fail(p.loc, std::string(p.kind == ParamKind::PositionalOnly ? "positional-only ('/')"
                                  : p.kind == ParamKind::KeywordOnly  ? "keyword-only"
                                                                      : "variadic") +
                          " parameters ('" + p.name + "') are not supported in @triton.jit functions");
        fn->params.push_back(param(p, static_cast<unsigned>(i)));
      }
    });
    return fn;
  }

  /// Runs `f`; a CompileError becomes the function's error, thrown when it is used.
  template <class F> void lazily(JitFunctionInfo &fn, F &&f) {
    if (fn.error)
      return;
    try {
      f();
    } catch (const CompileError &e) {
      fn.error = std::make_shared<const CompileError>(e);
    }
  }

  ParamInfo param(const Param &p, unsigned index) {
    ParamInfo info;
    info.name = p.name;
    info.index = index;
    info.loc = p.loc;
    if (p.annotation) {
      info.annotation = dotted_name(*p.annotation);
      const std::string path = canonical(info.annotation);
      // Triton's rule: an annotation that mentions constexpr makes one
      // (`tl.constexpr`, `core.constexpr`, `"tl.constexpr"`).
      if (path == "triton.language.constexpr" || info.annotation.find("constexpr") != std::string::npos ||
          (p.annotation->kind == ExprKind::Str && p.annotation->id.find("constexpr") != std::string::npos)) {
        info.is_constexpr = true;
      } else if (path == "triton.language.const") {
        info.is_const = true;
      } else if (path.rfind("triton.language.", 0) == 0) {
        static const std::pair<const char *, DType> types[] = {
            {"int1", DType::i1},     {"int8", DType::i8},       {"int16", DType::i16},
            {"int32", DType::i32},   {"int64", DType::i64},     {"uint8", DType::u8},
            {"uint16", DType::u16},  {"uint32", DType::u32},    {"uint64", DType::u64},
            {"float16", DType::f16}, {"bfloat16", DType::bf16}, {"float32", DType::f32},
            {"float64", DType::f64}};
        const std::string member = path.substr(std::string_view("triton.language.").size());
        for (const auto &[n, t] : types)
          if (member == n)
            info.annotated_type = t;
        // Class annotations are type hints Triton ignores (`x: tl.tensor`).
        static const char *const hints[] = {"tensor", "pointer_type", "block_type", "dtype",
                                            "tensor_descriptor"};
        bool hint = false;
        for (const char *h : hints)
          hint |= member == h;
        if (!info.annotated_type && !hint)
          fail(p.annotation->loc, "unsupported parameter annotation '" + info.annotation +
                                      "'; use tl.constexpr, tl.const or a scalar dtype like tl.int64");
      }
      // Other annotations (`x: torch.Tensor`, `n: int`) are Python type
      // hints; Triton specializes such parameters by value, as kiln does.
    }
    if (p.default_value) {
      info.default_value = try_constant(*p.default_value);
      if (!info.default_value) {
        info.unevaluated_default = dotted_name(*p.default_value);
        if (info.unevaluated_default.empty())
          info.unevaluated_default = "an expression";
      }
    }
    return info;
  }

  /// The options of `@triton.jit(...)` or of the call `triton.jit(fn, ...)`.
  void jit_options(JitFunctionInfo &fn, const Expr &d, bool call_form) {
    if (d.kind != ExprKind::Call)
      return;
    if (d.children.size() > (call_form ? 2u : 1u))
      fail(d.loc, "triton.jit takes keyword arguments only");
    for (const Keyword &k : d.keywords) {
      if (k.name == "do_not_specialize") {
        for (const std::string &n : name_list(*k.value, fn, "do_not_specialize"))
          for (ParamInfo &p : fn.params)
            if (p.name == n)
              p.do_not_specialize = true;
      } else if (k.name == "do_not_specialize_on_alignment") {
        for (const std::string &n : name_list(*k.value, fn, "do_not_specialize_on_alignment"))
          for (ParamInfo &p : fn.params)
            if (p.name == n)
              p.do_not_specialize_on_alignment = true;
      } else if (k.name == "noinline") {
        fn.noinline = constant(*k.value).truthy();
      } else if (k.name == "debug") {
        fn.debug = constant(*k.value).truthy();
      } else if (k.name == "repr" || k.name == "launch_metadata" || k.name == "version") {
        // Python callables and a cache tag in Triton; kiln's hooks cover
        // them from C++, and its cache key covers the source.
      } else {
        fail(k.loc, "triton.jit has no option '" + k.name +
                        "'; Triton's options are do_not_specialize, do_not_specialize_on_alignment, "
                        "noinline, debug, repr, launch_metadata and version");
      }
    }
  }

  ModuleInfo &m_;
  ModuleSet &set_;
  const SourceFile &src_;
  const FileDemand *demand_; ///< null: every name
  int conditional_ = 0;
  std::map<std::string, const Stmt *> &plain_defs_ = m_.plain_functions;
  /// Module-level names being evaluated, of this module and those it
  /// imports (a cycle gives no value).
  std::shared_ptr<EvalGuard> evaluating_ = std::make_shared<EvalGuard>();
  /// Decorators read once every module-level name is known.
  struct Decorator {
    JitFunctionInfo *fn;
    const Expr *expr;
    bool outer; ///< applied by a call after the definition (`k = triton.heuristics(...)(k)`)
  };
  std::vector<Decorator> decorators_;
};

} // namespace

PyEval module_evaluator(const ModuleInfo &m) {
  return module_evaluator(m, std::make_shared<EvalGuard>());
}

bool is_name_main_test(const Expr &e) {
  if (e.kind != ExprKind::Compare || e.children.size() != 2 || e.cmp_ops[0] != Op::Eq)
    return false;
  const Expr &a = *e.children[0], &b = *e.children[1];
  return (a.kind == ExprKind::Name && a.id == "__name__") ||
         (b.kind == ExprKind::Name && b.id == "__name__");
}

std::string ModuleInfo::canonical(const std::string &name) const {
  const size_t dot = name.find('.');
  const std::string head = name.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : name.substr(dot);
  if (auto it = aliases.find(head); it != aliases.end())
    return std::string(alias_path(it->second)) + rest;
  if (auto it = language_names.find(head); it != language_names.end())
    return std::string(alias_path(it->second.first)) + "." + it->second.second + rest;
  // The host libraries whose few calls the plain-data evaluator models
  // (torch dtypes and platform tests, importlib's lookups of triton modules).
  if (auto it = host_names.find(head);
      it != host_names.end() && (it->second.module == "torch" || it->second.module == "importlib"))
    return it->second.module + rest;
  return "";
}

bool is_modelled_triton_module(std::string_view path) {
  return module_of_path(path).has_value();
}

std::vector<std::string> ModuleInfo::bound_names() const {
  std::set<std::string> names;
  for (const auto &f : functions)
    names.insert(f->name);
  auto keys = [&](const auto &map) {
    for (const auto &entry : map)
      names.insert(entry.first);
  };
  keys(globals);
  keys(aliases);
  keys(language_names);
  keys(imported_functions);
  keys(imported_modules);
  keys(host_names);
  return {names.begin(), names.end()};
}

const JitFunctionInfo *ModuleInfo::function(std::string_view name) const {
  for (const auto &f : functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

const JitFunctionInfo *ModuleInfo::visible_function(const std::string &name) const {
  if (const JitFunctionInfo *f = function(name))
    return f;
  auto it = imported_functions.find(name);
  return it == imported_functions.end() ? nullptr : it->second;
}

void analyze_into(ModuleInfo &m, ModuleSet &set, const FileDemand *demand) {
  Analyzer a(m, set, demand);
  a.run();
}

std::shared_ptr<const ModuleInfo> ModuleInfo::analyze(Module ast, const std::vector<std::string> &search_path) {
  auto m = std::make_shared<ModuleInfo>();
  m->ast = std::move(ast);
  auto set = std::make_shared<ModuleSet>(search_path);
  set->add(m->ast.source->path(), m.get());
  // Only the imports some kernel can reach are loaded.
  auto demand = std::make_shared<ImportDemand>(m->ast, search_path);
  set->set_demand(demand);
  analyze_into(*m, *set, &demand->root());
  m->imports = std::move(set);
  return m;
}

} // namespace kiln::frontend
