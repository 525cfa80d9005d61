// Tests of the parser: the shared reference kernels parse, the tree has the
// layout ast.hpp documents (checked through a compact S-expression dump),
// and syntax errors name what was expected at the right line and column.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/frontend/parser.hpp"

#ifndef KILN_SHARED_DIR
#define KILN_SHARED_DIR "/work/shared"
#endif

namespace kf = kiln::frontend;
using kf::ExprKind;
using kf::StmtKind;

namespace {

kf::Module parse_text(const std::string &text) {
  return kf::parse(std::make_shared<kf::SourceFile>("test.py", text));
}

kf::Module parse_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return kf::parse(std::make_shared<kf::SourceFile>(path.string(), text.str()));
}

std::optional<kiln::CompileError> parse_error(const std::string &text) {
  try {
    parse_text(text);
  } catch (const kiln::CompileError &e) {
    return e;
  }
  return std::nullopt;
}

/// An expression as an S-expression: `(+ a (* b c))`, `(call f x k=v)`,
/// `(. x attr)`, `(sub x i)`, `(slice lo hi step)` with `_` for an absent
/// bound, `(cmp a < b)`, `(if test body orelse)`, `(tuple ...)`, `(list ...)`.
std::string sexpr(const kf::Expr *e) {
  if (!e)
    return "_";
  // Built with += only: GCC 12 at -O3 gives a false -Wrestrict warning for
  // `" " + std::string&&` (GCC bug 105329).
  std::string out = "(";
  auto add = [&](const std::string &part) {
    out += ' ';
    out += part;
  };
  switch (e->kind) {
  case ExprKind::Name:
    return e->id;
  case ExprKind::Int:
    return std::to_string(e->int_value);
  case ExprKind::Float: {
    std::ostringstream s;
    s << e->float_value << 'f';
    return s.str();
  }
  case ExprKind::Bool:
    return e->bool_value ? "True" : "False";
  case ExprKind::None:
    return "None";
  case ExprKind::Str:
    return "'" + e->id + "'";
  case ExprKind::Attribute:
    out += '.';
    add(sexpr(e->children[0].get()));
    add(e->id);
    return out + ")";
  case ExprKind::Call:
    out += "call";
    for (const kf::ExprPtr &child : e->children)
      add(sexpr(child.get()));
    for (const kf::Keyword &k : e->keywords)
      add(k.name + "=" + sexpr(k.value.get()));
    return out + ")";
  case ExprKind::Compare:
    out += "cmp";
    add(sexpr(e->children[0].get()));
    for (size_t i = 0; i < e->cmp_ops.size(); ++i) {
      add(kf::op_spelling(e->cmp_ops[i]));
      add(sexpr(e->children[i + 1].get()));
    }
    return out + ")";
  case ExprKind::Subscript:
    out += "sub";
    break;
  case ExprKind::Slice:
    out += "slice";
    break;
  case ExprKind::Tuple:
    out += "tuple";
    break;
  case ExprKind::List:
    out += "list";
    break;
  case ExprKind::BinOp:
  case ExprKind::UnaryOp:
  case ExprKind::BoolOp:
    out += kf::op_spelling(e->op);
    break;
  case ExprKind::IfExp:
    out += "if";
    break;
  default: // the other kinds are checked through kf::dump
    return std::string("<") + kf::describe(e->kind) + ">";
  }
  for (const kf::ExprPtr &child : e->children)
    add(sexpr(child.get()));
  return out + ")";
}

/// The S-expression of the one expression statement `text`.
std::string expr(const std::string &text) {
  const kf::Module m = parse_text(text + "\n");
  REQUIRE(m.body.size() == 1);
  REQUIRE(m.body[0]->kind == StmtKind::ExprStmt);
  return sexpr(m.body[0]->value.get());
}

const kf::Stmt &only_function(const kf::Module &m) {
  REQUIRE(m.body.size() == 1);
  REQUIRE(m.body[0]->kind == StmtKind::FunctionDef);
  return *m.body[0];
}

const kf::Stmt *find_function(const kf::Module &m, const std::string &name) {
  for (const kf::StmtPtr &s : m.body)
    if (s->kind == StmtKind::FunctionDef && s->id == name)
      return s.get();
  return nullptr;
}

} // namespace

TEST_CASE("parser: every shared kernel file parses") {
  const std::filesystem::path dir = std::filesystem::path(KILN_SHARED_DIR) / "kernels";
  REQUIRE(std::filesystem::is_directory(dir));
  int files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".py")
      continue;
    CAPTURE(entry.path().string());
    ++files;
    kf::Module m;
    CHECK_NOTHROW(m = parse_file(entry.path()));
    int jit_functions = 0;
    for (const kf::StmtPtr &s : m.body)
      if (s->kind == StmtKind::FunctionDef && !s->decorators.empty())
        ++jit_functions;
    CHECK(jit_functions > 0);
  }
  CHECK(files >= 9);
}

TEST_CASE("parser: spot checks of vector_add.py") {
  const kf::Module m = parse_file(std::filesystem::path(KILN_SHARED_DIR) / "kernels/vector_add.py");
  REQUIRE(m.body.size() >= 5);
  CHECK(m.body[0]->kind == StmtKind::Import);
  CHECK(m.body[0]->names[0].name == "triton");
  CHECK(m.body[1]->names[0].name == "triton.language");
  CHECK(m.body[1]->names[0].alias == "tl");

  const kf::Stmt *add = find_function(m, "add_kernel");
  REQUIRE(add);
  REQUIRE(add->decorators.size() == 1);
  CHECK(sexpr(add->decorators[0].get()) == "(. triton jit)");
  REQUIRE(add->params.size() == 5);
  CHECK(add->params[0].name == "x_ptr");
  CHECK_FALSE(add->params[0].annotation);
  CHECK(add->params[4].name == "BLOCK");
  CHECK(sexpr(add->params[4].annotation.get()) == "(. tl constexpr)");
  REQUIRE(add->body.size() == 6);
  CHECK(add->body[0]->kind == StmtKind::Assign);
  CHECK(sexpr(add->body[0]->value.get()) == "(call (. tl program_id) axis=0)");
  CHECK(sexpr(add->body[5]->value.get()) ==
        "(call (. tl store) (+ out_ptr offs) (+ x y) mask=mask)");

  const kf::Stmt *empty = find_function(m, "empty_kernel");
  REQUIRE(empty);
  REQUIRE(empty->body.size() == 1);
  CHECK(empty->body[0]->kind == StmtKind::Pass);
}

TEST_CASE("parser: spot checks of matmul.py") {
  const kf::Module m = parse_file(std::filesystem::path(KILN_SHARED_DIR) / "kernels/matmul.py");
  const kf::Stmt *mm = find_function(m, "matmul_kernel");
  REQUIRE(mm);
  CHECK(mm->params.size() == 15);
  CHECK(mm->def_line == 6);
  const kf::Stmt *loop = nullptr;
  for (const kf::StmtPtr &s : mm->body)
    if (s->kind == StmtKind::For)
      loop = s.get();
  REQUIRE(loop);
  CHECK(sexpr(loop->targets[0].get()) == "k");
  CHECK(sexpr(loop->value.get()) == "(call range 0 K BK)");
  REQUIRE(loop->body.size() == 5);
  CHECK(loop->body[2]->kind == StmtKind::AugAssign);
}

TEST_CASE("parser: decorators") {
  const kf::Module m = parse_text("@triton.jit(do_not_specialize=[\"n\"], noinline=True)\n"
                                  "@jit\n"
                                  "def f(n):\n"
                                  "    pass\n");
  const kf::Stmt &f = only_function(m);
  REQUIRE(f.decorators.size() == 2);
  const kf::Expr &call = *f.decorators[0];
  CHECK(call.kind == ExprKind::Call);
  REQUIRE(call.keywords.size() == 2);
  CHECK(call.keywords[0].name == "do_not_specialize");
  CHECK(call.keywords[0].loc.col == 13);
  CHECK(sexpr(call.keywords[0].value.get()) == "(list 'n')");
  CHECK(sexpr(call.keywords[1].value.get()) == "True");
  CHECK(sexpr(&call) == "(call (. triton jit) do_not_specialize=(list 'n') noinline=True)");
  CHECK(sexpr(f.decorators[1].get()) == "jit");
  CHECK(f.loc.line == 3); // the `def`, not the first decorator
  CHECK(f.def_line == 3);
}

TEST_CASE("parser: parameters with annotations and defaults") {
  const kf::Module m =
      parse_text("def f(a, BLOCK: tl.constexpr, x: tl.int64 = 3, n=10,) -> tl.tensor:\n"
                 "    return a\n");
  const kf::Stmt &f = only_function(m);
  CHECK(f.id == "f");
  REQUIRE(f.params.size() == 4);
  CHECK(f.params[0].name == "a");
  CHECK_FALSE(f.params[0].annotation);
  CHECK_FALSE(f.params[0].default_value);
  CHECK(f.params[1].name == "BLOCK");
  CHECK(f.params[1].loc.col == 10);
  CHECK(sexpr(f.params[1].annotation.get()) == "(. tl constexpr)");
  CHECK(sexpr(f.params[2].annotation.get()) == "(. tl int64)");
  CHECK(sexpr(f.params[2].default_value.get()) == "3");
  CHECK_FALSE(f.params[3].annotation);
  CHECK(sexpr(f.params[3].default_value.get()) == "10");
  CHECK(parse_text("def g():\n    pass\n").body[0]->params.empty());
}

TEST_CASE("parser: operator precedence") {
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("(a + b) * c") == "(* (+ a b) c)");
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a // b % c * d / e @ f") == "(@ (/ (* (% (// a b) c) d) e) f)");
  CHECK(expr("-2**2") == "(- (** 2 2))");
  CHECK(expr("2**-1") == "(** 2 (- 1))");
  CHECK(expr("a ** b ** c") == "(** a (** b c))");
  CHECK(expr("-a.b ** c[0]") == "(- (** (. a b) (sub c 0)))");
  CHECK(expr("~a + -b - +c") == "(- (+ (~ a) (- b)) (+ c))");
  CHECK(expr("a | b ^ c & d << e + f") == "(| a (^ b (& c (<< d (+ e f)))))");
  CHECK(expr("a >> 1 << 2") == "(<< (>> a 1) 2)");
  // Tighter, looser, tighter again: each operand returns to the loosest
  // level still open (precedence climbing).
  CHECK(expr("a * b + c * d - e") == "(- (+ (* a b) (* c d)) e)");
  CHECK(expr("a << b + c >> d") == "(>> (<< a (+ b c)) d)");
  CHECK(expr("a & b | c & d ^ e") == "(| (& a b) (^ (& c d) e))");
  CHECK(expr("a * b | c // d & e % f") == "(| (* a b) (& (// c d) (% e f)))");
  CHECK(expr("((a << 3) ^ (b >> 1)) & 0xFFFF | (a & 7)") ==
        "(| (& (^ (<< a 3) (>> b 1)) 65535) (& a 7))");
  CHECK(expr("a < b | c") == "(cmp a < (| b c))");
  CHECK(expr("not a == b") == "(not (cmp a == b))");
  CHECK(expr("not not a") == "(not (not a))");
  CHECK(expr("a or b and c or d") == "(or a (and b c) d)");
  CHECK(expr("a and not b") == "(and a (not b))");
  CHECK(expr("a if b else c") == "(if b a c)");
  CHECK(expr("a if b else c if d else e") == "(if b a (if d c e))");
  CHECK(expr("a or b if c and d else e") == "(if (and c d) (or a b) e)");
}

TEST_CASE("parser: comparisons") {
  CHECK(expr("x < y <= z") == "(cmp x < y <= z)");
  CHECK(expr("a == b != c > d >= e") == "(cmp a == b != c > d >= e)");
  CHECK(expr("a is None") == "(cmp a is None)");
  CHECK(expr("a is not None") == "(cmp a is not None)");
  CHECK(expr("a in b") == "(cmp a in b)");
  CHECK(expr("a not in b") == "(cmp a not in b)");
  CHECK(expr("a + 1 < b * 2") == "(cmp (+ a 1) < (* b 2))");
}

TEST_CASE("parser: atoms") {
  CHECK(expr("x") == "x");
  CHECK(expr("42") == "42");
  CHECK(expr("0x10") == "16");
  CHECK(expr("1.5") == "1.5f");
  CHECK(expr("0.") == "0f");
  CHECK(expr("True") == "True");
  CHECK(expr("False") == "False");
  CHECK(expr("None") == "None");
  CHECK(expr("'a' \"b\" '''c'''") == "'abc'");
  CHECK(expr("(a)") == "a");
  CHECK(expr("((a))") == "a");
  CHECK(expr("()") == "(tuple)");
  CHECK(expr("(a,)") == "(tuple a)");
  CHECK(expr("(a, b)") == "(tuple a b)");
  CHECK(expr("(a, b,)") == "(tuple a b)");
  CHECK(expr("[]") == "(list)");
  CHECK(expr("[a]") == "(list a)");
  CHECK(expr("[a, (b, c),]") == "(list a (tuple b c))");
  CHECK(expr("a, b") == "(tuple a b)");
  CHECK(expr("a,") == "(tuple a)");
  CHECK(expr("-float(\"inf\")") == "(- (call float 'inf'))");
}

TEST_CASE("parser: calls, attributes and subscripts") {
  CHECK(expr("f()") == "(call f)");
  CHECK(expr("tl.load(p + o, mask=m, other=0.0)") == "(call (. tl load) (+ p o) mask=m other=0f)");
  CHECK(expr("f(a, b,)") == "(call f a b)");
  CHECK(expr("x.to(tl.float16, bitcast=True)") == "(call (. x to) (. tl float16) bitcast=True)");
  CHECK(expr("c_ptr.dtype.element_ty") == "(. (. c_ptr dtype) element_ty)");
  CHECK(expr("f(x)(y)[0].z") == "(. (sub (call (call f x) y) 0) z)");
  CHECK(expr("tl.full((BLOCK,), v, tl.float32)") ==
        "(call (. tl full) (tuple BLOCK) v (. tl float32))");
  CHECK(expr("x[i]") == "(sub x i)");
  CHECK(expr("x[i, j]") == "(sub x i j)");
  CHECK(expr("x[(i, j)]") == "(sub x (tuple i j))");
  CHECK(expr("x[:, None]") == "(sub x (slice _ _ _) None)");
  CHECK(expr("x[None, :]") == "(sub x None (slice _ _ _))");
  CHECK(expr("x[1:2]") == "(sub x (slice 1 2 _))");
  CHECK(expr("x[::2]") == "(sub x (slice _ _ 2))");
  CHECK(expr("x[a:]") == "(sub x (slice a _ _))");
  CHECK(expr("x[:b:]") == "(sub x (slice _ b _))");
  CHECK(expr("x[a + 1:b, c]") == "(sub x (slice (+ a 1) b _) c)");
  CHECK(expr("rm[:, None] * stride") == "(* (sub rm (slice _ _ _) None) stride)");
}

TEST_CASE("parser: x[:, None] is a Subscript with Slice and None children") {
  const kf::Module m = parse_text("x[:, None]\n");
  const kf::Expr &sub = *m.body[0]->value;
  CHECK(sub.kind == ExprKind::Subscript);
  REQUIRE(sub.children.size() == 3);
  CHECK(sub.children[0]->kind == ExprKind::Name);
  const kf::Expr &slice = *sub.children[1];
  CHECK(slice.kind == ExprKind::Slice);
  REQUIRE(slice.children.size() == 3);
  CHECK_FALSE(slice.children[0]);
  CHECK_FALSE(slice.children[1]);
  CHECK_FALSE(slice.children[2]);
  CHECK(sub.children[2]->kind == ExprKind::None);
}

TEST_CASE("parser: expression locations point at what a diagnostic names") {
  const kf::Module m = parse_text("y = a_ptr + tl.load(p)[0] < n\n");
  const kf::Expr &cmp = *m.body[0]->value;
  CHECK(cmp.kind == ExprKind::Compare);
  CHECK(cmp.loc.col == 27); // the `<`
  const kf::Expr &add = *cmp.children[0];
  CHECK(add.kind == ExprKind::BinOp);
  CHECK(add.loc.col == 11); // the `+`
  CHECK(add.children[0]->loc.col == 5);
  const kf::Expr &sub = *add.children[1];
  CHECK(sub.kind == ExprKind::Subscript);
  CHECK(sub.loc.col == 23); // the `[`
  const kf::Expr &call = *sub.children[0];
  CHECK(call.kind == ExprKind::Call);
  CHECK(call.loc.col == 16); // `load`, as its function
  CHECK(call.children[0]->kind == ExprKind::Attribute);
  CHECK(call.children[0]->loc.col == 16);
  CHECK(m.body[0]->loc.col == 1);
}

TEST_CASE("parser: assignments") {
  kf::Module m = parse_text("a, b = f(x)\n"
                            "a = b = 1\n"
                            "x: tl.constexpr = 3\n"
                            "y: int\n"
                            "p.q[0] = (1, 2)\n"
                            "(c, [d, e]) = t\n");
  REQUIRE(m.body.size() == 6);
  CHECK(m.body[0]->kind == StmtKind::Assign);
  REQUIRE(m.body[0]->targets.size() == 1);
  CHECK(sexpr(m.body[0]->targets[0].get()) == "(tuple a b)");
  CHECK(sexpr(m.body[0]->value.get()) == "(call f x)");
  REQUIRE(m.body[1]->targets.size() == 2);
  CHECK(sexpr(m.body[1]->targets[0].get()) == "a");
  CHECK(sexpr(m.body[1]->targets[1].get()) == "b");
  CHECK(sexpr(m.body[1]->value.get()) == "1");
  CHECK(m.body[2]->kind == StmtKind::AnnAssign);
  CHECK(sexpr(m.body[2]->targets[0].get()) == "x");
  CHECK(sexpr(m.body[2]->annotation.get()) == "(. tl constexpr)");
  CHECK(sexpr(m.body[2]->value.get()) == "3");
  CHECK(m.body[3]->kind == StmtKind::AnnAssign);
  CHECK_FALSE(m.body[3]->value);
  CHECK(sexpr(m.body[4]->targets[0].get()) == "(sub (. p q) 0)");
  CHECK(sexpr(m.body[5]->targets[0].get()) == "(tuple c (list d e))");
}

TEST_CASE("parser: augmented assignment with every operator") {
  const std::pair<const char *, kf::Op> cases[] = {
      {"+=", kf::Op::Add},    {"-=", kf::Op::Sub},       {"*=", kf::Op::Mul},
      {"/=", kf::Op::Div},    {"//=", kf::Op::FloorDiv}, {"%=", kf::Op::Mod},
      {"**=", kf::Op::Pow},   {"<<=", kf::Op::LShift},   {">>=", kf::Op::RShift},
      {"&=", kf::Op::BitAnd}, {"|=", kf::Op::BitOr},     {"^=", kf::Op::BitXor},
      {"@=", kf::Op::MatMul},
  };
  for (const auto &c : cases) {
    const std::string spelling = c.first;
    const kf::Op op = c.second;
    CAPTURE(spelling);
    const kf::Module m = parse_text(std::string("x.y ") + spelling + " a + 1\n");
    const kf::Stmt &s = *m.body[0];
    CHECK(s.kind == StmtKind::AugAssign);
    CHECK(s.op == op);
    CHECK(sexpr(s.targets[0].get()) == "(. x y)");
    CHECK(sexpr(s.value.get()) == "(+ a 1)");
    CHECK(std::string(kf::op_spelling(op)) + "=" == spelling);
  }
}

TEST_CASE("parser: op_spelling") {
  CHECK(std::string(kf::op_spelling(kf::Op::IsNot)) == "is not");
  CHECK(std::string(kf::op_spelling(kf::Op::NotIn)) == "not in");
  CHECK(std::string(kf::op_spelling(kf::Op::Not)) == "not");
  CHECK(std::string(kf::op_spelling(kf::Op::USub)) == "-");
  CHECK(std::string(kf::op_spelling(kf::Op::Invert)) == "~");
  CHECK(std::string(kf::op_spelling(kf::Op::Ne)) == "!=");
}

TEST_CASE("parser: simple statements") {
  const kf::Module m = parse_text("def f(x):\n"
                                  "    \"\"\"The docstring.\"\"\"\n"
                                  "    assert x > 0, \"x must be positive\"\n"
                                  "    assert x\n"
                                  "    tl.static_print(x); y = 1;\n"
                                  "    return\n"
                                  "def g():\n"
                                  "    return a, b\n");
  REQUIRE(m.body.size() == 2);
  const kf::Body &body = m.body[0]->body;
  REQUIRE(body.size() == 6);
  CHECK(body[0]->kind == StmtKind::ExprStmt);
  CHECK(body[0]->value->kind == ExprKind::Str);
  CHECK(body[0]->value->id == "The docstring.");
  CHECK(body[1]->kind == StmtKind::Assert);
  CHECK(sexpr(body[1]->test.get()) == "(cmp x > 0)");
  CHECK(sexpr(body[1]->value.get()) == "'x must be positive'");
  CHECK_FALSE(body[2]->value);
  CHECK(body[3]->kind == StmtKind::ExprStmt);
  CHECK(body[4]->kind == StmtKind::Assign);
  CHECK(body[4]->loc.line == 5);
  CHECK(body[4]->loc.col == 25);
  CHECK(body[5]->kind == StmtKind::Return);
  CHECK_FALSE(body[5]->value);
  CHECK(sexpr(m.body[1]->body[0]->value.get()) == "(tuple a b)");
}

TEST_CASE("parser: imports") {
  const kf::Module m = parse_text("import triton\n"
                                  "import triton.language as tl, math\n"
                                  "from triton import language as tl\n"
                                  "from triton.language import (sum, max as tmax,)\n"
                                  "from . import helpers\n"
                                  "from ..pkg.mod import x\n");
  REQUIRE(m.body.size() == 6);
  CHECK(m.body[0]->kind == StmtKind::Import);
  REQUIRE(m.body[1]->names.size() == 2);
  CHECK(m.body[1]->names[0].name == "triton.language");
  CHECK(m.body[1]->names[0].alias == "tl");
  CHECK(m.body[1]->names[1].name == "math");
  CHECK(m.body[1]->names[1].alias.empty());
  CHECK(m.body[2]->kind == StmtKind::ImportFrom);
  CHECK(m.body[2]->module == "triton");
  CHECK(m.body[2]->names[0].name == "language");
  CHECK(m.body[2]->names[0].alias == "tl");
  REQUIRE(m.body[3]->names.size() == 2);
  CHECK(m.body[3]->module == "triton.language");
  CHECK(m.body[3]->names[1].name == "max");
  CHECK(m.body[3]->names[1].alias == "tmax");
  CHECK(m.body[4]->module == ".");
  CHECK(m.body[4]->names[0].name == "helpers");
  CHECK(m.body[5]->module == "..pkg.mod");
}

TEST_CASE("parser: if / elif / else chain") {
  const kf::Module m = parse_text("if a:\n"
                                  "    x = 1\n"
                                  "elif b:\n"
                                  "    x = 2\n"
                                  "elif c:\n"
                                  "    x = 3\n"
                                  "else:\n"
                                  "    x = 4\n"
                                  "    y = 5\n");
  REQUIRE(m.body.size() == 1);
  const kf::Stmt &s = *m.body[0];
  CHECK(s.kind == StmtKind::If);
  CHECK(sexpr(s.test.get()) == "a");
  REQUIRE(s.body.size() == 1);
  REQUIRE(s.orelse.size() == 1);
  const kf::Stmt &elif1 = *s.orelse[0];
  CHECK(elif1.kind == StmtKind::If);
  CHECK(elif1.loc.line == 3);
  CHECK(sexpr(elif1.test.get()) == "b");
  REQUIRE(elif1.orelse.size() == 1);
  const kf::Stmt &elif2 = *elif1.orelse[0];
  CHECK(sexpr(elif2.test.get()) == "c");
  REQUIRE(elif2.orelse.size() == 2);
  CHECK(sexpr(elif2.orelse[1]->targets[0].get()) == "y");

  const kf::Module plain = parse_text("if a:\n    pass\nx = 1\n");
  REQUIRE(plain.body.size() == 2);
  CHECK(plain.body[0]->orelse.empty());
}

TEST_CASE("parser: loops") {
  const kf::Module m = parse_text("for i, j in zip(a, b):\n"
                                  "    continue\n"
                                  "else:\n"
                                  "    pass\n"
                                  "for k in tl.static_range(DEGREE - 1, -1, -1):\n"
                                  "    break\n"
                                  "while v != 1:\n"
                                  "    v = v // 2\n"
                                  "while x: x -= 1\n"
                                  "else: pass\n");
  REQUIRE(m.body.size() == 4);
  const kf::Stmt &f = *m.body[0];
  CHECK(f.kind == StmtKind::For);
  CHECK(sexpr(f.targets[0].get()) == "(tuple i j)");
  CHECK(sexpr(f.value.get()) == "(call zip a b)");
  CHECK(f.body[0]->kind == StmtKind::Continue);
  REQUIRE(f.orelse.size() == 1);
  CHECK(f.orelse[0]->kind == StmtKind::Pass);
  CHECK(sexpr(m.body[1]->value.get()) == "(call (. tl static_range) (- DEGREE 1) (- 1) (- 1))");
  CHECK(m.body[1]->orelse.empty());
  CHECK(m.body[1]->body[0]->kind == StmtKind::Break);
  CHECK(m.body[2]->kind == StmtKind::While);
  CHECK(sexpr(m.body[2]->test.get()) == "(cmp v != 1)");
  CHECK(m.body[2]->orelse.empty());
  CHECK(m.body[3]->body[0]->kind == StmtKind::AugAssign);
  REQUIRE(m.body[3]->orelse.size() == 1);
}

TEST_CASE("parser: one-line compound statements") {
  const kf::Module m = parse_text("def f(x): return x\n"
                                  "if x: pass\n"
                                  "else: y = 1; z = 2\n");
  REQUIRE(m.body.size() == 2);
  REQUIRE(m.body[0]->body.size() == 1);
  CHECK(m.body[0]->body[0]->kind == StmtKind::Return);
  CHECK(m.body[1]->body[0]->kind == StmtKind::Pass);
  CHECK(m.body[1]->orelse.size() == 2);
}

TEST_CASE("parser: function source range and def line") {
  const std::string text = "import triton\n"
                           "\n"
                           "@triton.jit\n"
                           "@other(\n"
                           "    x=1)\n"
                           "def kernel(x_ptr,\n"
                           "           n):\n"
                           "    s = '''a\n"
                           "b'''\n"
                           "    if n:\n"
                           "        return x_ptr  # trailing\n"
                           "\n"
                           "    # a comment after the body\n"
                           "\n"
                           "def g(): pass";
  const kf::Module m = parse_text(text);
  REQUIRE(m.body.size() == 3);
  const kf::Stmt &k = *m.body[1];
  CHECK(k.def_line == 6);
  CHECK(k.loc.line == 6);
  CHECK(k.loc.col == 1);
  CHECK(text.substr(k.source_begin, k.source_end - k.source_begin) ==
        "def kernel(x_ptr,\n"
        "           n):\n"
        "    s = '''a\n"
        "b'''\n"
        "    if n:\n"
        "        return x_ptr  # trailing\n");
  // The last function of a file without a final newline ends at the end.
  const kf::Stmt &g = *m.body[2];
  CHECK(g.def_line == 15);
  CHECK(text.substr(g.source_begin, g.source_end - g.source_begin) == "def g(): pass");

  // An indented def (here inside an if) starts at its line's beginning.
  const std::string nested = "if a:\n    def h():\n        pass\n";
  const kf::Module nested_module = parse_text(nested);
  const kf::Stmt &h = *nested_module.body[0]->body[0];
  CHECK(h.loc.col == 5);
  CHECK(nested.substr(h.source_begin, h.source_end - h.source_begin) ==
        "    def h():\n        pass\n");
}

TEST_CASE("parser: module-level constants and a kernel file's shape") {
  const kf::Module m =
      parse_file(std::filesystem::path(KILN_SHARED_DIR) / "kernels/composition.py");
  REQUIRE(m.body.size() > 3);
  const kf::Stmt &scale = *m.body[2];
  CHECK(scale.kind == StmtKind::Assign);
  CHECK(sexpr(scale.targets[0].get()) == "SCALE");
  CHECK(sexpr(scale.value.get()) == "(call (. tl constexpr) 2)");
  const kf::Stmt *fill = find_function(m, "fill");
  REQUIRE(fill);
  CHECK(sexpr(fill->decorators[0].get()) == "(call (. triton jit) do_not_specialize=(list 'n'))");
  const kf::Stmt *inv_std = find_function(m, "inv_std");
  REQUIRE(inv_std);
  CHECK(sexpr(inv_std->decorators[0].get()) == "(call (. triton jit) noinline=True)");
  const kf::Stmt *stats = find_function(m, "stats");
  REQUIRE(stats);
  CHECK(sexpr(stats->body.back()->value.get()) == "(tuple mean var)");
}

// ---- errors ----

TEST_CASE("parser: missing colon") {
  const auto e = parse_error("for i in range(3)\n    pass\n");
  REQUIRE(e);
  CHECK(e->line() == 1);
  CHECK(e->col() == 18);
  CHECK(e->message() == "expected ':' after the for header, found end of line");
  CHECK(std::string(e->what()) ==
        "test.py:1:18: expected ':' after the for header, found end of line\n"
        "    for i in range(3)\n"
        "                     ^");
  auto e2 = parse_error("def f(x)\n    pass\n");
  REQUIRE(e2);
  CHECK(e2->message() == "expected ':' after the function signature, found end of line");
  e2 = parse_error("if x y:\n    pass\n");
  REQUIRE(e2);
  CHECK(e2->col() == 6);
  CHECK(e2->message() == "expected ':' after the if condition, found 'y'");
  e2 = parse_error("while x\n    pass\n");
  REQUIRE(e2);
  CHECK(e2->message() == "expected ':' after the while condition, found end of line");
  e2 = parse_error("if x:\n    pass\nelse\n    pass\n");
  REQUIRE(e2);
  CHECK(e2->line() == 3);
  CHECK(e2->message() == "expected ':' after 'else', found end of line");
}

TEST_CASE("parser: bad indentation") {
  auto e = parse_error("x = 1\n    y = 2\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 5);
  CHECK(e->message() == "unexpected indent");
  CHECK(std::string(e->what()) == "test.py:2:5: unexpected indent\n"
                                  "        y = 2\n"
                                  "        ^");
  e = parse_error("def f():\n    x = 1\n        y = 2\n");
  REQUIRE(e);
  CHECK(e->line() == 3);
  CHECK(e->message() == "unexpected indent");
  e = parse_error("def f():\nreturn 1\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 1);
  CHECK(e->message() ==
        "expected an indented block after the function definition on line 1, found 'return'");
  e = parse_error("for i in x:\n");
  REQUIRE(e);
  CHECK(e->line() == 1);
  CHECK(e->col() == 12);
  CHECK(e->message() ==
        "expected an indented block after the 'for' statement on line 1, found end of file");
  e = parse_error("def f():\n    if x:\n        pass\n      y = 1\n");
  REQUIRE(e);
  CHECK(e->line() == 4);
  CHECK(e->message() == "unindent does not match any outer indentation level");
}

TEST_CASE("parser: unterminated string") {
  const auto e = parse_error("def f():\n    s = \"abc\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 9);
  CHECK(std::string(e->what()) == "test.py:2:9: unterminated string literal\n"
                                  "        s = \"abc\n"
                                  "            ^");
}

TEST_CASE("parser: unclosed parenthesis at the end of the file") {
  const auto e = parse_error("def f(x):\n    return tl.sum(x, axis=0\n");
  REQUIRE(e);
  CHECK(e->line() == 2);
  CHECK(e->col() == 18);
  CHECK(e->message() == "'(' was never closed");
  CHECK(std::string(e->what()) == "test.py:2:18: '(' was never closed\n"
                                  "        return tl.sum(x, axis=0\n"
                                  "                     ^");
}

TEST_CASE("parser: Python beyond the kernel subset parses, the IR generator refuses it") {
  // The parser takes any Python file (Triton's module model: host code is
  // never an error by itself); compile_errors_test checks the refusals
  // inside a jit function. Each construct here was a syntax error once.
  const char *const texts[] = {
      "x = 1\nclass A:\n    pass\n",
      "with open(f) as g:\n    pass\n",
      "try:\n    pass\nexcept E:\n    pass\n",
      "def f():\n    global x\n",
      "def f():\n    nonlocal x\n",
      "del x\n",
      "def f():\n    raise ValueError()\n",
      "async def f():\n    pass\n",
      "def f():\n    yield 1\n",
      "x = 1; del x\n",
      "@triton.jit\nclass A:\n    pass\n",
      "match x:\n    case 1:\n        pass\n",
      "f = lambda x: x\n",
      "x = yield\n",
      "x = await y\n",
      "if (n := 10) > 5:\n    pass\n",
      "x = {}\n",
      "x = [i for i in y]\n",
      "x = sum(i for i in y)\n",
      "x = ...\n",
      "a, *b = x\n",
      "f(*args)\n",
      "f(**kwargs)\n",
      "x = f'{y}'\n",
      "x = b'y'\n",
      "x = 3j\n",
      "x = 18446744073709551616\n",
      "from x import *\n",
      "def f(x, *args, y, **kw):\n    pass\n",
      "def f(a, /, b):\n    pass\n",
      "type T = int\n",
  };
  for (const char *text : texts) {
    CAPTURE(text);
    CHECK_NOTHROW(parse_text(text));
  }
  // `match` is a soft keyword: as a name it is fine.
  CHECK(parse_text("match = 1\nmatch(x)\n").body.size() == 2);
}

TEST_CASE("parser: parameters keep their kinds in one list, in source order") {
  const kf::Module m = parse_text("def f(a, b=1, /, c=2, *args, d, e=3, **kw):\n    pass\n");
  const kf::Stmt &fn = only_function(m);
  using kf::ParamKind;
  const std::pair<const char *, ParamKind> want[] = {
      {"a", ParamKind::PositionalOnly}, {"b", ParamKind::PositionalOnly},
      {"c", ParamKind::Positional},     {"args", ParamKind::VarPositional},
      {"d", ParamKind::KeywordOnly},    {"e", ParamKind::KeywordOnly},
      {"kw", ParamKind::VarKeyword},
  };
  REQUIRE(fn.params.size() == std::size(want));
  for (size_t i = 0; i < fn.params.size(); ++i) {
    CAPTURE(i);
    CHECK(fn.params[i].name == want[i].first);
    CHECK(fn.params[i].kind == want[i].second);
  }
  CHECK(fn.params[4].loc.col == 30); // `d`
  CHECK(fn.params[3].loc.col == 24); // the name after '*'
}

TEST_CASE("parser: parameter list errors") {
  struct Case {
    const char *text;
    unsigned col;
    const char *message;
  };
  const Case cases[] = {
      {"def f(a, a):\n    pass\n", 10, "duplicate parameter 'a' in function 'f'"},
      {"def f(a=1, b):\n    pass\n", 12,
       "parameter 'b' without a default follows a parameter with a default"},
      {"def f(a=1, /, b):\n    pass\n", 15,
       "parameter 'b' without a default follows a parameter with a default"},
      {"def f(a b):\n    pass\n", 9, "expected ',' or ')' in the parameter list, found 'b'"},
      {"def (a):\n    pass\n", 5, "expected a function name after 'def', found '('"},
      {"def f(*):\n    pass\n", 7, "a bare '*' must be followed by a keyword-only parameter"},
      {"def f(*, **kw):\n    pass\n", 7, "a bare '*' must be followed by a keyword-only parameter"},
      {"def f(*a, *b):\n    pass\n", 11, "'*' may appear only once in a parameter list"},
      {"def f(**kw, a):\n    pass\n", 13, "no parameter can follow '**kw'"},
      {"def f(/):\n    pass\n", 7, "at least one parameter must come before '/'"},
      {"def f(a, /, b, /):\n    pass\n", 16, "'/' may appear only once in a parameter list"},
      {"def f(*, a, /):\n    pass\n", 13, "'/' must come before '*'"},
      {"def f(*a=1):\n    pass\n", 9, "a variadic parameter ('a') cannot have a default"},
      {"f = lambda a: int: 1\n", 18, "expected end of line after the statement, found ':'"},
      {"f = lambda a, a: 1\n", 15, "duplicate parameter 'a' in lambda"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    const auto e = parse_error(c.text);
    REQUIRE(e);
    CHECK(e->col() == c.col);
    CHECK(e->message() == c.message);
  }
}

TEST_CASE("parser: malformed expressions") {
  struct Case {
    const char *text;
    unsigned line, col;
    const char *message;
  };
  const Case cases[] = {
      {"x = (1 + )\n", 1, 10, "expected an expression, found ')'"},
      {"x = \n", 1, 4, "expected an expression, found end of line"},
      {"x = 1 2\n", 1, 7, "expected end of line after the statement, found '2'"},
      {"x = def\n", 1, 5, "expected an expression, found 'def'"},
      {"x = f(a b)\n", 1, 9,
       "expected ',' or ')' after the call argument (the call opens on line 1), found 'b'"},
      {"x = f(a=1, b)\n", 1, 12, "a positional argument cannot follow keyword arguments"},
      {"x = f(a=1, a=2)\n", 1, 12, "keyword argument 'a' is given twice"},
      {"x = (a b)\n", 1, 8, "expected ')' to close the '(' on line 1, found 'b'"},
      {"x = [a b]\n", 1, 8, "expected ',' or ']' in the list, found 'b'"},
      {"x = (a, b c)\n", 1, 11, "expected ',' or ')' in the tuple, found 'c'"},
      {"x = a[1 2]\n", 1, 9, "expected ']' to close the subscript, found '2'"},
      {"x = a[]\n", 1, 7, "expected an expression, found ']'"},
      {"x = a.\n", 1, 7, "expected an attribute name after '.', found end of line"},
      {"x = a.if\n", 1, 7, "expected an attribute name after '.', found 'if'"},
      {"x = a if b\n", 1, 11, "expected 'else' in the conditional expression, found end of line"},
      {"x = a not b\n", 1, 11, "expected 'in' after 'not' in the comparison, found 'b'"},
      {"for x y:\n    pass\n", 1, 7, "expected 'in' after the for loop's target, found 'y'"},
      {"f() = 1\n", 1, 1, "cannot assign to a function call"},
      {"a + b = 1\n", 1, 3, "cannot assign to an expression"},
      {"1 = x\n", 1, 1, "cannot assign to a literal"},
      {"None = x\n", 1, 1, "cannot assign to None"},
      {"for f() in x:\n    pass\n", 1, 5, "cannot assign to a function call"},
      {"a, b += 1\n", 1, 1,
       "augmented assignment ('+=') needs a single target, not a tuple or list"},
      {"a, b: int\n", 1, 1, "only a single target (not a tuple or list) can be annotated"},
      {"else:\n    pass\n", 1, 1, "'else' does not follow an 'if', 'for', 'while' or 'try' block"},
      {"elif x:\n    pass\n", 1, 1, "'elif' does not follow an 'if' block"},
      {"@triton.jit\nx = 1\n", 2, 1,
       "expected 'def', 'async def' or 'class' after the decorator, found 'x'"},
      {"@triton.jit def f(): pass\n", 1, 13,
       "expected end of line after the decorator, found 'def'"},
      {"import\n", 1, 7, "expected a module name, found end of line"},
      {"from x imp y\n", 1, 8, "expected 'import' after the module name, found 'imp'"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    const auto e = parse_error(c.text);
    REQUIRE(e);
    CHECK(e->line() == c.line);
    CHECK(e->col() == c.col);
    CHECK(e->message() == c.message);
  }
}

TEST_CASE("parser: deep nesting is refused, not a stack overflow") {
  const std::string ok = "x = " + std::string(40, '(') + "1" + std::string(40, ')') + "\n";
  CHECK(sexpr(parse_text(ok).body[0]->value.get()) == "1");
  const std::string parens = "x = " + std::string(500, '(') + "1" + std::string(500, ')') + "\n";
  auto e = parse_error(parens);
  REQUIRE(e);
  CHECK(e->message() == "the expression is nested too deeply (more than 100 levels)");
  std::string unary = "x = ";
  for (int i = 0; i < 500; ++i)
    unary += "-";
  e = parse_error(unary + "1\n");
  REQUIRE(e);
  CHECK(e->message() == "the expression is nested too deeply (more than 100 levels)");
  // A long elif chain is built without recursion.
  std::string chain = "if a:\n    pass\n";
  for (int i = 0; i < 2000; ++i)
    chain += "elif a:\n    pass\n";
  CHECK(parse_text(chain).body.size() == 1);
}
