// Kernel::cache_key() and the used-globals check (DESIGN.md §2 "Kernel"):
// the key covers the function's source, its first line, the keys of the jit
// functions it calls (transitively) and the constexpr globals it reads --
// and nothing else, so an edit elsewhere in the file keeps binaries valid.
//
// Each case loads two or more variants of one small file with
// Module::from_string and compares keys; computing a key does not compile.
#include <doctest/doctest.h>

#include <string>
#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <vector>

#include <kiln/kiln.hpp>
#include <kiln/version.hpp>

namespace {

std::string key_of(const std::string &source, const char *kernel = "k") {
  return kiln::Module::from_string(source, "cache_key_test.py").kernel(kernel).cache_key();
}

/// The file used by most cases, with its parts replaceable.
struct File {
  std::string scale = "2";
  std::string other = "7";
  std::string helper_body = "return x * SCALE";
  std::string leaf_body = "return x + 1";
  std::string unrelated_body = "return x - 1";
  std::string prefix;

  std::string text() const {
    return prefix + R"(import triton
import triton.language as tl

SCALE = tl.constexpr()" + scale + R"()
OTHER = tl.constexpr()" + other + R"()
UNUSED_PLAIN = 5


@triton.jit
def leaf(x):
    )" + leaf_body + R"(


@triton.jit
def helper(x):
    )" + helper_body + R"(


@triton.jit
def middle(x):
    return leaf(x) * 2


@triton.jit
def unrelated(x):
    )" + unrelated_body + R"(


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, helper(middle(x)), mask=offs < n)


@triton.jit
def reads_global(x_ptr):
    tl.store(x_ptr, OTHER)
)";
  }
};

} // namespace

TEST_CASE("cache key: is a stable hex SHA-256") {
  const File f;
  const std::string a = key_of(f.text());
  CHECK(a.size() == 64);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(key_of(f.text()) == a); // the same file loaded twice
  const kiln::Kernel k = kiln::Module::from_string(f.text()).kernel("k");
  CHECK(&k.cache_key() == &k.cache_key()); // computed once
  CHECK(k.cache_key() == a);
  // Different functions of one file have different keys.
  CHECK(key_of(f.text(), "helper") != a);
}

TEST_CASE("cache key: changes with the source of a callee, directly or transitively") {
  const File base;
  File helper = base;
  helper.helper_body = "return x * SCALE * 1";
  File leaf = base;
  leaf.leaf_body = "return x + 2";
  const std::string k0 = key_of(base.text());
  CHECK(key_of(helper.text()) != k0);
  CHECK(key_of(leaf.text()) != k0); // k -> middle -> leaf
  // The callee's own key changes too, and its caller's callers' keys with it.
  CHECK(key_of(leaf.text(), "middle") != key_of(base.text(), "middle"));
  CHECK(key_of(leaf.text(), "helper") == key_of(base.text(), "helper"));
}

TEST_CASE("cache key: changes with the value of a constexpr global the kernel or a callee reads") {
  const File base;
  File scale = base;
  scale.scale = "3"; // read by helper, a callee of k
  File other = base;
  other.other = "8"; // read by reads_global only
  CHECK(key_of(scale.text()) != key_of(base.text()));
  CHECK(key_of(scale.text(), "helper") != key_of(base.text(), "helper"));
  CHECK(key_of(other.text(), "reads_global") != key_of(base.text(), "reads_global"));
  // A float of another value, and an int vs a float of the same value, differ.
  File as_float = base;
  as_float.scale = "2.0";
  CHECK(key_of(as_float.text()) != key_of(base.text()));
}

TEST_CASE("cache key: changes when the kernel's first line moves") {
  const File base;
  File moved = base;
  moved.prefix = "# a comment that moves every function down a line\n";
  CHECK(key_of(moved.text()) != key_of(base.text()));
  CHECK(key_of(moved.text(), "leaf") != key_of(base.text(), "leaf"));
}

TEST_CASE("cache key: does not change with what the kernel does not use") {
  const File base;
  const std::string k0 = key_of(base.text());
  SUBCASE("an unrelated constexpr global") {
    File f = base;
    f.other = "100"; // only reads_global reads OTHER
    CHECK(key_of(f.text()) == k0);
  }
  SUBCASE("a plain (non-constexpr) global") {
    std::string text = base.text();
    text.replace(text.find("UNUSED_PLAIN = 5"), 16, "UNUSED_PLAIN = 6");
    CHECK(key_of(text) == k0);
  }
  SUBCASE("a function it does not call") {
    File f = base;
    f.unrelated_body = "return x - 2";
    CHECK(key_of(f.text()) == k0);
    CHECK(key_of(f.text(), "unrelated") != key_of(base.text(), "unrelated"));
  }
  SUBCASE("a function added after it") {
    const std::string text = base.text() + "\n\n@triton.jit\ndef added(x):\n    return x\n";
    CHECK(key_of(text) == k0);
  }
}

TEST_CASE("cache key: recursion between jit functions terminates") {
  const std::string text = R"(import triton
import triton.language as tl

@triton.jit
def ping(x):
    return pong(x)


@triton.jit
def pong(x):
    return ping(x)


@triton.jit
def self_call(x):
    return self_call(x)


@triton.jit
def k(x):
    return ping(x) + self_call(x)
)";
  const kiln::Module m = kiln::Module::from_string(text);
  CHECK(m.kernel("k").cache_key().size() == 64);
  CHECK(m.kernel("ping").cache_key().size() == 64);
  CHECK(m.kernel("self_call").cache_key().size() == 64);
  CHECK(m.kernel("ping").cache_key() != m.kernel("pong").cache_key());
  // Still sensitive to both halves of the cycle.
  std::string changed = text;
  changed.replace(changed.find("return pong(x)"), 14, "return pong(x + 0)");
  CHECK(kiln::Module::from_string(changed).kernel("k").cache_key() != m.kernel("k").cache_key());
}

TEST_CASE("cache key: sees a global or a callee wherever the body uses it") {
  // Each body reads G (or calls g) in one syntactic position; changing G's
  // value (or g's source) must change the kernel's key.
  const char *bodies[] = {
      "    y = G\n    return y",                           // assignment value
      "    y = x\n    y += G\n    return y",              // augmented assignment
      "    if G > 0:\n        return x\n    return x",    // if test
      "    y = x\n    for i in range(G):\n        y = y + 1\n    return y", // for iterable
      "    y = x\n    while y < G:\n        y = y + 1\n    return y",       // while test
      "    return x if G else x",                            // conditional expression
      "    return tl.full((4,), G, tl.float32)",             // call argument
      "    return tl.where(x > 0, x, other=G)",              // keyword argument
      "    return (x, G)[1]",                                // inside a tuple
      "    y = x\n    if x > 0:\n        pass\n    else:\n        y = G\n    return y", // else branch
  };
  for (const char *body : bodies) {
    CAPTURE(body);
    auto text = [&](const char *g) {
      return std::string("import triton\nimport triton.language as tl\n\nG = tl.constexpr(") + g +
             ")\n\n@triton.jit\ndef k(x):\n" + body + "\n";
    };
    CHECK(key_of(text("3")) != key_of(text("4")));
  }
  // A callee reached only through a keyword argument or a for body.
  auto with_callee = [](const char *body, const char *callee_body) {
    return std::string("import triton\nimport triton.language as tl\n\n@triton.jit\ndef g(x):\n    ") +
           callee_body + "\n\n@triton.jit\ndef k(x):\n" + body + "\n";
  };
  for (const char *body : {"    return tl.where(x > 0, x, other=g(x))",
                           "    y = x\n    for i in range(4):\n        y = g(y)\n    return y"}) {
    CAPTURE(body);
    CHECK(key_of(with_callee(body, "return x + 1")) != key_of(with_callee(body, "return x + 2")));
  }
}

// ---- the used-globals check ----

namespace {

// composition.py's pattern: a module-level tl.constexpr read by a kernel and
// by one of its callees.
constexpr const char *kScaled = R"(import triton
import triton.language as tl

SCALE = tl.constexpr(2)
BIAS = tl.constexpr(0)


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, scaled(x) + BIAS, mask=mask)


@triton.jit
def plain_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 1.0, mask=offs < n)
)";

struct Buffers {
  std::vector<float> x, out;
  explicit Buffers(int n) : x(n), out(n, -1.0f) {
    for (int i = 0; i < n; ++i)
      x[i] = float(i);
  }
  bool scaled_by(float s) const {
    for (size_t i = 0; i < x.size(); ++i)
      if (out[i] != x[i] * s)
        return false;
    return true;
  }
};

} // namespace

TEST_CASE("cache key: a changed global is reported at the next launch, and setting it back recovers") {
  kiln::Module m = kiln::Module::from_string(kScaled, "scaled.py");
  const kiln::Kernel k = m.kernel("scale_kernel");
  Buffers b(20);
  k[{1}](b.x.data(), b.out.data(), 20, kiln::arg("BLOCK", 32));
  CHECK(b.scaled_by(2));

  m.set_global("SCALE", 3);
  b.out.assign(20, -1.0f);
  try {
    k[{1}](b.x.data(), b.out.data(), 20, kiln::arg("BLOCK", 32));
    FAIL("a launch after SCALE changed must throw");
  } catch (const kiln::ArgumentError &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("SCALE") != std::string::npos);
    CHECK(what.find("from 2 to 3") != std::string::npos);
    CHECK(what.find("scale_kernel") != std::string::npos);
  }
  CHECK(b.out[0] == -1.0f); // nothing ran
  // Warmup checks too: it would hand back a binary built with the old value.
  CHECK_THROWS_AS(k.warmup_with(b.x.data(), b.out.data(), 20, kiln::arg("BLOCK", 32)), kiln::ArgumentError);

  // A kernel of the same module that does not read SCALE is unaffected.
  std::vector<float> plain(8, -1.0f);
  CHECK_NOTHROW(m.kernel("plain_kernel")[{1}](plain.data(), 8, kiln::arg("BLOCK", 8)));
  CHECK(plain[7] == 7.0f);

  m.set_global("SCALE", 2);
  k[{1}](b.x.data(), b.out.data(), 20, kiln::arg("BLOCK", 32));
  CHECK(b.scaled_by(2));
  // A global it reads but that did not change (BIAS) set to its own value is fine.
  m.set_global("BIAS", 0);
  CHECK_NOTHROW(k[{1}](b.x.data(), b.out.data(), 20, kiln::arg("BLOCK", 32)));

  CHECK_THROWS_AS(m.set_global("NO_SUCH_GLOBAL", 1), kiln::ArgumentError);
}

TEST_CASE("cache key: a compile after set_global uses the new value and a distinct compile key") {
  // The compile key names the binary in the disk and remote caches
  // (DESIGN.md §5), so two compiles that read different values of SCALE
  // must not share one, even within one Module whose key was computed
  // before the change.
  kiln::Module a = kiln::Module::from_string(kScaled, "scaled.py");
  kiln::Module b = kiln::Module::from_string(kScaled, "scaled.py");
  // The handles own the compiled kernels that the results point to.
  const kiln::Kernel ka = a.kernel("scale_kernel"), kb = b.kernel("scale_kernel");
  const std::string before = kb.cache_key(); // computed with SCALE=2
  b.set_global("SCALE", 5);
  Buffers x(16);
  const auto ra = ka[{1}](x.x.data(), x.out.data(), 16, kiln::arg("BLOCK", 16));
  CHECK(x.scaled_by(2));
  const auto rb = kb[{1}](x.x.data(), x.out.data(), 16, kiln::arg("BLOCK", 16));
  CHECK(x.scaled_by(5)); // compiled with the value current at compile time
  REQUIRE(ra.kernel);
  REQUIRE(rb.kernel);
  CHECK(ra.kernel->specialization == rb.kernel->specialization);
  CHECK_MESSAGE(ra.kernel->key != rb.kernel->key,
                "two binaries built from different SCALE values share the compile key " << ra.kernel->key);
  CHECK(before.size() == 64);
}

// ---- keys that cannot alias (issue 12) ----
//
// A persistent cache trusts the keys: two launches that need different
// binaries must never share an in-memory key or a compile key.

TEST_CASE("cache key: options never alias in the in-memory key") {
  kiln::Module m = kiln::Module::from_string(kScaled, "scaled.py");
  const kiln::Kernel k = m.kernel("scale_kernel");
  Buffers b(8);
  auto launch = [&](kiln::Arg option) {
    return k[{1}](b.x.data(), b.out.data(), 8, kiln::arg("BLOCK", 8), option);
  };
  // 257 once spilled into the num_ctas bits and read back as num_stages=1.
  const auto r257 = launch(kiln::arg("num_stages", 257));
  const auto r1 = launch(kiln::arg("num_stages", 1));
  REQUIRE(r257.kernel);
  REQUIRE(r1.kernel);
  CHECK(r257.kernel->options.num_stages == 257);
  CHECK(r1.kernel->options.num_stages == 1);
  CHECK(r1.kernel != r257.kernel);
  // 3 + 2^17 once set the debug bit: a debug launch got a non-debug binary.
  const auto big = launch(kiln::arg("num_stages", 3 + (1 << 17)));
  const auto dbg = launch(kiln::arg("debug", true));
  REQUIRE(big.kernel);
  REQUIRE(dbg.kernel);
  CHECK_FALSE(big.kernel->options.debug);
  CHECK(dbg.kernel->options.debug);
  CHECK(dbg.kernel->options.num_stages == 3);
}

namespace {

constexpr const char *kApply = R"(import triton
import triton.language as tl


@triton.jit
def apply(x_ptr, out_ptr, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, ACT(tl.load(x_ptr + offs, mask=mask)), mask=mask)
)";

std::string act_file(const char *body) {
  return std::string("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef act(x):\n    ") + body + "\n";
}

} // namespace

TEST_CASE("cache key: a jit function passed as a constexpr is keyed by its own key, not its name") {
  kiln::Module m = kiln::Module::from_string(kApply, "apply.py");
  kiln::Module twice = kiln::Module::from_string(act_file("return x * 2"), "twice.py");
  kiln::Module thrice = kiln::Module::from_string(act_file("return x * 3"), "thrice.py");
  const kiln::Kernel k = m.kernel("apply");
  const kiln::Kernel act2 = twice.kernel("act"), act3 = thrice.kernel("act");
  Buffers b(8);
  const auto r2 = k[{1}](b.x.data(), b.out.data(), 8, act2, kiln::arg("BLOCK", 8));
  CHECK(b.scaled_by(2));
  const auto r3 = k[{1}](b.x.data(), b.out.data(), 8, act3, kiln::arg("BLOCK", 8));
  CHECK(b.scaled_by(3));
  REQUIRE(r2.kernel);
  REQUIRE(r3.kernel);
  CHECK_MESSAGE(r2.kernel->key != r3.kernel->key, "two different functions named act share the compile key");
}

TEST_CASE("cache key: a callee's decorator options (noinline, debug) are part of the key") {
  auto file = [](const char *decorator) {
    return std::string("import triton\nimport triton.language as tl\n\n\n") + decorator +
           "\ndef helper(x):\n    return x + 1\n\n\n@triton.jit\ndef k(x_ptr):\n    tl.store(x_ptr, helper(tl.load(x_ptr)))\n";
  };
  const std::string plain = key_of(file("@triton.jit"));
  CHECK(key_of(file("@triton.jit(noinline=True)")) != plain);
  CHECK(key_of(file("@triton.jit(debug=True)")) != plain);
  CHECK(key_of(file("@triton.jit(noinline=False)")) == plain);
}

namespace {

/// A folder with a kernel file that imports a jit function from another
/// file whose global that function reads.
struct ImportingFiles {
  std::string dir;
  ImportingFiles() {
    char tmpl[] = "/tmp/kiln-key-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dir = tmpl;
    write("helpers.py", "import triton\nimport triton.language as tl\n\nSCALE = tl.constexpr(2)\n\n\n"
                        "@triton.jit\ndef scale(x):\n    return x * SCALE\n");
    write("main.py", R"(import triton
import triton.language as tl
from helpers import scale


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, scale(tl.load(x_ptr + offs, mask=mask)), mask=mask)
)");
  }
  ~ImportingFiles() { std::filesystem::remove_all(dir); }
  void write(const char *name, const std::string &text) const { std::ofstream(dir + "/" + name) << text; }
  std::string main() const { return dir + "/main.py"; }
};

} // namespace

TEST_CASE("cache key: the globals of a callee's own module are recorded and checked") {
  const ImportingFiles files;
  // A change before the first compile is used, and gives another key.
  kiln::Module a = kiln::Module::from_file(files.main());
  kiln::Module b = kiln::Module::from_file(files.main());
  b.module_of("scale").set_global("SCALE", 5);
  const kiln::Kernel ka = a.kernel("k"), kb = b.kernel("k");
  CHECK(ka.cache_key() != kb.cache_key());
  Buffers x(8);
  const auto ra = ka[{1}](x.x.data(), x.out.data(), 8, kiln::arg("BLOCK", 8));
  CHECK(x.scaled_by(2));
  const auto rb = kb[{1}](x.x.data(), x.out.data(), 8, kiln::arg("BLOCK", 8));
  CHECK(x.scaled_by(5));
  REQUIRE(ra.kernel);
  REQUIRE(rb.kernel);
  CHECK(ra.kernel->key != rb.kernel->key);
  // A change after the compile is reported at the next launch, naming it.
  a.module_of("scale").set_global("SCALE", 7);
  try {
    ka[{1}](x.x.data(), x.out.data(), 8, kiln::arg("BLOCK", 8));
    FAIL("a launch after the callee's SCALE changed must throw");
  } catch (const kiln::ArgumentError &e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("SCALE") != std::string::npos);
    CHECK(what.find("from 2 to 7") != std::string::npos);
  }
  CHECK_THROWS_AS(a.module_of("no_such_function"), kiln::ArgumentError);
}

TEST_CASE("cache key: the compile key names kiln's version and build") {
  const kiln::VersionInfo &v = kiln::version_info();
  CHECK(v.version == std::string(KILN_PROJECT_VERSION));
  CHECK_FALSE(v.build_id.empty());
  CHECK(v.build_id != "unknown");
  // The compile key covers the version and build: a key made with another
  // build id differs (compile_key is what names disk and remote entries).
  kiln::Module m = kiln::Module::from_string(kScaled, "scaled.py");
  Buffers b(8);
  const auto r = m.kernel("scale_kernel")[{1}](b.x.data(), b.out.data(), 8, kiln::arg("BLOCK", 8));
  REQUIRE(r.kernel);
  CHECK(r.kernel->key.size() == 64);
  CHECK(r.kernel->key != kiln::Module::from_string(kScaled, "scaled.py").kernel("scale_kernel").cache_key());
}
