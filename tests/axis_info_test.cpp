// The axis info analysis: contiguity, divisibility and constancy per dim,
// from which the GPU picks layouts and 16-byte accesses.
#include <doctest/doctest.h>

#include "compiler/analysis/axis_info.hpp"
#include "compiler/ir/builder.hpp"

using namespace kiln;
using ir::OpKind;
using ir::Type;

namespace {

Type block(DType t, std::initializer_list<int64_t> dims, bool ptr = false) {
  Type r = ptr ? Type::ptr(t) : Type::scalar(t);
  std::vector<int64_t> d(dims);
  return r.with_shape(d.data(), static_cast<int>(d.size()));
}

struct Fixture {
  ir::Function f;
  ir::Builder b{f};
  ir::Value *param(Type t, bool d16) {
    ir::Value *v = f.new_value(t, nullptr);
    v->facts.divisible16 = d16;
    f.body.args.push_back(v);
    return v;
  }
  ir::Value *op(OpKind k, std::vector<ir::Value *> in, Type t, uint8_t sub = 0) {
    return b.create(k, in, {t}, sub)->result();
  }
  ir::Value *arange(int64_t n) {
    ir::Op *o = b.create(OpKind::Arange, {}, {block(DType::i32, {n})});
    return o->result();
  }
  ir::Value *expand(ir::Value *v, int axis, Type t) {
    ir::Op *o = b.create(OpKind::ExpandDims, {v}, {t});
    o->axis = axis;
    return o->result();
  }
};

} // namespace

TEST_CASE("axis info: base + arange is contiguous, aligned by the D attribute") {
  Fixture x;
  ir::Value *p = x.param(Type::ptr(DType::f32), true);
  ir::Value *offs = x.arange(128);
  ir::Value *ps = x.op(OpKind::Splat, {p}, block(DType::f32, {128}, true));
  ir::Value *addr = x.op(OpKind::AddPtr, {ps, offs}, block(DType::f32, {128}, true));
  analysis::AxisInfoAnalysis a;
  CHECK(a.get(offs).contig[0] == 128);
  CHECK(a.get(addr).contig[0] == 128);
  CHECK(a.get(addr).div[0] == 16);
  CHECK(a.get(ps).constancy[0] == 128);
}

TEST_CASE(
    "axis info: a row-major 2-D tile is contiguous along its columns, constant rows broadcast") {
  Fixture x;
  ir::Value *p = x.param(Type::ptr(DType::f16), true);
  ir::Value *stride = x.param(Type::scalar(DType::i32), true);
  ir::Value *rows = x.arange(16), *cols = x.arange(64);
  ir::Value *r2 = x.expand(rows, 1, block(DType::i32, {16, 1}));
  ir::Value *c2 = x.expand(cols, 0, block(DType::i32, {1, 64}));
  ir::Value *s2 = x.op(OpKind::Splat, {stride}, block(DType::i32, {16, 1}));
  ir::Value *ro = x.op(OpKind::Binary, {r2, s2}, block(DType::i32, {16, 1}),
                       static_cast<uint8_t>(ir::BinaryOp::Mul));
  ir::Value *rb = x.op(OpKind::Broadcast, {ro}, block(DType::i32, {16, 64}));
  ir::Value *cb = x.op(OpKind::Broadcast, {c2}, block(DType::i32, {16, 64}));
  ir::Value *off = x.op(OpKind::Binary, {rb, cb}, block(DType::i32, {16, 64}),
                        static_cast<uint8_t>(ir::BinaryOp::Add));
  ir::Value *ps = x.op(OpKind::Splat, {p}, block(DType::f16, {16, 64}, true));
  ir::Value *addr = x.op(OpKind::AddPtr, {ps, off}, block(DType::f16, {16, 64}, true));
  analysis::AxisInfoAnalysis a;
  const analysis::AxisInfo &i = a.get(addr);
  CHECK(i.contig[1] == 64);
  CHECK(i.contig[0] == 1);
  CHECK(i.div[1] == 16); // 16-byte aligned rows: 8 halves move as one 16-byte access
  CHECK(a.get(rb).constancy[1] == 64);
  // The transpose swaps the dims.
  ir::Op *t = x.b.create(OpKind::Trans, {addr}, {block(DType::f16, {64, 16}, true)});
  t->ints = {1, 0};
  CHECK(a.get(t->result()).contig[0] == 64);
}

TEST_CASE("axis info: `% N` and `// N` by a uniform N keep the runs N's divisor allows") {
  Fixture x;
  ir::Value *n16 = x.param(Type::scalar(DType::i32), true),
            *n = x.param(Type::scalar(DType::i32), false);
  ir::Value *pid = x.op(OpKind::ProgramId, {}, Type::scalar(DType::i32));
  ir::Value *c256 = x.b.constant_int(Type::scalar(DType::i32), 256);
  ir::Value *base = x.op(OpKind::Binary, {pid, c256}, Type::scalar(DType::i32),
                         static_cast<uint8_t>(ir::BinaryOp::Mul));
  const Type t = block(DType::i32, {256});
  ir::Value *offs = x.op(OpKind::Binary, {x.op(OpKind::Splat, {base}, t), x.arange(256)}, t,
                         static_cast<uint8_t>(ir::BinaryOp::Add));
  auto by = [&](ir::Value *d, ir::BinaryOp o) {
    return x.op(OpKind::Binary, {offs, x.op(OpKind::Splat, {d}, t)}, t, static_cast<uint8_t>(o));
  };
  analysis::AxisInfoAnalysis a;
  // (pid * 256 + arange(256)) % N, N specialized D: runs of 16, 16-aligned (tutorial 03).
  CHECK(a.get(by(n16, ir::BinaryOp::Rem)).contig[0] == 16);
  CHECK(a.get(by(n16, ir::BinaryOp::Rem)).div[0] == 16);
  CHECK(a.get(by(n16, ir::BinaryOp::IDiv)).constancy[0] == 16);
  // N of unknown divisor: nothing kept.
  CHECK(a.get(by(n, ir::BinaryOp::Rem)).contig[0] == 1);
  CHECK(a.get(by(n, ir::BinaryOp::IDiv)).constancy[0] == 1);
}

TEST_CASE("axis info: tl.multiple_of / max_contiguous / max_constancy facts raise what the "
          "analysis found") {
  Fixture x;
  ir::Value *n = x.param(Type::scalar(DType::i32), false);
  const Type t = block(DType::i32, {128});
  ir::Value *m = x.op(OpKind::Binary, {x.arange(128), x.op(OpKind::Splat, {n}, t)}, t,
                      static_cast<uint8_t>(ir::BinaryOp::Rem));
  m->facts.multiple_of[0] = 128;
  m->facts.max_contiguous[0] = 128;
  ir::Value *q = x.op(OpKind::Binary, {x.arange(128), x.op(OpKind::Splat, {n}, t)}, t,
                      static_cast<uint8_t>(ir::BinaryOp::IDiv));
  q->facts.max_constancy[0] = 32;
  analysis::AxisInfoAnalysis a;
  CHECK(a.get(m).contig[0] == 128);
  CHECK(a.get(m).div[0] == 128);
  CHECK(a.get(q).constancy[0] == 32);
}

TEST_CASE("axis info: a pointer recast to another element type keeps its alignment") {
  // fp8 kernels take uint8 tensors and recast them (`p.to(tl.pointer_type(
  // tl.float8e4nv))`): their loads must still vectorize.
  Fixture x;
  ir::Value *p = x.param(Type::ptr(DType::u8), true);
  ir::Value *q = x.op(OpKind::Bitcast, {p}, Type::ptr(DType::f8e4nv));
  ir::Value *w = x.op(OpKind::Bitcast, {p}, Type::ptr(DType::f32));
  ir::Value *offs = x.arange(64);
  ir::Value *addr =
      x.op(OpKind::AddPtr, {x.op(OpKind::Splat, {q}, block(DType::f8e4nv, {64}, true)), offs},
           block(DType::f8e4nv, {64}, true));
  analysis::AxisInfoAnalysis a;
  CHECK(a.get(q).div[0] == 16);
  CHECK(a.get(w).div[0] == 16);
  CHECK(a.get(addr).div[0] == 16);
  CHECK(a.get(addr).contig[0] == 64);
}
