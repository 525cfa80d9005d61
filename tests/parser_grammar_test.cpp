// The full Python 3.12 grammar, beyond the kernel subset: each case is a
// snippet and the canonical dump (frontend/ast_dump.hpp) of CPython 3.12's
// tree for it, as tests/tools/ast_canon.py printed it with python3.12. The
// stdlib test checks the same on thousands of files, but Debian's stdlib is
// Python 3.11 code: these cases cover what only 3.12 has (PEP 695 type
// parameters and `type` aliases, PEP 701 f-strings) and gather one example
// of every other construct in one place.
#include <doctest/doctest.h>

#include <string>

#include "compiler/frontend/ast_dump.hpp"
#include "compiler/frontend/parser.hpp"

namespace kf = kiln::frontend;

namespace {

std::string tree(const std::string &text) {
  return kf::dump(kf::parse(std::make_shared<kf::SourceFile>("test.py", text)));
}

} // namespace

TEST_CASE("parser grammar: PEP 695 type parameters and type aliases") {
  CHECK(
      tree(R"py(def f[T: int, *Ts, **P](x: T, *args: *Ts) -> T:
    pass
class C[T](Base, metaclass=M):
    pass
type X = int
type L[T: (int, str)] = list[T]
type = 1
type(x)
)py") ==
      R"dump(FunctionDef@1:0('f', arguments([], [arg('x', Name('T'))], arg('args', Starred(Name('Ts'))), [], [], ~, []), [], Name('T'), [TypeVar('T', Name('int')), TypeVarTuple('Ts'), ParamSpec('P')])
  body:
    Pass@2:4()
ClassDef@3:0('C', [Name('Base')], [keyword('metaclass', Name('M'))], [], [TypeVar('T', ~)])
  body:
    Pass@4:4()
TypeAlias@5:0(Name('X'), [], Name('int'))
TypeAlias@6:0(Name('L'), [TypeVar('T', Tuple([Name('int'), Name('str')]))], Subscript(Name('list'), [Name('T')]))
Assign@7:0([Name('type')], Int(1))
Expr@8:0(Call(Name('type'), [Name('x')], []))
)dump");
}

TEST_CASE("parser grammar: PEP 701 f-strings: reused quotes, nesting, debugging, specs") {
  CHECK(tree(R"py(a = f"{"a"}"
b = f"{f"{x!r:>{w}}"}"
c = f"{x = }" f'{y=!s:^10}' f"{z=:>5}"
d = f"""{
    x  # a comment
    + 1}"""
e = f"{'\n'.join(a)}"
g = f"{{literal}} {x:{w}.{p}f} end"
h = rf"\d{x}\n" "plain" f""
i = f"{x!a}" F"{(lambda: 1)}" f"{(y := 2)}"
)py") ==
        R"dump(Assign@1:0([Name('a')], JoinedStr([FormattedValue(Str('a'), -1, ~)]))
Assign@2:0([Name('b')], JoinedStr([FormattedValue(JoinedStr([FormattedValue(Name('x'), 114, JoinedStr([Str('>'), FormattedValue(Name('w'), -1, ~)]))]), -1, ~)]))
Assign@3:0([Name('c')], JoinedStr([Str('x = '), FormattedValue(Name('x'), 114, ~), Str('y='), FormattedValue(Name('y'), 115, JoinedStr([Str('^10')])), Str('z='), FormattedValue(Name('z'), -1, JoinedStr([Str('>5')]))]))
Assign@4:0([Name('d')], JoinedStr([FormattedValue(BinOp(Name('x'), Add, Int(1)), -1, ~)]))
Assign@7:0([Name('e')], JoinedStr([FormattedValue(Call(Attribute(Str('\u{A}'), 'join'), [Name('a')], []), -1, ~)]))
Assign@8:0([Name('g')], JoinedStr([Str('{literal} '), FormattedValue(Name('x'), -1, JoinedStr([FormattedValue(Name('w'), -1, ~), Str('.'), FormattedValue(Name('p'), -1, ~), Str('f')])), Str(' end')]))
Assign@9:0([Name('h')], JoinedStr([Str('\u{5C}d'), FormattedValue(Name('x'), -1, ~), Str('\u{5C}nplain')]))
Assign@10:0([Name('i')], JoinedStr([FormattedValue(Name('x'), 97, ~), FormattedValue(Lambda(arguments([], [], ~, [], [], ~, []), Int(1)), -1, ~), FormattedValue(NamedExpr(Name('y'), Int(2)), -1, ~)]))
)dump");
}

TEST_CASE("parser grammar: match statements with every pattern kind") {
  CHECK(tree(R"py(match command.split():
    case [action]:
        pass
    case [action, obj, *rest] if obj:
        pass
    case Point(x=0, y=0) | Point(1, 2):
        pass
    case {"key": value, 1: _, **rest}:
        pass
    case (1 | -2 | 3.5 | 1 + 2j | -1 - 2j) as number:
        pass
    case None | True | False | "s" "t" | b"b":
        pass
    case Color.RED | mod.Enum.VALUE:
        pass
    case (a, *_) | [*_, a]:
        pass
    case ():
        pass
    case _:
        pass
match = 1
match(x).y = 2
match a, *b:
    case str() | bytes():
        pass
)py") ==
        R"dump(Match@1:0(Call(Attribute(Name('command'), 'split'), [], []))
  cases:
    match_case(MatchSequence([MatchAs(~, 'action')]), ~)
      body:
        Pass@3:8()
    match_case(MatchSequence([MatchAs(~, 'action'), MatchAs(~, 'obj'), MatchStar('rest')]), Name('obj'))
      body:
        Pass@5:8()
    match_case(MatchOr([MatchClass(Name('Point'), [], ['x', 'y'], [MatchValue(Int(0)), MatchValue(Int(0))]), MatchClass(Name('Point'), [MatchValue(Int(1)), MatchValue(Int(2))], [], [])]), ~)
      body:
        Pass@7:8()
    match_case(MatchMapping([Str('key'), Int(1)], [MatchAs(~, 'value'), MatchAs(~, ~)], 'rest'), ~)
      body:
        Pass@9:8()
    match_case(MatchAs(MatchOr([MatchValue(Int(1)), MatchValue(UnaryOp(USub, Int(2))), MatchValue(Float(400c000000000000)), MatchValue(BinOp(Int(1), Add, Complex(4000000000000000))), MatchValue(BinOp(UnaryOp(USub, Int(1)), Sub, Complex(4000000000000000)))]), 'number'), ~)
      body:
        Pass@11:8()
    match_case(MatchOr([MatchSingleton(None), MatchSingleton(True), MatchSingleton(False), MatchValue(Str('st')), MatchValue(Bytes('b'))]), ~)
      body:
        Pass@13:8()
    match_case(MatchOr([MatchValue(Attribute(Name('Color'), 'RED')), MatchValue(Attribute(Attribute(Name('mod'), 'Enum'), 'VALUE'))]), ~)
      body:
        Pass@15:8()
    match_case(MatchOr([MatchSequence([MatchAs(~, 'a'), MatchStar(~)]), MatchSequence([MatchStar(~), MatchAs(~, 'a')])]), ~)
      body:
        Pass@17:8()
    match_case(MatchSequence([]), ~)
      body:
        Pass@19:8()
    match_case(MatchAs(~, ~), ~)
      body:
        Pass@21:8()
Assign@22:0([Name('match')], Int(1))
Assign@23:0([Attribute(Call(Name('match'), [Name('x')], []), 'y')], Int(2))
Match@24:0(Tuple([Name('a'), Starred(Name('b'))]))
  cases:
    match_case(MatchOr([MatchClass(Name('str'), [], [], []), MatchClass(Name('bytes'), [], [], [])]), ~)
      body:
        Pass@26:8()
)dump");
}

TEST_CASE("parser grammar: try, with and async statements") {
  CHECK(tree(R"py(try:
    pass
except (A, B) as e:
    raise C from e
except D:
    raise
else:
    pass
finally:
    pass
try:
    pass
except* ValueError as eg:
    pass
with a as b, c:
    pass
with (a as b, c as (d, e),):
    pass
with (a, b) as c:
    pass
async def f():
    async with a as b:
        await x
    async for i in y:
        yield i
    return [j async for j in z if await j]
)py") ==
        R"dump(Try@1:0()
  body:
    Pass@2:4()
  handlers:
    ExceptHandler@3:0(Tuple([Name('A'), Name('B')]), 'e')
      body:
        Raise@4:4(Name('C'), Name('e'))
    ExceptHandler@5:0(Name('D'), ~)
      body:
        Raise@6:4(~, ~)
  orelse:
    Pass@8:4()
  finalbody:
    Pass@10:4()
TryStar@11:0()
  body:
    Pass@12:4()
  handlers:
    ExceptHandler@13:0(Name('ValueError'), 'eg')
      body:
        Pass@14:4()
With@15:0([withitem(Name('a'), Name('b')), withitem(Name('c'), ~)])
  body:
    Pass@16:4()
With@17:0([withitem(Name('a'), Name('b')), withitem(Name('c'), Tuple([Name('d'), Name('e')]))])
  body:
    Pass@18:4()
With@19:0([withitem(Tuple([Name('a'), Name('b')]), Name('c'))])
  body:
    Pass@20:4()
AsyncFunctionDef@21:0('f', arguments([], [], ~, [], [], ~, []), [], ~, [])
  body:
    AsyncWith@22:4([withitem(Name('a'), Name('b'))])
      body:
        Expr@23:8(Await(Name('x')))
    AsyncFor@24:4(Name('i'), Name('y'))
      body:
        Expr@25:8(Yield(Name('i')))
    Return@26:4(ListComp(Name('j'), [comprehension(Name('j'), Name('z'), [Await(Name('j'))], 1)]))
)dump");
}

TEST_CASE(
    "parser grammar: statements: class, global, nonlocal, del, chained and annotated assignment") {
  CHECK(
      tree(R"py(@decorator
@a.b[1](c)
@(lambda f: f)
class A(B, *bases, **kw):
    x: int
    y.z: "str" = 1
    w[0]: list = []
    def f(self):
        global g, h
        nonlocal n
        del a, b[0], c.d
        del (e, f)
        a = b = c = 1
        a, *b = c = d
        a += yield
        x = yield from y
x = 1; y = 2;
z = 1 + \
    2
from . import a
from ..m import (b as c, d,)
from x import *
import a.b as c, d
)py") ==
      R"dump(ClassDef@4:0('A', [Name('B'), Starred(Name('bases'))], [keyword(~, Name('kw'))], [Name('decorator'), Call(Subscript(Attribute(Name('a'), 'b'), [Int(1)]), [Name('c')], []), Lambda(arguments([], [arg('f', ~)], ~, [], [], ~, []), Name('f'))], [])
  body:
    AnnAssign@5:4(Name('x'), Name('int'), ~)
    AnnAssign@6:4(Attribute(Name('y'), 'z'), Str('str'), Int(1))
    AnnAssign@7:4(Subscript(Name('w'), [Int(0)]), Name('list'), List([]))
    FunctionDef@8:4('f', arguments([], [arg('self', ~)], ~, [], [], ~, []), [], ~, [])
      body:
        Global@9:8(['g', 'h'])
        Nonlocal@10:8(['n'])
        Delete@11:8([Name('a'), Subscript(Name('b'), [Int(0)]), Attribute(Name('c'), 'd')])
        Delete@12:8([Tuple([Name('e'), Name('f')])])
        Assign@13:8([Name('a'), Name('b'), Name('c')], Int(1))
        Assign@14:8([Tuple([Name('a'), Starred(Name('b'))]), Name('c')], Name('d'))
        AugAssign@15:8(Name('a'), Add, Yield(~))
        Assign@16:8([Name('x')], YieldFrom(Name('y')))
Assign@17:0([Name('x')], Int(1))
Assign@17:7([Name('y')], Int(2))
Assign@18:0([Name('z')], BinOp(Int(1), Add, Int(2)))
ImportFrom@20:0('.', [alias('a', ~)])
ImportFrom@21:0('..m', [alias('b', 'c'), alias('d', ~)])
ImportFrom@22:0('x', [alias('*', ~)])
Import@23:0([alias('a.b', 'c'), alias('d', ~)])
)dump");
}

TEST_CASE("parser grammar: parameters of every kind") {
  CHECK(
      tree(R"py(def f(a, b=1, /, c=2, *args, d, e=3, **kw): pass
def g(a, /, b, *, c): pass
def h(*, a=1, b): pass
def i(**kw): pass
l = lambda a, b=1, /, c=2, *args, d, e=3, **kw: 0
m = lambda: 0
n = lambda *a, **k: (a, k)
)py") ==
      R"dump(FunctionDef@1:0('f', arguments([arg('a', ~), arg('b', ~)], [arg('c', ~)], arg('args', ~), [arg('d', ~), arg('e', ~)], [~, Int(3)], arg('kw', ~), [Int(1), Int(2)]), [], ~, [])
  body:
    Pass@1:44()
FunctionDef@2:0('g', arguments([arg('a', ~)], [arg('b', ~)], ~, [arg('c', ~)], [~], ~, []), [], ~, [])
  body:
    Pass@2:22()
FunctionDef@3:0('h', arguments([], [], ~, [arg('a', ~), arg('b', ~)], [Int(1), ~], ~, []), [], ~, [])
  body:
    Pass@3:18()
FunctionDef@4:0('i', arguments([], [], ~, [], [], arg('kw', ~), []), [], ~, [])
  body:
    Pass@4:13()
Assign@5:0([Name('l')], Lambda(arguments([arg('a', ~), arg('b', ~)], [arg('c', ~)], arg('args', ~), [arg('d', ~), arg('e', ~)], [~, Int(3)], arg('kw', ~), [Int(1), Int(2)]), Int(0)))
Assign@6:0([Name('m')], Lambda(arguments([], [], ~, [], [], ~, []), Int(0)))
Assign@7:0([Name('n')], Lambda(arguments([], [], arg('a', ~), [], [], arg('k', ~), []), Tuple([Name('a'), Name('k')])))
)dump");
}

TEST_CASE("parser grammar: expressions: displays, comprehensions, calls, literals") {
  CHECK(tree(R"py(x = {1: 2, **a, 3: 4}
x = {*a, b}
x = {k: v for k, v in d.items() if k}
x = {y for y in z}
x = [i * j for i in a if i for j in b if j if not i]
x = (i for i in a)
x = [*a, *b]
f(*args, x, *more, k=1, **kw, j=2)
f(i for i in a)
f(a)(b)[c].d
x = 12345678901234567890123456789 + 0x_FFFF_FFFF_FFFF_FFFF_FFFF + 0o777 + 0b1
x = 1j + 2.5J + 1e3j + 0j
x = b"bytes\x00\xff" rb"\d" Rb"x"
x = ...
x = a[...], a[1:2, ::3, :], a[:, None], a[i,], a[(i, j)], a[*b]
x = a if b else c if d else e
x = a not in b is not c < d <= e
x = not a and b or c and not d
x = -a ** -b
x = (yield)
x = await y if z else w
x = "a" "b" u"c" 'd'[0]
)py") ==
        R"dump(Assign@1:0([Name('x')], Dict([Int(1), ~, Int(3)], [Int(2), Name('a'), Int(4)]))
Assign@2:0([Name('x')], Set([Starred(Name('a')), Name('b')]))
Assign@3:0([Name('x')], DictComp(Name('k'), Name('v'), [comprehension(Tuple([Name('k'), Name('v')]), Call(Attribute(Name('d'), 'items'), [], []), [Name('k')], 0)]))
Assign@4:0([Name('x')], SetComp(Name('y'), [comprehension(Name('y'), Name('z'), [], 0)]))
Assign@5:0([Name('x')], ListComp(BinOp(Name('i'), Mult, Name('j')), [comprehension(Name('i'), Name('a'), [Name('i')], 0), comprehension(Name('j'), Name('b'), [Name('j'), UnaryOp(Not, Name('i'))], 0)]))
Assign@6:0([Name('x')], GeneratorExp(Name('i'), [comprehension(Name('i'), Name('a'), [], 0)]))
Assign@7:0([Name('x')], List([Starred(Name('a')), Starred(Name('b'))]))
Expr@8:0(Call(Name('f'), [Starred(Name('args')), Name('x'), Starred(Name('more'))], [keyword('k', Int(1)), keyword(~, Name('kw')), keyword('j', Int(2))]))
Expr@9:0(Call(Name('f'), [GeneratorExp(Name('i'), [comprehension(Name('i'), Name('a'), [], 0)])], []))
Expr@10:0(Attribute(Subscript(Call(Call(Name('f'), [Name('a')], []), [Name('b')], []), [Name('c')]), 'd'))
Assign@11:0([Name('x')], BinOp(BinOp(BinOp(Int(12345678901234567890123456789), Add, Int(1208925819614629174706175)), Add, Int(511)), Add, Int(1)))
Assign@12:0([Name('x')], BinOp(BinOp(BinOp(Complex(3ff0000000000000), Add, Complex(4004000000000000)), Add, Complex(408f400000000000)), Add, Complex(0)))
Assign@13:0([Name('x')], Bytes('bytes\x{0}\x{FF}\x{5C}dx'))
Assign@14:0([Name('x')], Ellipsis)
Assign@15:0([Name('x')], Tuple([Subscript(Name('a'), [Ellipsis]), Subscript(Name('a'), [Slice(Int(1), Int(2), ~), Slice(~, ~, Int(3)), Slice(~, ~, ~)]), Subscript(Name('a'), [Slice(~, ~, ~), None]), Subscript(Name('a'), [Name('i')]), Subscript(Name('a'), [Name('i'), Name('j')]), Subscript(Name('a'), [Starred(Name('b'))])]))
Assign@16:0([Name('x')], IfExp(Name('b'), Name('a'), IfExp(Name('d'), Name('c'), Name('e'))))
Assign@17:0([Name('x')], Compare(Name('a'), [NotIn, IsNot, Lt, LtE], [Name('b'), Name('c'), Name('d'), Name('e')]))
Assign@18:0([Name('x')], BoolOp(Or, [BoolOp(And, [UnaryOp(Not, Name('a')), Name('b')]), BoolOp(And, [Name('c'), UnaryOp(Not, Name('d'))])]))
Assign@19:0([Name('x')], UnaryOp(USub, BinOp(Name('a'), Pow, UnaryOp(USub, Name('b')))))
Assign@20:0([Name('x')], Yield(~))
Assign@21:0([Name('x')], IfExp(Name('z'), Await(Name('y')), Name('w')))
Assign@22:0([Name('x')], Subscript(Str('abcd'), [Int(0)]))
)dump");
}

// ---- errors ----

namespace {

std::string parse_error_message(const std::string &text) {
  try {
    tree(text);
  } catch (const kiln::CompileError &e) {
    return e.message();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("parser grammar: what Python refuses, kiln refuses with a message") {
  const std::pair<const char *, const char *> cases[] = {
      {"try:\n    pass\nexcept E:\n    pass\nexcept* F:\n    pass\n",
       "cannot have both 'except' and 'except*' on the same 'try'"},
      {"try:\n    pass\nx = 1\n",
       "expected 'except' or 'finally' after the try block on line 1, found 'x'"},
      {"try:\n    pass\nexcept A, B:\n    pass\n",
       "multiple exception types must be parenthesized"},
      {"f(**k, *a)\n",
       "iterable argument unpacking ('*') cannot follow keyword argument unpacking ('**')"},
      {"f(**k, a)\n", "a positional argument cannot follow keyword argument unpacking ('**')"},
      {"f(x for x in y, 1)\n",
       "a generator expression must be parenthesized unless it is the only argument"},
      {"*a = b\n", "a starred assignment target must be in a list or tuple"},
      {"a, *b, *c = d\n", "multiple starred expressions in assignment"},
      {"*a\n", "a starred expression ('*x') can be used only inside a tuple, list, set or call"},
      {"x = *a\n",
       "a starred expression ('*x') can be used only inside a tuple, list, set or call"},
      {"x = 'a' b'b'\n", "cannot mix bytes and nonbytes literals"},
      {"x = f'{x!z}'\n", "f-string: the conversion after '!' must be 's', 'r' or 'a'"},
      {"x = f'{x! r}'\n", "f-string: the conversion must come right after the '!'"},
      {"x = f'{*a}'\n",
       "a starred expression ('*x') can be used only inside a tuple, list, set or call"},
      {"x = (a.b := 1)\n", "the target of ':=' must be a name"},
      {"del f()\n", "cannot delete a function call"},
      {"x += yield\n[a, b] += 1\n",
       "augmented assignment ('+=') needs a single target, not a tuple or list"},
      {"for x in *a:\n    pass\n",
       "a starred expression ('*x') can be used only inside a tuple, list, set or call"},
      {"with a as f():\n    pass\n", "cannot assign to a function call"},
      {"[x for f() in y]\n", "cannot assign to a function call"},
      {"lambda: (yield)\nasync x\n", "expected 'def', 'for' or 'with' after 'async', found 'x'"},
      {"class C:\npass\n", "expected an indented block after the class definition on line 1, "
                           "found 'pass'"},
      {"match x:\n    case *a:\n        pass\n",
       "a star pattern ('*x') can be used only inside a sequence pattern"},
      {"match x:\n    case a as _:\n        pass\n",
       "'_' cannot be the target of 'as' in a pattern"},
      {"match x:\n    case f'{a}':\n        pass\n",
       "a pattern cannot be an f-string; patterns match literals and attributes"},
      {"match x:\n    case C(a=1, b):\n        pass\n",
       "a positional pattern cannot follow keyword patterns"},
      {"match x:\n    case 1 + 2:\n        pass\n",
       "expected an imaginary number after '+' in the complex literal pattern, found '2'"},
      {"match x:\n    x = 1\n", "expected 'case' in the match statement, found 'x'"},
      {"type X[] = int\n", "expected a type parameter name, found ']'"},
      {"def f[](): pass\n", "expected a type parameter name, found ']'"},
      {"x = 1 +\n", "expected an expression, found end of line"},
  };
  for (const auto &[text, message] : cases) {
    CAPTURE(text);
    CHECK(parse_error_message(text) == message);
  }
}

TEST_CASE("parser grammar: hostile nesting is refused, not a stack overflow") {
  const std::string too_deep = "the expression is nested too deeply (more than 100 levels)";
  const std::string too_long = "the expression is nested too deeply (more than 1000 operators and "
                               "levels)";
  // Chains are built without recursion, but later passes recurse over them.
  std::string sum = "x = 1";
  for (int i = 0; i < 1500; ++i)
    sum += " + 1";
  CHECK(parse_error_message(sum + "\n") == too_long);
  std::string attributes = "x = a";
  for (int i = 0; i < 1500; ++i)
    attributes += ".b";
  CHECK(parse_error_message(attributes + "\n") == too_long);
  std::string calls = "x = f";
  for (int i = 0; i < 1500; ++i)
    calls += "()";
  CHECK(parse_error_message(calls + "\n") == too_long);
  std::string ok_sum = "x = 1";
  for (int i = 0; i < 500; ++i)
    ok_sum += " + 1";
  CHECK_NOTHROW(tree(ok_sum + "\n"));
  // Recursion: lambdas, f-strings, patterns, comprehensions, displays.
  std::string lambdas = "x = ";
  for (int i = 0; i < 200; ++i)
    lambdas += "lambda: ";
  CHECK(parse_error_message(lambdas + "1\n") == too_deep);
  std::string fstring = "1";
  for (int i = 0; i < 200; ++i)
    fstring = "f'{" + fstring + "}'";
  CHECK(parse_error_message("x = " + fstring + "\n") == too_deep);
  CHECK(parse_error_message("match x:\n    case " + std::string(200, '[') + std::string(200, ']') +
                            ":\n        pass\n") == too_deep);
  CHECK(parse_error_message("x = " + std::string(200, '{') + std::string(200, '}') + "\n") ==
        too_deep);
  std::string comprehension = "x";
  for (int i = 0; i < 200; ++i)
    comprehension = "[" + comprehension + " for x in y]";
  CHECK(parse_error_message("x = " + comprehension + "\n") == too_deep);
}
