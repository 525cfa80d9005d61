// Builtins that move elements along an axis, all built on one IR op,
// Gather (element i reads the source at a computed index along the axis):
// tl.gather, tl.flip, tl.sort (a bitonic network), tl.reduce with a jit
// combine_fn (a tree of halves), tl.associative_scan (Hillis-Steele doubling
// steps), and tl.histogram, tl.interleave, tl.cat and tl.swizzle2d from
// existing ops. A backend
// that lowers Gather (and the elementwise ops) gets all of them.
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::OpKind;
using ir::Type;

ir::Value *gather_along(IrGen &g, ir::Value *src, ir::Value *index, int axis) {
  ir::Op *op = g.builder().create(OpKind::Gather, {src, index},
                                  {index->type.with_element(src->type.element())});
  op->axis = axis;
  return op->result();
}

ir::Value *axis_index(IrGen &g, const Type &shape, int axis) {
  Type t = Type::scalar(DType::i32);
  t.rank = 1;
  t.shape[0] = shape.shape[axis];
  ir::Op *ar = g.builder().create(OpKind::Arange, {}, {t});
  ar->i = 0;
  ir::Value *v = ar->result();
  for (int d = 0; d < axis; ++d)
    v = g.sem().expand_dims(v, 0);
  while (v->type.rank < shape.rank)
    v = g.sem().expand_dims(v, v->type.rank);
  return g.sem().broadcast_to(v, shape.with_element(Type::scalar(DType::i32)));
}

ir::Value *flip_along(IrGen &g, ir::Value *x, int axis) {
  ir::Value *idx = axis_index(g, x->type, axis);
  ir::Value *last = g.builder().constant_int(Type::scalar(DType::i32), x->type.shape[axis] - 1);
  return gather_along(g, x, g.sem().binary(Op::Sub, {last, true}, {idx}), axis);
}

namespace {

ir::Value *i32(IrGen &g, int64_t v) {
  return g.builder().constant_int(Type::scalar(DType::i32), v);
}

/// The operands of tl.reduce / tl.associative_scan: one block or a tuple of
/// blocks of one shape.
std::vector<ir::Value *> block_operands(IrGen &g, const Val &input, const char *fn,
                                        bool *is_tuple) {
  *is_tuple = input.kind == Val::Kind::Tuple;
  std::vector<ir::Value *> xs;
  for (const Val &v : *is_tuple ? input.elems : std::vector<Val>{input})
    xs.push_back(g.to_tensor(v, (std::string(fn) + "'s input").c_str()));
  if (xs.empty())
    g.fail(std::string(fn) + " needs at least one input block");
  for (ir::Value *x : xs)
    if (!x->type.is_block() || !x->type.same_shape(xs[0]->type))
      g.fail(std::string(fn) + "'s inputs must be blocks of one shape, got " + x->type.str() +
             " and " + xs[0]->type.str());
  return xs;
}

/// combine_fn(*a, *b), checked to give one value of each input's type.
std::vector<ir::Value *> combine(IrGen &g, const Val &fn, const std::vector<ir::Value *> &a,
                                 const std::vector<ir::Value *> &b, const char *what) {
  std::vector<Val> args;
  for (ir::Value *v : a)
    args.push_back(Val::tensor(v));
  for (ir::Value *v : b)
    args.push_back(Val::tensor(v));
  const Loc loc = g.builder().loc();
  Val r = g.call_function(fn, std::move(args), loc);
  g.builder().set_loc(loc);
  std::vector<Val> rs = r.kind == Val::Kind::Tuple ? r.elems : std::vector<Val>{r};
  if (rs.size() != a.size())
    g.fail(std::string(what) + "'s combine_fn returns " + std::to_string(rs.size()) +
           " value(s) for " + std::to_string(a.size()) +
           " input(s); it must return one value per input");
  std::vector<ir::Value *> out;
  for (size_t i = 0; i < rs.size(); ++i) {
    ir::Value *v = g.to_tensor(rs[i], "the combine_fn's result");
    out.push_back(g.sem().broadcast_to(g.sem().cast(v, a[i]->type.element()), a[i]->type));
  }
  return out;
}

Val pack(const std::vector<ir::Value *> &xs, bool is_tuple) {
  if (!is_tuple)
    return Val::tensor(xs[0]);
  std::vector<Val> r;
  for (ir::Value *x : xs)
    r.push_back(Val::tensor(x));
  return Val::tuple(std::move(r));
}

/// A block without `axis` (of size 1): a reshape, or for a 1-D block the scalar.
ir::Value *drop_axis(IrGen &g, ir::Value *v, int axis) {
  if (v->type.rank > 1) {
    std::vector<int64_t> dims;
    for (int d = 0; d < v->type.rank; ++d)
      if (d != axis)
        dims.push_back(v->type.shape[d]);
    return g.sem().reshape(v, dims);
  }
  // A reduction over one element is that element.
  ir::Op *op = g.builder().create(OpKind::Reduce, {v}, {v->type.element()},
                                  static_cast<uint8_t>(ir::ReduceOp::Max));
  op->axis = 0;
  return op->result();
}

// tl.reduce(input, axis, combine_fn, keep_dims=False): halves combined
// pairwise until one element is left along the axis.
Val tl_reduce(IrGen &g, CallArgs &a) {
  bool is_tuple = false;
  std::vector<ir::Value *> xs =
      block_operands(g, required(g, a, 0, "input", "tl.reduce"), "tl.reduce", &is_tuple);
  const Val &fn = required(g, a, 2, "combine_fn", "tl.reduce");
  bool none = false;
  int axis = axis_arg(g, a, 1, "tl.reduce", xs[0]->type.rank, true, &none);
  const bool keep_dims = bool_kwarg(g, a, 3, "keep_dims", false);
  const int orig_rank = xs[0]->type.rank;
  if (none)
    for (ir::Value *&x : xs)
      x = g.sem().reshape(x, {x->type.numel()});
  for (int64_t n = xs[0]->type.shape[axis]; n > 1; n /= 2) {
    int64_t dims[Type::kMaxRank];
    for (int d = 0; d < xs[0]->type.rank; ++d)
      dims[d] = d == axis ? n / 2 : xs[0]->type.shape[d];
    ir::Value *lo = axis_index(g, xs[0]->type.with_shape(dims, xs[0]->type.rank), axis);
    ir::Value *hi = g.sem().binary(Op::Add, {lo}, {i32(g, n / 2), true});
    std::vector<ir::Value *> left, right;
    for (ir::Value *x : xs) {
      left.push_back(gather_along(g, x, lo, axis));
      right.push_back(gather_along(g, x, hi, axis));
    }
    xs = combine(g, fn, left, right, "tl.reduce");
  }
  for (ir::Value *&x : xs) {
    x = drop_axis(g, x, axis);
    if (keep_dims)
      for (int d = 0; d < (none ? orig_rank : 1); ++d)
        x = g.sem().expand_dims(x, none ? 0 : axis);
  }
  return pack(xs, is_tuple);
}

// tl.associative_scan(input, axis, combine_fn, reverse=False): log2(n)
// doubling steps; after step k each element holds the combination of the
// 2^k elements ending (reverse: starting) at it. The element further from
// the scan's start is always combine_fn's second argument.
Val tl_associative_scan(IrGen &g, CallArgs &a) {
  bool is_tuple = false;
  std::vector<ir::Value *> xs = block_operands(g, required(g, a, 0, "input", "tl.associative_scan"),
                                               "tl.associative_scan", &is_tuple);
  bool none = false;
  const int axis = axis_arg(g, a, 1, "tl.associative_scan", xs[0]->type.rank, false, &none);
  const Val &fn = required(g, a, 2, "combine_fn", "tl.associative_scan");
  const bool reverse = bool_kwarg(g, a, 3, "reverse", false);
  const Type shape = xs[0]->type;
  const int64_t n = shape.shape[axis];
  ir::Value *idx = axis_index(g, shape, axis);
  for (int64_t k = 1; k < n; k *= 2) {
    ir::Value *src, *valid;
    if (!reverse) {
      src = g.sem().minmax(ir::BinaryOp::Max, {g.sem().binary(Op::Sub, {idx}, {i32(g, k), true})},
                           {i32(g, 0), true});
      valid = g.sem().compare(Op::Ge, {idx}, {i32(g, k), true});
    } else {
      src = g.sem().minmax(ir::BinaryOp::Min, {g.sem().binary(Op::Add, {idx}, {i32(g, k), true})},
                           {i32(g, n - 1), true});
      valid = g.sem().compare(Op::Lt, {idx}, {i32(g, n - k), true});
    }
    std::vector<ir::Value *> shifted;
    for (ir::Value *x : xs)
      shifted.push_back(gather_along(g, x, src, axis));
    std::vector<ir::Value *> combined = reverse
                                            ? combine(g, fn, xs, shifted, "tl.associative_scan")
                                            : combine(g, fn, shifted, xs, "tl.associative_scan");
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = g.sem().elementwise(OpKind::Select, 0, {valid, combined[i], xs[i]}, xs[i]->type);
  }
  return pack(xs, is_tuple);
}

/// The axis of tl.sort / tl.flip: `dim`, or the last one when None.
int dim_arg(IrGen &g, CallArgs &a, const ir::Value *x, const char *fn) {
  if (!x->type.is_block())
    g.fail(std::string(fn) + " needs a block, not " + x->type.str());
  const Val *d = optional_arg(a, 1, "dim");
  int64_t dim = d ? g.const_int(*d, (std::string(fn) + "'s dim").c_str()) : x->type.rank - 1;
  if (dim < 0)
    dim += x->type.rank;
  if (dim < 0 || dim >= x->type.rank)
    g.fail(std::string(fn) + "'s dim " + std::to_string(dim) + " is out of range for " +
           x->type.str());
  return static_cast<int>(dim);
}

Val tl_flip(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "x", "tl.flip");
  return Val::tensor(flip_along(g, x, dim_arg(g, a, x, "tl.flip")));
}

// tl.sort(x, dim=None, descending=False): a bitonic sorting network; each
// step pairs element i with i ^ j, the lower keeping the min where its run
// ascends.
Val tl_sort(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "x", "tl.sort");
  const int axis = dim_arg(g, a, x, "tl.sort");
  const bool descending = bool_kwarg(g, a, 2, "descending", false);
  if (x->type.pointer)
    g.fail("tl.sort cannot sort pointers");
  const int64_t n = x->type.shape[axis];
  ir::Value *idx = axis_index(g, x->type, axis);
  ir::Value *zero = i32(g, 0);
  for (int64_t k = 2; k <= n; k *= 2) {
    ir::Value *run_desc = g.sem().compare(
        Op::Ne, {g.sem().binary(Op::BitAnd, {idx}, {i32(g, k), true})}, {zero, true});
    if (descending)
      run_desc = g.sem().logical_not(run_desc);
    for (int64_t j = k / 2; j > 0; j /= 2) {
      ir::Value *partner =
          gather_along(g, x, g.sem().binary(Op::BitXor, {idx}, {i32(g, j), true}), axis);
      ir::Value *upper = g.sem().compare(
          Op::Ne, {g.sem().binary(Op::BitAnd, {idx}, {i32(g, j), true})}, {zero, true});
      // The lower of a pair keeps the min in an ascending run; the upper the max.
      ir::Value *take_max = g.sem().binary(Op::BitXor, {upper}, {run_desc});
      ir::Value *mx = g.sem().minmax(ir::BinaryOp::Max, {x}, {partner});
      ir::Value *mn = g.sem().minmax(ir::BinaryOp::Min, {x}, {partner});
      x = g.sem().elementwise(OpKind::Select, 0, {take_max, mx, mn}, x->type);
    }
  }
  return Val::tensor(x);
}

// tl.topk(x, k, dim=None): the k largest along dim (the last when None),
// largest first: the descending sort's first k.
Val tl_topk(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "x", "tl.topk");
  const int64_t k = const_int_arg(g, a, 1, "k", "tl.topk");
  const Val *d = optional_arg(a, 2, "dim");
  CallArgs sort;
  sort.pos = {Val::tensor(x), d ? *d : Val::constant(ConstValue::none()),
              Val::constant(ConstValue::of_bool(true))};
  const int axis = dim_arg(g, sort, x, "tl.topk");
  if (k <= 0 || k > x->type.shape[axis] || (k & (k - 1)) != 0)
    g.fail("tl.topk's k must be a power of two no larger than the dim (" +
           std::to_string(x->type.shape[axis]) + "), got " + std::to_string(k));
  ir::Value *sorted = tl_sort(g, sort).v;
  Type first = x->type;
  first.shape[axis] = k;
  return Val::tensor(gather_along(g, sorted, axis_index(g, first, axis), axis));
}

Val tl_gather(IrGen &g, CallArgs &a) {
  ir::Value *src = tensor_arg(g, a, 0, "src", "tl.gather");
  ir::Value *index = tensor_arg(g, a, 1, "index", "tl.gather");
  const Val &ax = required(g, a, 2, "axis", "tl.gather");
  if (!src->type.is_block() || !index->type.is_block() || src->type.rank != index->type.rank)
    g.fail("tl.gather needs a source and an index block of the same rank, got " + src->type.str() +
           " and " + index->type.str());
  if (!index->type.is_int() || index->type.is_bool())
    g.fail("tl.gather's index must be an integer block, not " + index->type.str());
  int64_t axis = g.const_int(ax, "tl.gather's axis");
  if (axis < 0)
    axis += src->type.rank;
  if (axis < 0 || axis >= src->type.rank)
    g.fail("tl.gather's axis " + std::to_string(axis) + " is out of range for " + src->type.str());
  for (int d = 0; d < src->type.rank; ++d)
    if (d != axis && src->type.shape[d] != index->type.shape[d])
      g.fail("tl.gather's index " + index->type.str() + " must match the source " +
             src->type.str() + " in every dimension but the axis");
  return Val::tensor(gather_along(g, src, index, static_cast<int>(axis)));
}

// tl.histogram(input, num_bins, mask=None): bin b counts the elements equal
// to b (values outside [0, num_bins) are not counted), as an int32 block.
Val tl_histogram(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.histogram");
  const int64_t bins = const_int_arg(g, a, 1, "num_bins", "tl.histogram");
  if (x->type.rank != 1 || !x->type.is_int())
    g.fail("tl.histogram needs a 1-D integer block, not " + x->type.str());
  Val b = call_builtin_with(
      g, "tl.arange",
      {Val::constant(ConstValue::of_int(0)), Val::constant(ConstValue::of_int(bins))});
  ir::Value *hit =
      g.sem().compare(Op::Eq, {g.sem().expand_dims(x, 1)}, {g.sem().expand_dims(b.v, 0)});
  if (const Val *m = optional_arg(a, 2, "mask")) {
    ir::Value *mask = g.sem().to_bool(g.to_tensor(*m, "tl.histogram's mask"));
    hit = g.sem().binary(
        Op::BitAnd, {hit},
        {g.sem().broadcast_to(g.sem().expand_dims(g.sem().broadcast_to(mask, x->type), 1),
                              hit->type)});
  }
  return call_builtin_with(g, "tl.sum",
                           {Val::tensor(g.sem().cast(hit, Type::scalar(DType::i32))),
                            Val::constant(ConstValue::of_int(0))});
}

// tl.cat(input, other, can_reorder=False): the two blocks one after the
// other along dim 0 (Triton may reorder them; kiln keeps the order), built
// as join, moving the pair dim first and merging it into dim 0.
Val tl_cat(IrGen &g, CallArgs &a) {
  ir::Value *x = tensor_arg(g, a, 0, "input", "tl.cat"),
            *y = tensor_arg(g, a, 1, "other", "tl.cat");
  if (!x->type.is_block() || !x->type.same_shape(y->type))
    g.fail("tl.cat needs two blocks of one shape, got " + x->type.str() + " and " + y->type.str());
  if (x->type.rank >= Type::kMaxRank)
    g.fail("tl.cat of " + std::to_string(Type::kMaxRank) +
           "-D blocks is not supported by kiln yet");
  ir::Value *j = call_builtin_with(g, "tl.join", {Val::tensor(x), Val::tensor(y)}).v;
  std::vector<int64_t> perm{j->type.rank - 1};
  for (int d = 0; d + 1 < j->type.rank; ++d)
    perm.push_back(d);
  ir::Value *t = g.sem().trans(j, perm);
  std::vector<int64_t> dims(x->type.shape.begin(), x->type.shape.begin() + x->type.rank);
  dims[0] *= 2;
  return Val::tensor(g.sem().reshape(t, dims));
}

// tl.swizzle2d(i, j, size_i, size_j, size_g): (i, j) of a row-major grid
// renumbered so that groups of size_g rows are walked column by column (the
// L2-friendly program order of the matmul tutorial).
Val tl_swizzle2d(IrGen &g, CallArgs &a) {
  const char *fn = "tl.swizzle2d";
  Operand i = operand_arg(g, a, 0, "i", fn), j = operand_arg(g, a, 1, "j", fn),
          si = operand_arg(g, a, 2, "size_i", fn), sj = operand_arg(g, a, 3, "size_j", fn),
          sg = operand_arg(g, a, 4, "size_g", fn);
  Semantic &s = g.sem();
  Operand ij{s.binary(Op::Add, {s.binary(Op::Mul, i, sj)}, j)};
  Operand size_gj{s.binary(Op::Mul, sg, sj)};
  Operand off_i{s.binary(Op::Mul, {s.binary(Op::FloorDiv, ij, size_gj)}, sg)};
  Operand rows{s.minmax(ir::BinaryOp::Min, {s.binary(Op::Sub, si, off_i)},
                        sg)}; // the last group may be short
  Operand in_group{s.binary(Op::Mod, ij, size_gj)};
  return Val::tuple({Val::tensor(s.binary(Op::Add, off_i, {s.binary(Op::Mod, in_group, rows)})),
                     Val::tensor(s.binary(Op::FloorDiv, in_group, rows))});
}

// tl.interleave(a, b): a and b alternating along the last dim.
Val tl_interleave(IrGen &g, CallArgs &a) {
  Val joined = call_builtin_with(
      g, "tl.join",
      {required(g, a, 0, "a", "tl.interleave"), required(g, a, 1, "b", "tl.interleave")});
  std::vector<int64_t> dims(joined.v->type.shape.begin(),
                            joined.v->type.shape.begin() + joined.v->type.rank - 1);
  dims.back() *= 2;
  return Val::tensor(g.sem().reshape(joined.v, dims));
}

} // namespace

const HandlerTable &scan_handlers() {
  static const HandlerTable table = {
      {"tl.reduce", tl_reduce},
      {"tl.associative_scan", tl_associative_scan},
      {"tl.flip", tl_flip},
      {"tl.sort", tl_sort},
      {"tl.gather", tl_gather},
      {"tl.histogram", tl_histogram},
      {"tl.interleave", tl_interleave},
      {"tl.cat", tl_cat},
      {"tl.swizzle2d", tl_swizzle2d},
      {"tl.topk", tl_topk},
  };
  return table;
}

} // namespace kiln::frontend
