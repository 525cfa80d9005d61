// tl.philox, tl.randint, tl.randint4x, tl.rand, tl.rand4x, tl.randn,
// tl.randn4x, tl.uint_to_uniform_float and tl.pair_uniform_to_normal, built
// from integer ops so that every backend gets them and the bits equal
// Triton's: Philox-4x32 (or 4x64 for 64-bit offsets) with the published
// multipliers and Weyl key increments (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC'11), 10 rounds unless n_rounds says.
#include <cstdint>
#include <string>

#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::OpKind;
using ir::Type;

namespace {

struct PhiloxConstants {
  uint64_t key_a, key_b, round_a, round_b;
};
constexpr PhiloxConstants kPhilox32{0x9E3779B9u, 0xBB67AE85u, 0xD2511F53u, 0xCD9E8D57u};
constexpr PhiloxConstants kPhilox64{0x9E3779B97F4A7C15u, 0xBB67AE8584CAA73Bu, 0xD2E7470EE14C6C93u,
                                    0xCA5A826395121157u};
constexpr int64_t kDefaultRounds = 10;

struct Philox {
  IrGen &g;
  Type word; ///< u32 or u64

  ir::Value *constant(uint64_t v) {
    return g.builder().constant_int(word, static_cast<int64_t>(v));
  }
  ir::Value *binary(Op op, ir::Value *a, ir::Value *b) { return g.sem().binary(op, {a}, {b}); }
  ir::Value *umulhi(ir::Value *a, ir::Value *b) {
    g.sem().broadcast_pair(a, b);
    return g.sem().elementwise(OpKind::Binary, static_cast<uint8_t>(ir::BinaryOp::UMulHi), {a, b},
                               a->type);
  }

  /// The rounds on counter c and key k (Triton's philox_impl).
  std::vector<ir::Value *> rounds(std::vector<ir::Value *> c, ir::Value *k0, ir::Value *k1,
                                  int64_t n) {
    const PhiloxConstants &pc = ir::bit_width(word) == 32 ? kPhilox32 : kPhilox64;
    for (int64_t r = 0; r < n; ++r) {
      ir::Value *a = constant(pc.round_a), *b = constant(pc.round_b);
      ir::Value *c0 = c[0], *c2 = c[2];
      c[0] = binary(Op::BitXor, binary(Op::BitXor, umulhi(b, c2), c[1]), k0);
      c[2] = binary(Op::BitXor, binary(Op::BitXor, umulhi(a, c0), c[3]), k1);
      c[1] = binary(Op::Mul, b, c2);
      c[3] = binary(Op::Mul, a, c0);
      k0 = binary(Op::Add, k0, constant(pc.key_a));
      k1 = binary(Op::Add, k1, constant(pc.key_b));
    }
    return c;
  }
};

int64_t rounds_arg(IrGen &g, CallArgs &a, size_t i) {
  const Val *n = optional_arg(a, i, "n_rounds");
  const int64_t r = n ? g.const_int(*n, "n_rounds") : kDefaultRounds;
  if (r < 0 || r > 64)
    g.fail("n_rounds must be between 0 and 64, got " + std::to_string(r));
  return r;
}

/// tl.philox(seed, c0, c1, c2, c3, n_rounds): the counters are bit-cast to
/// u32 (32-bit counters, key = the seed's two halves) or u64 (64-bit
/// counters, key = (seed, 0)).
std::vector<ir::Value *> philox(IrGen &g, const Val &seed_v, const std::vector<Val> &counters,
                                int64_t n_rounds, const char *fn) {
  ir::Value *seed = g.to_tensor(seed_v, (std::string(fn) + "'s seed").c_str());
  if (!seed->type.is_int() || seed->type.is_bool())
    g.fail(std::string(fn) + "'s seed must be an integer, not " + seed->type.str());
  seed = g.sem().cast(seed, Type::scalar(DType::u64));
  std::vector<ir::Value *> c;
  for (const Val &v : counters)
    c.push_back(g.to_tensor(v, (std::string(fn) + "'s offset").c_str()));
  const int bits = ir::bit_width(c[0]->type);
  for (ir::Value *&x : c) {
    if (!x->type.is_int() || x->type.is_bool() || ir::bit_width(x->type) != bits ||
        (bits != 32 && bits != 64))
      g.fail(std::string(fn) + "'s offsets must be 32- or 64-bit integers of one width, not " +
             x->type.str());
    x = g.sem().bitcast(x, Type::scalar(bits == 32 ? DType::u32 : DType::u64));
  }
  Type shape = c[0]->type;
  for (ir::Value *x : c)
    shape = g.sem().broadcast_shapes(shape, x->type);
  for (ir::Value *&x : c)
    x = g.sem().broadcast_to(x, shape);
  Philox p{g, Type::scalar(bits == 32 ? DType::u32 : DType::u64)};
  ir::Value *k0, *k1;
  if (bits == 32) {
    ir::Value *mask = g.builder().constant_int(Type::scalar(DType::u64), 0xFFFFFFFF);
    ir::Value *hi =
        p.binary(Op::RShift, seed, g.builder().constant_int(Type::scalar(DType::u64), 32));
    k1 = g.sem().cast(p.binary(Op::BitAnd, hi, mask), p.word);
    k0 = g.sem().cast(p.binary(Op::BitAnd, seed, mask), p.word);
  } else {
    k0 = seed;
    k1 = p.constant(0);
  }
  return p.rounds(c, k0, k1, n_rounds);
}

std::vector<Val> tensors(const std::vector<ir::Value *> &vs) {
  std::vector<Val> r;
  for (ir::Value *v : vs)
    r.push_back(Val::tensor(v));
  return r;
}

Val tl_philox(IrGen &g, CallArgs &a) {
  std::vector<Val> c;
  static const char *names[] = {"c0", "c1", "c2", "c3"};
  for (size_t i = 0; i < 4; ++i)
    c.push_back(required(g, a, i + 1, names[i], "tl.philox"));
  return Val::tuple(tensors(
      philox(g, required(g, a, 0, "seed", "tl.philox"), c, rounds_arg(g, a, 5), "tl.philox")));
}

/// Four random words per offset: philox(seed, offset, 0, 0, 0).
std::vector<ir::Value *> randint4x(IrGen &g, CallArgs &a, const char *fn) {
  const Val &seed = required(g, a, 0, "seed", fn);
  ir::Value *offset =
      g.to_tensor(required(g, a, 1, "offset", fn), (std::string(fn) + "'s offset").c_str());
  const Val zero = Val::tensor(
      g.sem().broadcast_to(g.builder().constant_int(offset->type.element(), 0), offset->type));
  return philox(g, seed, {Val::tensor(offset), zero, zero, zero}, rounds_arg(g, a, 2), fn);
}

Val tl_randint4x(IrGen &g, CallArgs &a) {
  return Val::tuple(tensors(randint4x(g, a, "tl.randint4x")));
}
Val tl_randint(IrGen &g, CallArgs &a) {
  return Val::tensor(randint4x(g, a, "tl.randint")[0]);
}

/// A random word to a float in [0, 1): as a signed integer, folded to
/// non-negative (x < 0 -> -x - 1) and scaled by the largest factor that
/// keeps the maximum below 1.0 in float32.
ir::Value *uniform(IrGen &g, ir::Value *x) {
  const int bits = ir::bit_width(x->type);
  if (!x->type.is_int() || (bits != 32 && bits != 64))
    g.fail("tl.uint_to_uniform_float needs a 32- or 64-bit integer, not " + x->type.str());
  x = g.sem().bitcast(x, Type::scalar(bits == 32 ? DType::i32 : DType::i64));
  ir::Value *zero = g.builder().constant_int(x->type.element(), 0);
  ir::Value *neg = g.sem().compare(Op::Lt, {x}, {zero, true});
  ir::Value *folded = g.sem().binary(Op::Sub, {g.sem().negate(x)},
                                     {g.builder().constant_int(x->type.element(), 1), true});
  x = g.sem().where(neg, {folded}, {x});
  const double scale = bits == 32 ? 4.6566127342e-10 : 1.0842020432385337e-19;
  return g.sem().binary(Op::Mul, {x}, g.to_operand(py_number(scale), "the scale"));
}

Val tl_uint_to_uniform_float(IrGen &g, CallArgs &a) {
  return Val::tensor(uniform(g, tensor_arg(g, a, 0, "x", "tl.uint_to_uniform_float")));
}

Val tl_rand(IrGen &g, CallArgs &a) {
  return Val::tensor(uniform(g, randint4x(g, a, "tl.rand")[0]));
}

Val tl_rand4x(IrGen &g, CallArgs &a) {
  std::vector<Val> r;
  for (ir::Value *w : randint4x(g, a, "tl.rand4x"))
    r.push_back(Val::tensor(uniform(g, w)));
  return Val::tuple(std::move(r));
}

/// Box-Muller on two uniforms: (r cos(2 pi u2), r sin(2 pi u2)) with
/// r = sqrt(-2 log(max(u1, 1e-7))).
std::pair<Val, Val> pair_to_normal(IrGen &g, const Val &u1, const Val &u2) {
  Val m = call_builtin_with(g, "tl.maximum", {py_number(1.0e-7), u1});
  ir::Value *th = g.sem().binary(Op::Mul, g.to_operand(py_number(6.283185307179586), "2 pi"),
                                 g.to_operand(u2, "u2"));
  ir::Value *lg = call_builtin_with(g, "tl.log", {m}).v;
  Val r = call_builtin_with(
      g, "tl.sqrt",
      {Val::tensor(g.sem().binary(Op::Mul, g.to_operand(py_number(-2.0), "-2"), {lg}))});
  Val cos = call_builtin_with(g, "tl.cos", {Val::tensor(th)}),
      sin = call_builtin_with(g, "tl.sin", {Val::tensor(th)});
  return {Val::tensor(g.sem().binary(Op::Mul, {r.v}, {cos.v})),
          Val::tensor(g.sem().binary(Op::Mul, {r.v}, {sin.v}))};
}

Val tl_pair_uniform_to_normal(IrGen &g, CallArgs &a) {
  auto [n1, n2] = pair_to_normal(g, required(g, a, 0, "u1", "tl.pair_uniform_to_normal"),
                                 required(g, a, 1, "u2", "tl.pair_uniform_to_normal"));
  return Val::tuple({n1, n2});
}

Val tl_randn(IrGen &g, CallArgs &a) {
  std::vector<ir::Value *> w = randint4x(g, a, "tl.randn");
  return pair_to_normal(g, Val::tensor(uniform(g, w[0])), Val::tensor(uniform(g, w[1]))).first;
}

Val tl_randn4x(IrGen &g, CallArgs &a) {
  std::vector<ir::Value *> w = randint4x(g, a, "tl.randn4x");
  auto [n1, n2] = pair_to_normal(g, Val::tensor(uniform(g, w[0])), Val::tensor(uniform(g, w[1])));
  auto [n3, n4] = pair_to_normal(g, Val::tensor(uniform(g, w[2])), Val::tensor(uniform(g, w[3])));
  return Val::tuple({n1, n2, n3, n4});
}

} // namespace

const HandlerTable &random_handlers() {
  static const HandlerTable table = {
      {"tl.philox", tl_philox},
      {"tl.randint", tl_randint},
      {"tl.randint4x", tl_randint4x},
      {"tl.rand", tl_rand},
      {"tl.rand4x", tl_rand4x},
      {"tl.randn", tl_randn},
      {"tl.randn4x", tl_randn4x},
      {"tl.uint_to_uniform_float", tl_uint_to_uniform_float},
      {"tl.pair_uniform_to_normal", tl_pair_uniform_to_normal},
  };
  return table;
}

} // namespace kiln::frontend
