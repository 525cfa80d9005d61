// Module-level analysis of a kernel file. Only what Triton would accept in a
// kernel's module and kiln can mean the same way is allowed: imports of
// triton and math, constant globals, and @triton.jit functions.
#include "compiler/frontend/module_info.hpp"

#include <optional>

#include "compiler/frontend/ir_gen_impl.hpp"

namespace kiln::frontend {

namespace {

/// "tl.constexpr" for an attribute chain, "" for anything else.
std::string dotted(const Expr &e) {
  if (e.kind == ExprKind::Name)
    return e.id;
  if (e.kind == ExprKind::Attribute) {
    std::string base = dotted(*e.children[0]);
    return base.empty() ? "" : base + "." + e.id;
  }
  if (e.kind == ExprKind::Str)
    return e.id;
  return "";
}

class Analyzer {
public:
  Analyzer(ModuleInfo &m) : m_(m), src_(*m.ast.source) {}

  void run() {
    for (const StmtPtr &s : m_.ast.body)
      top_level(*s);
    for (auto &fn : m_.functions)
      fn->module = &m_;
  }

private:
  [[noreturn]] void fail(Loc loc, const std::string &msg) { throw src_.error(loc, msg); }

  /// What a dotted name means given the imports: "triton", "tl", "math" or "".
  std::optional<ModuleAlias> alias_of(const std::string &name) {
    auto it = m_.aliases.find(name);
    if (it == m_.aliases.end())
      return std::nullopt;
    return it->second;
  }

  /// Whether `name` (dotted) spells the language module's member `member`.
  bool is_language(const std::string &name, const std::string &member) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos)
      return m_.jit_names.count(name) && member == "jit" ? true : false;
    if (name.substr(dot + 1) != member)
      return false;
    const std::string base = name.substr(0, dot);
    if (auto a = alias_of(base); a && *a == ModuleAlias::Language)
      return true;
    const size_t d2 = base.rfind('.');
    if (d2 != std::string::npos && base.substr(d2 + 1) == "language")
      if (auto a = alias_of(base.substr(0, d2)); a && *a == ModuleAlias::Triton)
        return true;
    return false;
  }

  bool is_jit(const std::string &name) {
    if (m_.jit_names.count(name))
      return true;
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || name.substr(dot + 1) != "jit")
      return false;
    auto a = alias_of(name.substr(0, dot));
    return a && *a == ModuleAlias::Triton;
  }

  void top_level(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Import:
      for (const ImportName &n : s.names) {
        if (n.name == "triton")
          m_.aliases[n.alias.empty() ? "triton" : n.alias] = ModuleAlias::Triton;
        else if (n.name == "triton.language")
          m_.aliases[n.alias.empty() ? "triton" : n.alias] =
              n.alias.empty() ? ModuleAlias::Triton : ModuleAlias::Language;
        else if (n.name == "math")
          m_.aliases[n.alias.empty() ? "math" : n.alias] = ModuleAlias::Math;
        else
          fail(s.loc, "kernel files may import only triton, triton.language and math, not '" +
                          n.name +
                          "'; remove the import (kernels cannot call other Python modules)");
      }
      return;
    case StmtKind::ImportFrom:
      for (const ImportName &n : s.names) {
        const std::string as = n.alias.empty() ? n.name : n.alias;
        if (s.module == "triton" && n.name == "language")
          m_.aliases[as] = ModuleAlias::Language;
        else if (s.module == "triton" && n.name == "jit")
          m_.jit_names.insert(as);
        else
          fail(s.loc, "kernel files may import only triton, triton.language and math; 'from " +
                          s.module + " import " + n.name + "' is not supported: " +
                          (s.module.rfind("triton", 0) == 0
                               ? "kiln reads `import triton`, `import triton.language as tl` and "
                                 "`from triton import language, jit`"
                               : "remove the import (kernels cannot call other Python modules)"));
      }
      return;
    case StmtKind::Assign: {
      if (s.targets.size() != 1 || s.targets[0]->kind != ExprKind::Name)
        fail(s.loc, "module-level assignments must bind one name to a constant");
      GlobalInfo g;
      g.name = s.targets[0]->id;
      g.loc = s.loc;
      const Expr &v = *s.value;
      if (v.kind == ExprKind::Call && is_language(dotted(*v.children[0]), "constexpr")) {
        if (v.children.size() != 2)
          fail(v.loc, "tl.constexpr(...) takes one value");
        g.value = constant(*v.children[1]);
        g.is_constexpr = true;
      } else {
        g.value = constant(v);
      }
      m_.globals[g.name] = std::move(g);
      return;
    }
    case StmtKind::AnnAssign: {
      if (s.targets[0]->kind != ExprKind::Name || !s.value)
        fail(s.loc, "module-level annotated assignments must bind one name to a constant");
      GlobalInfo g;
      g.name = s.targets[0]->id;
      g.loc = s.loc;
      g.value = constant(*s.value);
      g.is_constexpr = false; // as in Triton: an annotation does not make a global readable
      m_.globals[g.name] = std::move(g);
      return;
    }
    case StmtKind::FunctionDef: return function(s);
    case StmtKind::ExprStmt:
      if (s.value->kind == ExprKind::Str)
        return; // docstring
      fail(s.loc, "module-level expressions are not allowed in kernel files");
    case StmtKind::Pass: return;
    default:
      fail(s.loc, "only imports, constants and @triton.jit functions are allowed at module level");
    }
  }

  /// A module-level constant expression.
  ConstValue constant(const Expr &e) {
    switch (e.kind) {
    case ExprKind::Int:
      if (e.int_value > static_cast<uint64_t>(INT64_MAX))
        fail(e.loc, "integer constant does not fit in int64");
      return ConstValue::of_int(static_cast<int64_t>(e.int_value));
    case ExprKind::Float: return ConstValue::of_float(e.float_value);
    case ExprKind::Bool: return ConstValue::of_bool(e.bool_value);
    case ExprKind::None: return ConstValue::none();
    case ExprKind::Str: return ConstValue::of_str(e.id);
    case ExprKind::Name: {
      auto it = m_.globals.find(e.id);
      if (it == m_.globals.end())
        fail(e.loc, "name '" + e.id + "' is not defined (module constants may use only earlier constants)");
      return it->second.value;
    }
    case ExprKind::UnaryOp: {
      ConstValue v = constant(*e.children[0]);
      if (e.op == Op::USub && v.kind == ConstValue::Kind::Int && v.i != INT64_MIN)
        return ConstValue::of_int(-v.i);
      if (e.op == Op::USub && v.kind == ConstValue::Kind::Float)
        return ConstValue::of_float(-v.f);
      if (e.op == Op::UAdd && v.is_number())
        return v;
      if (e.op == Op::Not)
        return ConstValue::of_bool(!v.truthy());
      if (e.op == Op::Invert && v.kind == ConstValue::Kind::Int)
        return ConstValue::of_int(~v.i);
      break;
    }
    case ExprKind::BinOp:
      return fold_binary(e.op, constant(*e.children[0]), constant(*e.children[1]), src_, e.loc);
    case ExprKind::Call:
      if (is_language(dotted(*e.children[0]), "constexpr") && e.children.size() == 2)
        return constant(*e.children[1]);
      break;
    default: break;
    }
    fail(e.loc, "expected a constant (a number, a bool, a string or an expression of them)");
  }

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
      bool found = false;
      for (const ParamInfo &p : fn.params)
        found |= p.name == out.back();
      if (!found)
        fail(c->loc, std::string(what) + " names '" + out.back() + "', which is not a parameter of '" +
                         fn.name + "'");
    }
    return out;
  }

  void function(const Stmt &s) {
    auto fn = std::make_unique<JitFunctionInfo>();
    fn->name = s.id;
    fn->def = &s;
    fn->first_line = s.def_line;
    fn->source = src_.text().substr(s.source_begin, s.source_end - s.source_begin);
    if (m_.function(s.id))
      fail(s.loc, "function '" + s.id + "' is defined twice");

    for (size_t i = 0; i < s.params.size(); ++i) {
      const Param &p = s.params[i];
      if (p.kind != ParamKind::Positional)
        fail(p.loc, std::string(p.kind == ParamKind::PositionalOnly ? "positional-only ('/')"
                                : p.kind == ParamKind::KeywordOnly  ? "keyword-only"
                                                                    : "variadic") +
                        " parameters ('" + p.name +
                        "') are not supported in @triton.jit functions");
      ParamInfo info;
      info.name = p.name;
      info.index = static_cast<unsigned>(i);
      info.loc = p.loc;
      if (p.annotation) {
        info.annotation = dotted(*p.annotation);
        if (is_language(info.annotation, "constexpr"))
          info.is_constexpr = true;
        else if (is_language(info.annotation, "const"))
          info.is_const = true;
        else {
          const size_t dot = info.annotation.rfind('.');
          const std::string member = dot == std::string::npos ? info.annotation : info.annotation.substr(dot + 1);
          if (dot != std::string::npos && is_language(info.annotation, member)) {
            static const std::pair<const char *, DType> types[] = {
                {"int1", DType::i1},     {"int8", DType::i8},       {"int16", DType::i16},
                {"int32", DType::i32},   {"int64", DType::i64},     {"uint8", DType::u8},
                {"uint16", DType::u16},  {"uint32", DType::u32},    {"uint64", DType::u64},
                {"float16", DType::f16}, {"bfloat16", DType::bf16}, {"float32", DType::f32},
                {"float64", DType::f64}};
            for (const auto &[n, t] : types)
              if (member == n)
                info.annotated_type = t;
            if (!info.annotated_type)
              fail(p.annotation->loc, "unsupported parameter annotation '" + info.annotation +
                                          "'; use tl.constexpr, tl.const or a scalar dtype like tl.int64");
          }
        }
      }
      if (p.default_value)
        info.default_value = constant(*p.default_value);
      fn->params.push_back(std::move(info));
    }

    bool jit = false;
    for (const ExprPtr &d : s.decorators) {
      const Expr *callee = d->kind == ExprKind::Call ? d->children[0].get() : d.get();
      if (!is_jit(dotted(*callee)))
        fail(d->loc, "only @triton.jit decorators are supported in kernel files");
      jit = true;
      if (d->kind != ExprKind::Call)
        continue;
      if (d->children.size() > 1)
        fail(d->loc, "@triton.jit takes keyword arguments only");
      for (const Keyword &k : d->keywords) {
        if (k.name == "do_not_specialize") {
          for (const std::string &n : name_list(*k.value, *fn, "do_not_specialize"))
            for (ParamInfo &p : fn->params)
              if (p.name == n)
                p.do_not_specialize = true;
        } else if (k.name == "do_not_specialize_on_alignment") {
          for (const std::string &n : name_list(*k.value, *fn, "do_not_specialize_on_alignment"))
            for (ParamInfo &p : fn->params)
              if (p.name == n)
                p.do_not_specialize_on_alignment = true;
        } else if (k.name == "noinline") {
          fn->noinline = constant(*k.value).truthy();
        } else if (k.name == "debug") {
          fn->debug = constant(*k.value).truthy();
        } else if (k.name == "repr" || k.name == "launch_metadata") {
          // Python callables in Triton; kiln's hooks cover them from C++.
        } else {
          fail(k.loc, "@triton.jit has no option '" + k.name +
                          "'; kiln supports do_not_specialize, do_not_specialize_on_alignment, "
                          "noinline and debug");
        }
      }
    }
    if (!jit)
      fail(s.loc, "module-level function '" + s.id + "' must be decorated with @triton.jit");
    m_.functions.push_back(std::move(fn));
  }

  ModuleInfo &m_;
  const SourceFile &src_;
};

} // namespace

const JitFunctionInfo *ModuleInfo::function(std::string_view name) const {
  for (const auto &f : functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

std::shared_ptr<const ModuleInfo> ModuleInfo::analyze(Module ast) {
  auto m = std::make_shared<ModuleInfo>();
  m->ast = std::move(ast);
  Analyzer(*m).run();
  return m;
}

} // namespace kiln::frontend
