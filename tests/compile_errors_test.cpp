// Compile errors a user can cause, one test case each, through the public
// API: a kernel from a string (Module::from_string), compiled for the CPU by
// Kernel::warmup with mock pointers. Each case checks what shared/DESIGN.md
// section 6 promises: the line and column, a message that says what went
// wrong and how to fix it, and a what() that shows the source line with a
// caret under the column.
//
// Syntax and module-level errors are reported when the file is loaded
// (from_string throws); the rest when a kernel is compiled (warmup throws,
// from_string does not). load_error and compile_error check which.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/text_checks.hpp"

using kiln::test::contains;

namespace {

const char *const kHeader = "import triton\nimport triton.language as tl\n\n";

/// The CompileError that loading `body` (after kHeader) throws. Fails the
/// test case when loading succeeds.
kiln::CompileError load_error(const std::string &body) {
  try {
    kiln::Module::from_string(kHeader + body, "k.py");
  } catch (const kiln::CompileError &e) {
    return e;
  }
  FAIL("loading did not throw a CompileError:\n" << body);
  throw; // unreachable: FAIL throws
}

/// The CompileError that compiling kernel `k` of `body` (after kHeader)
/// for `args` throws. Fails the test case when loading throws (the error
/// must come from the compile) or when the compile succeeds.
kiln::CompileError compile_error(const std::string &body, std::vector<kiln::Arg> args) {
  std::optional<kiln::Module> module;
  try {
    module = kiln::Module::from_string(kHeader + body, "k.py");
  } catch (const kiln::CompileError &e) {
    FAIL("loading threw, but the error belongs to the compile: " << e.what());
  }
  try {
    module->kernel("k").warmup(args);
  } catch (const kiln::CompileError &e) {
    return e;
  }
  FAIL("compiling k did not throw a CompileError:\n" << body);
  throw; // unreachable: FAIL throws
}

/// The common kernel signature `k(x_ptr, n)`: a mock f32 pointer and an
/// int that specializes as i32 (not 1, which would be a constexpr).
std::vector<kiln::Arg> ptr_and_n() {
  return {kiln::Arg::mock(kiln::DType::f32), kiln::Arg(7)};
}

/// what() is "k.py:LINE:COL: message", the source line, and a caret under COL.
void check_display(const kiln::CompileError &e, const std::string &source_line) {
  const std::string want = "k.py:" + std::to_string(e.line()) + ":" + std::to_string(e.col()) +
                           ": " + e.message() + "\n    " + source_line + "\n    " +
                           std::string(e.col() - 1, ' ') + "^";
  CHECK(std::string(e.what()) == want);
  CHECK(e.file() == "k.py");
}

// Line numbers below count kHeader's three lines: a body's first line is 4.

} // namespace

// ---- unsupported constructs ----

TEST_CASE("compile errors: a 'with' statement in a kernel is refused when compiling, at its "
          "keyword") {
  // The parser takes any Python (host code around a kernel is never an
  // error by itself); the IR generator refuses what a kernel cannot mean.
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    with open(x_ptr) as f:\n"
                                             "        pass\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 5);
  CHECK(e.message() == "'with' statements are not supported inside a @triton.jit function "
                       "(Triton kernels have no context managers); write the body without 'with'");
  check_display(e, "    with open(x_ptr) as f:");
}

TEST_CASE("compile errors: a lambda in a kernel is refused and points at a jit function instead") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    f = lambda a: a + 1\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 9);
  CHECK(e.message() == "lambda expressions are not supported inside a @triton.jit function; "
                       "define a @triton.jit function and call it");
  check_display(e, "    f = lambda a: a + 1");
}

TEST_CASE("compile errors: every Python construct a kernel cannot mean is named at its line") {
  struct Case {
    const char *body; // the kernel's body, from line 6
    unsigned line, col;
    const char *message;
  };
  const Case cases[] = {
      {"    try:\n        pass\n    except E:\n        pass\n", 6, 5,
       "'try' statements are not supported inside a @triton.jit function (kernels cannot raise "
       "or catch exceptions); check conditions with tl.static_assert or tl.device_assert"},
      {"    if n:\n        raise ValueError(n)\n", 7, 9,
       "'raise' statements are not supported inside a @triton.jit function (kernels cannot raise "
       "or catch exceptions); check conditions with tl.static_assert or tl.device_assert"},
      {"    global g\n", 6, 5,
       "'global' statements are not supported inside a @triton.jit function; pass the value as a "
       "parameter and return the result"},
      {"    class C:\n        pass\n", 6, 5,
       "'class' statements are not supported inside a @triton.jit function"},
      {"    async def f():\n        pass\n", 6, 5,
       "'async def' statements are not supported inside a @triton.jit function"},
      {"    del n\n", 6, 5, "'del' statements are not supported inside a @triton.jit function"},
      {"    match n:\n        case 1:\n            pass\n", 6, 5,
       "'match' statements are not supported inside a @triton.jit function"},
      {"    type T = int\n", 6, 5,
       "'type' statements are not supported inside a @triton.jit function"},
      {"    s = f'{n}'\n", 6, 9, "f-strings are not supported inside a @triton.jit function"},
      {"    d = {1: n}\n", 6, 9, "dict displays are not supported inside a @triton.jit function"},
      {"    l = [i for i in range(n)]\n", 6, 9,
       "list comprehensions are not supported inside a @triton.jit function"},
      {"    if (m := n) > 1:\n        pass\n", 6, 9,
       "assignment expressions (':=') are not supported inside a @triton.jit function"},
      {"    y = b'x'\n", 6, 9, "bytes literals are not supported inside a @triton.jit function"},
      {"    y = 1j\n", 6, 9, "complex literals are not supported inside a @triton.jit function"},
      {"    y = ...\n", 6, 9,
       "Ellipsis literals ('...') are not supported inside a @triton.jit function"},
      {"    y = n + 99999999999999999999\n", 6, 13,
       "integer literal 99999999999999999999 does not fit in int64"},
      {"    tl.store(x_ptr, *n)\n", 6, 21,
       "argument unpacking ('*') is not supported inside a @triton.jit function; pass the "
       "arguments one by one"},
      {"    tl.store(x_ptr, **n)\n", 6, 21,
       "keyword argument unpacking ('**') is not supported inside a @triton.jit function; pass "
       "the arguments by name"},
      {"    a, *b = n, n\n", 6, 8,
       "starred assignment targets ('*x') are not supported inside a @triton.jit function; "
       "unpack into a fixed number of names"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.body);
    const kiln::CompileError e =
        compile_error(std::string("@triton.jit\ndef k(x_ptr, n):\n") + c.body, ptr_and_n());
    CHECK(e.line() == c.line);
    CHECK(e.col() == c.col);
    CHECK(e.message() == c.message);
  }
}

TEST_CASE("compile errors: a jit function's keyword-only or variadic parameter is refused when it is used") {
  // The file loads (other kernels of it stay usable); the kernel does not.
  const kiln::Module m = kiln::Module::from_string(std::string(kHeader) + "@triton.jit\n"
                                                                         "def k(x_ptr, *, n):\n"
                                                                         "    pass\n",
                                                   "k.py");
  try {
    m.kernel("k");
    FAIL("using k did not throw");
  } catch (const kiln::CompileError &e) {
    CHECK(e.line() == 5);
    CHECK(e.col() == 17);
    CHECK(e.message() == "keyword-only parameters ('n') are not supported in @triton.jit functions");
  }
  const kiln::Module v = kiln::Module::from_string(std::string(kHeader) + "@triton.jit\ndef k(x_ptr, *args):\n    pass\n",
                                                   "k.py");
  CHECK_THROWS_WITH_AS(v.kernel("k"), doctest::Contains("variadic parameters ('args') are not supported"),
                       kiln::CompileError);
}

TEST_CASE("compile errors: a module-level class is host code, an error only for a kernel that reads it") {
  const std::string body = "class Config:\n"
                           "    BLOCK = 128\n"
                           "\n"
                           "@triton.jit\n"
                           "def k(x_ptr, n):\n"
                           "    y = Config.BLOCK\n";
  const kiln::CompileError e = compile_error(body, ptr_and_n());
  CHECK(e.line() == 9);
  CHECK(contains(e.message(), "'k' reads 'Config', which k.py:4 binds to a class"));
}

TEST_CASE("compile errors: 'break' is refused when compiling and suggests a while loop") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    for i in range(n):\n"
                                             "        break\n",
                                             ptr_and_n());
  CHECK(e.line() == 7);
  CHECK(e.col() == 9);
  CHECK(contains(e.message(), "'break' is not supported"));
  CHECK(contains(e.message(), "while loop"));
  check_display(e, "        break");
}

TEST_CASE("compile errors: a Triton builtin kiln lacks (tl.tensor) says so at the call") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    a = tl.arange(0, 16)\n"
                                             "    b = tl.tensor(a, a)\n",
                                             ptr_and_n());
  CHECK(e.line() == 7);
  CHECK(e.col() == 12); // `tensor`, the call's name
  CHECK(e.message() ==
        "tl.tensor is not supported by kiln yet; express it with the tl.* builtins kiln supports");
  check_display(e, "    b = tl.tensor(a, a)");
}

TEST_CASE("compile errors: tl.dot_scaled of a 1-D block names the operand") {
  const kiln::CompileError e =
      compile_error("@triton.jit\n"
                    "def k(x_ptr, n):\n"
                    "    a = tl.arange(0, 16)\n"
                    "    b = tl.dot_scaled(a, None, 'e4m3', a, None, 'e4m3')\n",
                    ptr_and_n());
  CHECK(e.message() == "tl.dot_scaled's lhs must be a 2-D block, not <16xi32>");
}

TEST_CASE("compile errors: a misspelt builtin gets a 'did you mean'") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.laod(x_ptr)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 12);
  CHECK(e.message() == "tl.laod is not a builtin kiln knows; did you mean tl.load?");
  check_display(e, "    x = tl.laod(x_ptr)");
}

// ---- types that must agree ----

TEST_CASE("compile errors: a float literal in one branch and a block in the other") {
  // The literal is reported as what it is (f32), not as the i32 it would
  // have been converted to for the merge.
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    if n > 0:\n"
                                             "        x = 1.0\n"
                                             "    else:\n"
                                             "        x = tl.arange(0, 16)\n"
                                             "    tl.store(x_ptr + tl.arange(0, 16), x)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 5);
  CHECK(contains(e.message(), "variable 'x' is f32 in the then-branch but <16xi32> in the "
                              "else-branch of this runtime if"));
  CHECK(contains(e.message(), "same type"));
  CHECK(contains(e.message(), "tl.full(shape, value, dtype)"));
  check_display(e, "    if n > 0:");
}

TEST_CASE("compile errors: an int block in one branch and a float block in the other") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.zeros((16,), tl.float32)\n"
                                             "    if n > 0:\n"
                                             "        x = tl.arange(0, 16)\n"
                                             "    tl.store(x_ptr + tl.arange(0, 16), x)\n",
                                             ptr_and_n());
  CHECK(e.line() == 7);
  CHECK(e.col() == 5);
  CHECK(e.message() == "variable 'x' is <16xi32> in the then-branch but <16xf32> in the "
                       "else-branch of this runtime if; both branches must give it the same "
                       "type: convert one with .to(tl.float32)");
  check_display(e, "    if n > 0:");
}

TEST_CASE("compile errors: a loop-carried variable that changes type") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    acc = 0\n"
                                             "    for i in range(n):\n"
                                             "        acc = acc + 1.5\n"
                                             "    tl.store(x_ptr, acc)\n",
                                             ptr_and_n());
  CHECK(e.line() == 7);
  CHECK(e.col() == 5);
  CHECK(e.message() == "variable 'acc' is i32 when the loop starts but f32 at the end of an "
                       "iteration; a loop-carried variable must keep its type, so give it its "
                       "final type before the loop (e.g. 0.0 or x.to(tl.float32)) or convert "
                       "the new value with .to(tl.int32)");
  check_display(e, "    for i in range(n):");
}

TEST_CASE("compile errors: a loop-carried block that changes dtype, in a while loop") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    acc = tl.zeros((16,), tl.int32)\n"
                                             "    i = 0\n"
                                             "    while i < n:\n"
                                             "        acc = acc.to(tl.float16)\n"
                                             "        i += 1\n"
                                             "    tl.store(x_ptr + tl.arange(0, 16), acc)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 5);
  CHECK(contains(e.message(), "variable 'acc' is <16xi32> when the loop starts but <16xf16> "
                              "at the end of an iteration"));
  CHECK(contains(e.message(), "tl.zeros(shape, tl.float16)"));
  check_display(e, "    while i < n:");
}

TEST_CASE("compile errors: a name assigned in one branch only is not defined after the if") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    if n > 0:\n"
                                             "        y = 2.0\n"
                                             "    tl.store(x_ptr, y)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 21);
  CHECK(e.message() == "name 'y' is not defined here: it is assigned only in the then-branch "
                       "of the runtime if on line 6, so it does not exist after the if; assign "
                       "it before the if or in both branches");
  check_display(e, "    tl.store(x_ptr, y)");
}

TEST_CASE("compile errors: a name assigned only inside a loop is not defined after it") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    for i in range(n):\n"
                                             "        last = i\n"
                                             "    tl.store(x_ptr, last)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 21);
  CHECK(contains(e.message(), "name 'last' is not defined here: it is assigned only inside the "
                              "for loop on line 6"));
  CHECK(contains(e.message(), "assign it before the loop"));
}

// ---- globals ----

TEST_CASE("compile errors: a plain module-level global read in a kernel") {
  // Loading accepts the global: only a kernel that reads it is wrong.
  const kiln::CompileError e = compile_error("N = 128\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    offs = tl.arange(0, N)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 25);
  CHECK(e.message() == "cannot access global variable 'N' from within a @jit function: kernels "
                       "can only read globals made with tl.constexpr(...), e.g. `N = "
                       "tl.constexpr(128)` (annotating it as `N: tl.constexpr = ...` is not "
                       "enough)");
  check_display(e, "    offs = tl.arange(0, N)");
}

TEST_CASE("compile errors: a global annotated tl.constexpr is still not readable") {
  const kiln::CompileError e = compile_error("N: tl.constexpr = 64\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    offs = tl.arange(0, N)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 25);
  CHECK(contains(e.message(), "cannot access global variable 'N'"));
  CHECK(contains(e.message(), "`N = tl.constexpr(64)`"));
}

// ---- blocks ----

TEST_CASE("compile errors: an arange whose length is not a power of two") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    offs = tl.arange(0, 10)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 15);
  CHECK(e.message() == "tl.arange's range must be a power of two, got 10 (end - start); round it "
                       "up to a power of two and mask off the extra elements (e.g. mask = offs "
                       "< n)");
  check_display(e, "    offs = tl.arange(0, 10)");
}

TEST_CASE("compile errors: adding blocks of 16 and 32 elements") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    a = tl.arange(0, 16) + tl.arange(0, 32)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 26); // the '+'
  CHECK(e.message() == "cannot broadcast shapes <16xi32> and <32xi32>: dimension 0 is 16 against "
                       "32; each dimension must be equal or 1 (insert a dimension of 1 with "
                       "x[:, None] or x[None, :])");
  check_display(e, "    a = tl.arange(0, 16) + tl.arange(0, 32)");
}

// ---- builtin arguments ----

TEST_CASE("compile errors: a builtin missing an argument") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    a = tl.arange(0)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 12);
  CHECK(e.message() == "tl.arange is missing its argument 'end'");
  check_display(e, "    a = tl.arange(0)");
}

TEST_CASE("compile errors: a builtin given too many arguments, at the first extra one") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    a = tl.arange(0, 16, 2)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 26);
  CHECK(e.message() == "tl.arange takes 2 arguments but 3 were given; it is tl.arange(start, end)");
  check_display(e, "    a = tl.arange(0, 16, 2)");

  const kiln::CompileError one = compile_error("@triton.jit\n"
                                               "def k(x_ptr, n):\n"
                                               "    pid = tl.program_id(0, 1)\n",
                                               ptr_and_n());
  CHECK(one.col() == 28);
  CHECK(one.message() ==
        "tl.program_id takes 1 argument but 2 were given; it is tl.program_id(axis)");
}

TEST_CASE("compile errors: tl.zeros_like takes only its input, as in Triton") {
  // Triton's standard.py: zeros_like(input). kiln used to read a dtype
  // as the third argument and ignore a second one.
  auto zeros_like = [](const std::string &args) {
    return compile_error("@triton.jit\n"
                         "def k(x_ptr, n):\n"
                         "    x = tl.load(x_ptr + tl.arange(0, 16))\n"
                         "    z = tl.zeros_like(" +
                             args + ")\n",
                         ptr_and_n());
  };
  const kiln::CompileError e = zeros_like("x, tl.float16");
  CHECK(e.line() == 7);
  CHECK(e.message() ==
        "tl.zeros_like takes 1 argument but 2 were given; it is tl.zeros_like(input)");
  CHECK(contains(zeros_like("x, dtype=tl.float16").message(),
                 "tl.zeros_like has no parameter 'dtype'"));
}

TEST_CASE("compile errors: a builtin given an unknown or a repeated keyword") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.load(x_ptr, msk=n > 0)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 24); // the keyword
  CHECK(contains(e.message(), "tl.load has no parameter 'msk'; it is tl.load(pointer, mask, "));
  check_display(e, "    x = tl.load(x_ptr, msk=n > 0)");

  const kiln::CompileError twice = compile_error("@triton.jit\n"
                                                 "def k(x_ptr, n):\n"
                                                 "    x = tl.load(x_ptr, n > 0, mask=n > 1)\n",
                                                 ptr_and_n());
  CHECK(twice.col() == 31);
  CHECK(twice.message() == "tl.load got two values for 'mask' (by position and by keyword)");

  // A method call counts its receiver as the first argument.
  const kiln::CompileError method = compile_error("@triton.jit\n"
                                                  "def k(x_ptr, n):\n"
                                                  "    y = n.to(tl.float32, None, False, 3)\n",
                                                  ptr_and_n());
  CHECK(method.col() == 39);
  CHECK(contains(method.message(), "tl.cast takes 4 arguments but 5 were given"));
}

TEST_CASE("compile errors: a runtime value where tl.arange needs a constexpr") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    offs = tl.arange(0, n)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 25); // the argument
  CHECK(e.message() == "tl.arange's end must be a compile-time integer, but 'n' is a runtime "
                       "value; declare the parameter as `n: tl.constexpr` (or use a literal)");
  check_display(e, "    offs = tl.arange(0, n)");

  const kiln::CompileError expr = compile_error("@triton.jit\n"
                                                "def k(x_ptr, n):\n"
                                                "    offs = tl.arange(0, n * 2)\n",
                                                ptr_and_n());
  CHECK(expr.col() == 27); // the '*'
  CHECK(expr.message() == "tl.arange's end must be a compile-time integer, not a runtime i32; "
                          "use a literal or a tl.constexpr parameter");
}

// ---- functions ----

TEST_CASE("compile errors: a block passed to a noinline function") {
  const kiln::CompileError e = compile_error("@triton.jit(noinline=True)\n"
                                             "def f(a):\n"
                                             "    return a + 1\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    b = f(tl.arange(0, 16))\n",
                                             ptr_and_n());
  CHECK(e.line() == 10);
  CHECK(e.col() == 9);
  CHECK(e.message() == "argument 'a' of the noinline function 'f' is a block <16xi32>; noinline "
                       "functions take and return scalars (as in Triton): pass scalars, or "
                       "remove noinline=True from 'f' to inline it");
  check_display(e, "    b = f(tl.arange(0, 16))");
}

TEST_CASE("compile errors: a noinline function returning a block, at its return") {
  const kiln::CompileError e = compile_error("@triton.jit(noinline=True)\n"
                                             "def f(a):\n"
                                             "    return tl.full((16,), a, tl.float32)\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    b = f(n)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 5);
  CHECK(contains(e.message(), "the noinline function 'f' returns a block <16xf32>"));
  CHECK(contains(e.message(), "remove noinline=True"));
  check_display(e, "    return tl.full((16,), a, tl.float32)");
}

TEST_CASE("compile errors: an undefined name") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    b = foo + 1\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(e.col() == 9);
  CHECK(e.message() == "name 'foo' is not defined; assign it before this line, make it a "
                       "parameter of 'k', or define it at module level (NAME = "
                       "tl.constexpr(...) or a @triton.jit function)");
  check_display(e, "    b = foo + 1");
}

TEST_CASE("compile errors: 'tl' without its import names the import") {
  std::optional<kiln::Module> m;
  REQUIRE_NOTHROW(m = kiln::Module::from_string("import triton\n"
                                                "\n"
                                                "@triton.jit\n"
                                                "def k(x_ptr, n):\n"
                                                "    pid = tl.program_id(0)\n",
                                                "k.py"));
  try {
    m->kernel("k").warmup(ptr_and_n());
    FAIL("compiling k did not throw");
  } catch (const kiln::CompileError &e) {
    CHECK(e.line() == 5);
    CHECK(e.col() == 11);
    CHECK(e.message() == "name 'tl' is not defined; add `import triton` and `import "
                         "triton.language as tl` at the top of the file");
  }
}

// ---- module level (reported at load) ----

TEST_CASE("compile errors: a kernel reading a host module names it and where it was imported") {
  // Triton's module model: `import numpy` is fine until a kernel reads it.
  const kiln::CompileError e = compile_error("import numpy as np\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    y = np.zeros(4)\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(e.col() == 9);
  CHECK(contains(e.message(), "'k' reads 'np', which k.py:4 binds to the module 'numpy'"));
  CHECK(contains(e.message(), "a kernel can use only its parameters, tl.constexpr(...) globals"));
  check_display(e, "    y = np.zeros(4)");
}

TEST_CASE("compile errors: a kernel calling a plain Python function") {
  const kiln::CompileError e = compile_error("def helper(a):\n"
                                             "    return a\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    helper(n)\n",
                                             ptr_and_n());
  CHECK(e.line() == 9);
  CHECK(contains(e.message(), "'k' reads 'helper', which k.py:4 binds to a plain Python function (not @triton.jit)"));
}

TEST_CASE("compile errors: a syntax error throws at load, a type error only at compile") {
  // Syntax: from_string throws; nothing can be compiled.
  const kiln::CompileError syntax = load_error("@triton.jit\n"
                                               "def k(x_ptr, n):\n"
                                               "    y = (n +\n");
  CHECK(syntax.line() == 6);
  CHECK(syntax.col() == 9);
  CHECK(syntax.message() == "'(' was never closed");
  check_display(syntax, "    y = (n +");

  // Semantics: the file loads, its other kernels compile, and only the
  // broken one throws, each time it is compiled.
  const std::string src = std::string(kHeader) + "@triton.jit\n"
                                                 "def good(x_ptr, n):\n"
                                                 "    tl.store(x_ptr, n)\n"
                                                 "\n"
                                                 "@triton.jit\n"
                                                 "def k(x_ptr, n):\n"
                                                 "    tl.store(x_ptr, undefined_name)\n";
  std::optional<kiln::Module> m;
  REQUIRE_NOTHROW(m = kiln::Module::from_string(src, "k.py"));
  CHECK_NOTHROW(m->kernel("good").warmup(ptr_and_n()));
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      m->kernel("k").warmup(ptr_and_n());
      FAIL("compiling k did not throw");
    } catch (const kiln::CompileError &e) {
      CHECK(e.line() == 10);
      CHECK(e.col() == 21);
      CHECK(contains(e.message(), "name 'undefined_name' is not defined"));
    }
  }
}

TEST_CASE(
    "compile errors: a type error inside a jit function of another file points into that file") {
  const kiln::Module lib =
      kiln::Module::from_string(std::string(kHeader) + "@triton.jit\n"
                                                       "def widen(x):\n"
                                                       "    return x + tl.arange(0, 32)\n",
                                "lib.py");
  const kiln::Module main =
      kiln::Module::from_string(std::string(kHeader) + "@triton.jit\n"
                                                       "def k(x_ptr, n, ACT: tl.constexpr):\n"
                                                       "    y = ACT(tl.arange(0, 16))\n",
                                "k.py");
  std::vector<kiln::Arg> args = ptr_and_n();
  const kiln::Kernel widen = lib.kernel("widen");
  args.push_back(kiln::arg("ACT", widen));
  try {
    main.kernel("k").warmup(args);
    FAIL("compiling k did not throw");
  } catch (const kiln::CompileError &e) {
    CHECK(e.file() == "lib.py");
    CHECK(e.line() == 6);
    CHECK(e.col() == 14);
    CHECK(contains(e.what(), "\n        return x + tl.arange(0, 32)\n"));
  }
}

TEST_CASE(
    "compile errors: a '*' after an operator is a missing operand, not a starred expression") {
  const kiln::CompileError e = load_error("@triton.jit\n"
                                          "def k(x_ptr, n):\n"
                                          "    y = n + * 2\n");
  CHECK(e.line() == 6);
  CHECK(e.col() == 13);
  CHECK(e.message() == "expected an expression after '+', found '*'");
  check_display(e, "    y = n + * 2");
}

TEST_CASE("compile errors: a missing argument of a jit function names it and the callee") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def add(a, b):\n"
                                             "    return a + b\n"
                                             "\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    tl.store(x_ptr, add(n))\n",
                                             ptr_and_n());
  CHECK(e.line() == 10);
  CHECK(e.col() == 21);
  CHECK(e.message() == "missing argument 'b' in the call to 'add'");
  check_display(e, "    tl.store(x_ptr, add(n))");
}

TEST_CASE("compile errors: a literal in one branch does not adopt the other branch's type (as in Triton)") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    if n > 0:\n"
                                             "        x = 1.5\n"
                                             "    else:\n"
                                             "        x = n\n"
                                             "    tl.store(x_ptr, x)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(contains(e.message(), "f32 in the then-branch but i32 in the else-branch"));
}

TEST_CASE("compile errors: the same constant in both branches stays bound after the if") {
  kiln::Module m = kiln::Module::from_string(std::string(kHeader) + "@triton.jit\n"
                                                                    "def k(x_ptr, n):\n"
                                                                    "    if n > 0:\n"
                                                                    "        x = 2\n"
                                                                    "    else:\n"
                                                                    "        x = 2\n"
                                                                    "    tl.store(x_ptr, x + 0.5)\n",
                                             "k.py");
  float out = 0;
  m.kernel("k")[{1}](&out, 7);
  CHECK(out == 2.5f);
}

TEST_CASE("compile errors: a constant that overflows int64 is an error, not a wrap (found by the fuzzer)") {
  // 9999999 ** 999999 ** 99 also used to loop for ever.
  // Module constants kiln cannot evaluate are host values until a kernel reads one.
  const std::string kernel = "@triton.jit\ndef k(x_ptr, n):\n    y = M\n";
  const kiln::CompileError e = compile_error("M = tl.constexpr(9999999 ** 999999 ** 99)\n" + kernel, ptr_and_n());
  CHECK(e.line() == 7);
  CHECK(contains(e.message(), "binds to a tl.constexpr(...) whose value kiln cannot evaluate"));
  const kiln::CompileError m = compile_error("M = tl.constexpr(9223372036854775807 + 1)\n" + kernel, ptr_and_n());
  CHECK(contains(m.message(), "k.py:4 binds to a tl.constexpr(...) whose value kiln cannot evaluate"));
  CHECK_NOTHROW(kiln::Module::from_string(std::string(kHeader) + "M = tl.constexpr(2 ** 62 + (2 ** 62 - 1))\n", "k.py"));
}

// ---- the rest of the Triton language: what kiln still refuses ----

TEST_CASE("compile errors: an fp8 dtype kiln does not know lists those it has") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.load(x_ptr).to(tl.float8e4b15x4)\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(contains(e.message(), "tl.float8e4b15x4 is not an fp8 dtype kiln knows"));
}

TEST_CASE("compile errors: inline asm on the CPU, a libdevice function kiln lacks") {
  const kiln::CompileError a = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    y = tl.inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [n], "
                                             "dtype=tl.int32, is_pure=True, pack=1)\n",
                                             ptr_and_n());
  CHECK(
      contains(a.message(), "tl.inline_asm_elementwise runs PTX, which only the cuda target can"));
  const kiln::CompileError l = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    y = tl.extra.libdevice.byte_perm(n, n, n)\n",
                                             ptr_and_n());
  CHECK(contains(l.message(), "libdevice.byte_perm is not supported by kiln yet"));
}

TEST_CASE("compile errors: a math function on integers asks for a conversion") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    tl.store(x_ptr, tl.extra.libdevice.tanh(n))\n",
                                             ptr_and_n());
  CHECK(e.message() == "tl.tanh needs floating-point operands, not i32; convert with .to(tl.float32)");
}

TEST_CASE("compile errors: a return inside a runtime loop is refused, as Triton does") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    for i in range(n):\n"
                                             "        if i > 3:\n"
                                             "            return\n",
                                             ptr_and_n());
  CHECK(e.line() == 8);
  CHECK(contains(e.message(),
                 "a return inside a for or while loop is not allowed (Triton refuses it too"));
  CHECK(contains(e.message(), "return it after the loop"));
}

TEST_CASE("compile errors: tl.reduce's combine_fn must return one value per input") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def _pair(a, b):\n"
                                             "    return a + b, a\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.load(x_ptr + tl.arange(0, 16))\n"
                                             "    tl.store(x_ptr, tl.reduce(x, 0, _pair))\n",
                                             ptr_and_n());
  CHECK(e.message() ==
        "tl.reduce's combine_fn returns 2 value(s) for 1 input(s); it must return one value per input");
}

TEST_CASE("compile errors: tl.gather's index must match the source off the axis") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    x = tl.zeros((4, 8), tl.float32)\n"
                                             "    i = tl.zeros((4, 4), tl.int32)\n"
                                             "    y = tl.gather(x, i, 0)\n",
                                             ptr_and_n());
  CHECK(contains(e.message(), "must match the source <4x8xf32> in every dimension but the axis"));
}

TEST_CASE("compile errors: a helper returning a value on one path only says so") {
  const kiln::CompileError e = compile_error("@triton.jit\n"
                                             "def f(v):\n"
                                             "    if v > 0:\n"
                                             "        return v\n"
                                             "@triton.jit\n"
                                             "def k(x_ptr, n):\n"
                                             "    tl.store(x_ptr, f(n))\n",
                                             ptr_and_n());
  CHECK(e.line() == 6);
  CHECK(contains(e.message(), "'f' returns a value on one path of the runtime if on line 6 and nothing on the other"));
}
