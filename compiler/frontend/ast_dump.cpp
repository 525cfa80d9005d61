// Each node prints with the fields of the CPython `ast` class of the same
// name, in CPython's order; where kiln's layout differs (parameters in one
// list, a Dict's keys and values interleaved, an ImportFrom's dots in the
// module name) the dump rebuilds CPython's fields.
#include "compiler/frontend/ast_dump.hpp"

#include <bit>
#include <cassert>
#include <cstdio>

#include "compiler/frontend/utf8.hpp"

namespace kiln::frontend {

namespace {

const char *op_name(Op op) {
  switch (op) {
  case Op::Add:
    return "Add";
  case Op::Sub:
    return "Sub";
  case Op::Mul:
    return "Mult";
  case Op::Div:
    return "Div";
  case Op::FloorDiv:
    return "FloorDiv";
  case Op::Mod:
    return "Mod";
  case Op::Pow:
    return "Pow";
  case Op::LShift:
    return "LShift";
  case Op::RShift:
    return "RShift";
  case Op::BitAnd:
    return "BitAnd";
  case Op::BitOr:
    return "BitOr";
  case Op::BitXor:
    return "BitXor";
  case Op::MatMul:
    return "MatMult";
  case Op::USub:
    return "USub";
  case Op::UAdd:
    return "UAdd";
  case Op::Not:
    return "Not";
  case Op::Invert:
    return "Invert";
  case Op::And:
    return "And";
  case Op::Or:
    return "Or";
  case Op::Lt:
    return "Lt";
  case Op::Le:
    return "LtE";
  case Op::Gt:
    return "Gt";
  case Op::Ge:
    return "GtE";
  case Op::Eq:
    return "Eq";
  case Op::Ne:
    return "NotEq";
  case Op::Is:
    return "Is";
  case Op::IsNot:
    return "IsNot";
  case Op::In:
    return "In";
  case Op::NotIn:
    return "NotIn";
  }
  assert(false && "op_name: invalid Op");
  return "?";
}

void append_hex(std::string &out, const char *format, uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, static_cast<unsigned long long>(value));
  out += buf;
}

/// 'text' with what is not printable ASCII (and ' and \) as \u{HEX}.
std::string quote(const std::string &text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size();) {
    CodePoint cp = decode_utf8(text, i);
    if (cp.length == 0) // not UTF-8: a byte stands for itself
      cp = {static_cast<unsigned char>(text[i]), 1};
    i += cp.length;
    if (cp.value >= 0x20 && cp.value < 0x7F && cp.value != '\'' && cp.value != '\\')
      out += static_cast<char>(cp.value);
    else
      append_hex(out, "\\u{%llX}", cp.value);
  }
  return out + "'";
}

std::string quote_bytes(const std::string &bytes) {
  std::string out = "'";
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F && b != '\'' && b != '\\')
      out += c;
    else
      append_hex(out, "\\x{%llX}", b);
  }
  return out + "'";
}

std::string float_bits(double value) {
  std::string out;
  append_hex(out, "%llx", std::bit_cast<uint64_t>(value));
  return out;
}

/// The decimal value of an integer literal's spelling ("0x_FF" -> "255"),
/// for literals beyond 64 bits.
std::string decimal_of_literal(const std::string &spelling) {
  unsigned base = 10;
  size_t start = 0;
  if (spelling.size() > 1 && spelling[0] == '0') {
    const char prefix = static_cast<char>(spelling[1] | 0x20);
    base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 10;
    start = base == 10 ? 0 : 2;
  }
  std::vector<uint32_t> limbs; // little-endian, base 10^9
  for (size_t i = start; i < spelling.size(); ++i) {
    const char c = spelling[i];
    if (c == '_')
      continue;
    uint64_t carry =
        c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
    for (uint32_t &limb : limbs) {
      const uint64_t v = uint64_t{limb} * base + carry;
      limb = static_cast<uint32_t>(v % 1000000000);
      carry = v / 1000000000;
    }
    for (; carry; carry /= 1000000000)
      limbs.push_back(static_cast<uint32_t>(carry % 1000000000));
  }
  if (limbs.empty())
    return "0";
  std::string out = std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%09u", limbs[i]);
    out += buf;
  }
  return out;
}

class Dumper {
public:
  std::string out;

  void statement(const Stmt &s, int depth);

private:
  // ---- expressions, appended to `out` ----

  void expr(const Expr *e);
  void exprs(const std::vector<ExprPtr> &list, size_t from = 0);
  void name(const std::string &id) { out += id.empty() ? "~" : quote(id); }
  template <class Each> void list(size_t count, Each each) {
    out += '[';
    for (size_t i = 0; i < count; ++i) {
      if (i)
        out += ", ";
      each(i);
    }
    out += ']';
  }
  /// `Kind(field, field, ...)` with each field written by one callable.
  template <class... Fields> void node(const char *kind, Fields... fields) {
    out += kind;
    out += '(';
    bool first = true;
    ((out += first ? "" : ", ", first = false, fields()), ...);
    (void)first; // unused when there are no fields
    out += ')';
  }
  void constant(const Expr &e);
  void comprehension_node(const char *kind, const Expr &e, size_t elements);
  void arguments(const std::vector<Param> &params);
  void arg(const Param &p);
  void keywords(const std::vector<Keyword> &list);

  // ---- statements ----

  void head(const Stmt &s, const char *kind, int depth);
  void block(const char *label, const Body &body, int depth);
};

void Dumper::expr(const Expr *e) {
  if (!e) {
    out += '~';
    return;
  }
  auto sub = [this](const Expr *child) { return [this, child] { expr(child); }; };
  auto all = [this, e](size_t from = 0) { return [this, e, from] { exprs(e->children, from); }; };
  auto child = [&sub, e](size_t i) { return sub(e->children[i].get()); };
  auto text = [this](const std::string &s) { return [this, &s] { name(s); }; };
  switch (e->kind) {
  case ExprKind::Int:
  case ExprKind::Float:
  case ExprKind::Bool:
  case ExprKind::None:
  case ExprKind::Str:
  case ExprKind::Bytes:
  case ExprKind::Ellipsis:
  case ExprKind::Complex:
    return constant(*e);
  case ExprKind::Name:
    return node("Name", text(e->id));
  case ExprKind::Attribute:
    return node("Attribute", child(0), text(e->id));
  case ExprKind::Call:
    return node("Call", child(0), all(1), [this, e] { keywords(e->keywords); });
  case ExprKind::Subscript: {
    // A single Tuple index is the same subscript as its elements.
    const bool tuple = e->children.size() == 2 && e->children[1]->kind == ExprKind::Tuple;
    return node("Subscript", child(0), [this, e, tuple] {
      exprs(tuple ? e->children[1]->children : e->children, tuple ? 0 : 1);
    });
  }
  case ExprKind::Slice:
    return node("Slice", child(0), child(1), child(2));
  case ExprKind::Tuple:
    return node("Tuple", all());
  case ExprKind::List:
    return node("List", all());
  case ExprKind::Set:
    return node("Set", all());
  case ExprKind::BinOp:
    return node(
        "BinOp", child(0), [this, e] { out += op_name(e->op); }, child(1));
  case ExprKind::UnaryOp:
    return node(
        "UnaryOp", [this, e] { out += op_name(e->op); }, child(0));
  case ExprKind::BoolOp:
    return node(
        "BoolOp", [this, e] { out += op_name(e->op); }, all());
  case ExprKind::Compare:
    return node(
        "Compare", child(0),
        [this, e] {
          list(e->cmp_ops.size(), [this, e](size_t i) { out += op_name(e->cmp_ops[i]); });
        },
        all(1));
  case ExprKind::IfExp:
    return node("IfExp", child(0), child(1), child(2));
  case ExprKind::Lambda:
    return node(
        "Lambda", [this, e] { arguments(e->params); }, child(0));
  case ExprKind::Dict: {
    const size_t pairs = e->children.size() / 2;
    return node(
        "Dict",
        [this, e, pairs] { list(pairs, [this, e](size_t i) { expr(e->children[2 * i].get()); }); },
        [this, e, pairs] {
          list(pairs, [this, e](size_t i) { expr(e->children[2 * i + 1].get()); });
        });
  }
  case ExprKind::ListComp:
    return comprehension_node("ListComp", *e, 1);
  case ExprKind::SetComp:
    return comprehension_node("SetComp", *e, 1);
  case ExprKind::GeneratorExp:
    return comprehension_node("GeneratorExp", *e, 1);
  case ExprKind::DictComp:
    return comprehension_node("DictComp", *e, 2);
  case ExprKind::Comprehension:
    return node("comprehension", child(0), child(1), all(2),
                [this, e] { out += e->bool_value ? "1" : "0"; });
  case ExprKind::Await:
    return node("Await", child(0));
  case ExprKind::Yield:
    return node("Yield", sub(e->children.empty() ? nullptr : e->children[0].get()));
  case ExprKind::YieldFrom:
    return node("YieldFrom", child(0));
  case ExprKind::NamedExpr:
    return node("NamedExpr", child(0), child(1));
  case ExprKind::Starred:
    return node("Starred", child(0));
  case ExprKind::JoinedStr:
    return node("JoinedStr", all());
  case ExprKind::FormattedValue:
    return node(
        "FormattedValue", child(0),
        [this, e] { out += e->id.empty() ? "-1" : std::to_string(static_cast<int>(e->id[0])); },
        child(1));
  case ExprKind::MatchValue:
    return node("MatchValue", child(0));
  case ExprKind::MatchSingleton:
    return node("MatchSingleton", child(0));
  case ExprKind::MatchSequence:
    return node("MatchSequence", all());
  case ExprKind::MatchMapping: {
    const size_t pairs = e->children.size() / 2;
    return node(
        "MatchMapping",
        [this, e, pairs] { list(pairs, [this, e](size_t i) { expr(e->children[2 * i].get()); }); },
        [this, e, pairs] {
          list(pairs, [this, e](size_t i) { expr(e->children[2 * i + 1].get()); });
        },
        text(e->id));
  }
  case ExprKind::MatchClass:
    return node(
        "MatchClass", child(0), all(1),
        [this, e] { list(e->keywords.size(), [this, e](size_t i) { name(e->keywords[i].name); }); },
        [this, e] {
          list(e->keywords.size(), [this, e](size_t i) { expr(e->keywords[i].value.get()); });
        });
  case ExprKind::MatchStar:
    return node("MatchStar", text(e->id));
  case ExprKind::MatchAs:
    return node("MatchAs", sub(e->children.empty() ? nullptr : e->children[0].get()), text(e->id));
  case ExprKind::MatchOr:
    return node("MatchOr", all());
  case ExprKind::TypeVar:
    return node("TypeVar", text(e->id), sub(e->children.empty() ? nullptr : e->children[0].get()));
  case ExprKind::ParamSpec:
    return node("ParamSpec", text(e->id));
  case ExprKind::TypeVarTuple:
    return node("TypeVarTuple", text(e->id));
  }
  assert(false && "dump: invalid ExprKind");
}

void Dumper::exprs(const std::vector<ExprPtr> &children, size_t from) {
  list(children.size() - std::min(from, children.size()),
       [this, &children, from](size_t i) { expr(children[from + i].get()); });
}

void Dumper::constant(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Int:
    out += "Int(" + (e.id.empty() ? std::to_string(e.int_value) : decimal_of_literal(e.id)) + ")";
    return;
  case ExprKind::Float:
    out += "Float(" + float_bits(e.float_value) + ")";
    return;
  case ExprKind::Complex:
    out += "Complex(" + float_bits(e.float_value) + ")";
    return;
  case ExprKind::Bool:
    out += e.bool_value ? "True" : "False";
    return;
  case ExprKind::None:
    out += "None";
    return;
  case ExprKind::Ellipsis:
    out += "Ellipsis";
    return;
  case ExprKind::Str:
    out += "Str(" + quote(e.id) + ")";
    return;
  case ExprKind::Bytes:
    out += "Bytes(" + quote_bytes(e.id) + ")";
    return;
  default:
    assert(false && "dump: not a constant");
  }
}

/// ListComp(elt, generators), DictComp(key, value, generators), ...
void Dumper::comprehension_node(const char *kind, const Expr &e, size_t elements) {
  out += kind;
  out += '(';
  for (size_t i = 0; i < elements; ++i) {
    expr(e.children[i].get());
    out += ", ";
  }
  exprs(e.children, elements);
  out += ')';
}

/// CPython's `arguments(posonlyargs, args, vararg, kwonlyargs, kw_defaults,
/// kwarg, defaults)` from kiln's one list of parameters.
void Dumper::arguments(const std::vector<Param> &params) {
  auto of_kind = [&params](ParamKind kind) {
    std::vector<const Param *> out;
    for (const Param &p : params)
      if (p.kind == kind)
        out.push_back(&p);
    return out;
  };
  auto arg_list = [this](const std::vector<const Param *> &list_of) {
    return
        [this, list_of] { list(list_of.size(), [this, &list_of](size_t i) { arg(*list_of[i]); }); };
  };
  auto single = [this](const std::vector<const Param *> &list_of) {
    return [this, list_of] {
      if (list_of.empty())
        out += '~';
      else
        arg(*list_of[0]);
    };
  };
  const auto keyword_only = of_kind(ParamKind::KeywordOnly);
  std::vector<const Expr *> defaults;
  for (const Param &p : params)
    if ((p.kind == ParamKind::PositionalOnly || p.kind == ParamKind::Positional) && p.default_value)
      defaults.push_back(p.default_value.get());
  node(
      "arguments", arg_list(of_kind(ParamKind::PositionalOnly)),
      arg_list(of_kind(ParamKind::Positional)), single(of_kind(ParamKind::VarPositional)),
      arg_list(keyword_only),
      [this, &keyword_only] {
        list(keyword_only.size(),
             [this, &keyword_only](size_t i) { expr(keyword_only[i]->default_value.get()); });
      },
      single(of_kind(ParamKind::VarKeyword)),
      [this, &defaults] {
        list(defaults.size(), [this, &defaults](size_t i) { expr(defaults[i]); });
      });
}

void Dumper::arg(const Param &p) {
  node(
      "arg", [this, &p] { name(p.name); }, [this, &p] { expr(p.annotation.get()); });
}

void Dumper::keywords(const std::vector<Keyword> &list_of) {
  list(list_of.size(), [this, &list_of](size_t i) {
    node(
        "keyword", [this, &list_of, i] { name(list_of[i].name); },
        [this, &list_of, i] { expr(list_of[i].value.get()); });
  });
}

// ---- statements ----

void Dumper::head(const Stmt &s, const char *kind, int depth) {
  out.append(2 * static_cast<size_t>(depth), ' ');
  out += kind;
  out += '@' + std::to_string(s.loc.line) + ':' + std::to_string(s.loc.col - 1);
}

void Dumper::block(const char *label, const Body &body, int depth) {
  if (body.empty())
    return;
  out.append(2 * static_cast<size_t>(depth) + 2, ' ');
  out += label;
  out += ":\n";
  for (const StmtPtr &s : body)
    statement(*s, depth + 2);
}

void Dumper::statement(const Stmt &s, int depth) {
  auto sub = [this](const Expr *e) { return [this, e] { expr(e); }; };
  auto target = [this, &s] { expr(s.targets.empty() ? nullptr : s.targets[0].get()); };
  auto targets = [this, &s] { exprs(s.targets); };
  auto decorators = [this, &s] { exprs(s.decorators); };
  auto type_params = [this, &s] { exprs(s.type_params); };
  auto names = [this, &s] {
    list(s.names.size(), [this, &s](size_t i) {
      node(
          "alias", [this, &s, i] { name(s.names[i].name); },
          [this, &s, i] { name(s.names[i].alias); });
    });
  };
  auto plain_names = [this, &s] {
    list(s.names.size(), [this, &s](size_t i) { name(s.names[i].name); });
  };
  auto line = [this, &s, depth](const char *kind, auto... fields) {
    head(s, kind, depth);
    node("", fields...);
    out += '\n';
  };
  switch (s.kind) {
  case StmtKind::FunctionDef:
  case StmtKind::AsyncFunctionDef:
    line(
        s.kind == StmtKind::FunctionDef ? "FunctionDef" : "AsyncFunctionDef",
        [this, &s] { name(s.id); }, [this, &s] { arguments(s.params); }, decorators,
        sub(s.annotation.get()), type_params);
    block("body", s.body, depth);
    return;
  case StmtKind::ClassDef:
    line(
        "ClassDef", [this, &s] { name(s.id); }, targets, [this, &s] { keywords(s.keywords); },
        decorators, type_params);
    block("body", s.body, depth);
    return;
  case StmtKind::Return:
    return line("Return", sub(s.value.get()));
  case StmtKind::Delete:
    return line("Delete", targets);
  case StmtKind::Assign:
    return line("Assign", targets, sub(s.value.get()));
  case StmtKind::TypeAlias:
    return line("TypeAlias", target, type_params, sub(s.value.get()));
  case StmtKind::AugAssign:
    return line(
        "AugAssign", target, [this, &s] { out += op_name(s.op); }, sub(s.value.get()));
  case StmtKind::AnnAssign:
    return line("AnnAssign", target, sub(s.annotation.get()), sub(s.value.get()));
  case StmtKind::For:
  case StmtKind::AsyncFor:
    line(s.kind == StmtKind::For ? "For" : "AsyncFor", target, sub(s.value.get()));
    block("body", s.body, depth);
    block("orelse", s.orelse, depth);
    return;
  case StmtKind::While:
  case StmtKind::If:
    line(s.kind == StmtKind::While ? "While" : "If", sub(s.test.get()));
    block("body", s.body, depth);
    block("orelse", s.orelse, depth);
    return;
  case StmtKind::With:
  case StmtKind::AsyncWith:
    line(s.kind == StmtKind::With ? "With" : "AsyncWith", [this, &s] {
      list(s.items.size(), [this, &s](size_t i) {
        node(
            "withitem", [this, &s, i] { expr(s.items[i].context_expr.get()); },
            [this, &s, i] { expr(s.items[i].optional_vars.get()); });
      });
    });
    block("body", s.body, depth);
    return;
  case StmtKind::Match:
    line("Match", sub(s.value.get()));
    if (!s.cases.empty()) {
      out.append(2 * static_cast<size_t>(depth) + 2, ' ');
      out += "cases:\n";
    }
    for (const MatchCase &c : s.cases) {
      out.append(2 * static_cast<size_t>(depth) + 4, ' ');
      node("match_case", sub(c.pattern.get()), sub(c.guard.get()));
      out += '\n';
      block("body", c.body, depth + 2);
    }
    return;
  case StmtKind::Raise:
    return line("Raise", sub(s.value.get()), sub(s.test.get()));
  case StmtKind::Try:
  case StmtKind::TryStar:
    line(s.kind == StmtKind::Try ? "Try" : "TryStar");
    block("body", s.body, depth);
    if (!s.handlers.empty()) {
      out.append(2 * static_cast<size_t>(depth) + 2, ' ');
      out += "handlers:\n";
    }
    for (const ExceptHandler &h : s.handlers) {
      out.append(2 * static_cast<size_t>(depth) + 4, ' ');
      out += "ExceptHandler@" + std::to_string(h.loc.line) + ':' + std::to_string(h.loc.col - 1);
      node("", sub(h.type.get()), [this, &h] { name(h.name); });
      out += '\n';
      block("body", h.body, depth + 2);
    }
    block("orelse", s.orelse, depth);
    block("finalbody", s.finalbody, depth);
    return;
  case StmtKind::Assert:
    return line("Assert", sub(s.test.get()), sub(s.value.get()));
  case StmtKind::Import:
    return line("Import", names);
  case StmtKind::ImportFrom:
    return line(
        "ImportFrom", [this, &s] { name(s.module); }, names);
  case StmtKind::Global:
    return line("Global", plain_names);
  case StmtKind::Nonlocal:
    return line("Nonlocal", plain_names);
  case StmtKind::ExprStmt:
    return line("Expr", sub(s.value.get()));
  case StmtKind::Pass:
    return line("Pass");
  case StmtKind::Break:
    return line("Break");
  case StmtKind::Continue:
    return line("Continue");
  }
  assert(false && "dump: invalid StmtKind");
}

} // namespace

std::string dump(const Module &module) {
  Dumper d;
  for (const StmtPtr &s : module.body)
    d.statement(*s, 0);
  return std::move(d.out);
}

} // namespace kiln::frontend
