// Block pointers (tl.make_block_ptr, tl.advance, tl.load / tl.store with
// boundary_check and padding_option) and tensor descriptors
// (tl.make_tensor_descriptor, desc.load / desc.store,
// tl.load_tensor_descriptor / tl.store_tensor_descriptor) as plain strided
// access: a load or store computes the block of addresses
// base + sum_d (offset_d + i_d) * stride_d and, for the checked dims, the
// mask 0 <= offset_d + i_d < shape_d. That is what they mean on any target;
// the GPU may later map them to TMA.
//
// Both are tuples tagged by Val::name, so that loops carry them like any
// tuple (ir_gen_carry.cpp): (base, shape, strides, offsets, block_shape,
// order) for a block pointer, (base, shape, strides, block_shape, padding)
// for a descriptor (padding: the `other` of its loads); shape and strides are i64 tensors, offsets
// i32, block_shape and order constants.
#include <limits>
#include <string>
#include <vector>

#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::Type;

namespace {

constexpr const char *kBlockPtr = "tl.block_ptr";
constexpr const char *kDescriptor = "tl.tensor_descriptor";
enum BlockPtrField { kBase, kShape, kStrides, kOffsets, kBlockShape, kOrder };
enum DescriptorField { kDescBase, kDescShape, kDescStrides, kDescBlockShape, kDescPadding };

std::vector<Val> elems_of(IrGen &g, const Val &v, const std::string &what) {
  if (v.kind == Val::Kind::Tuple)
    return v.elems;
  if (v.is_tensor() || v.is_const())
    return {v};
  g.fail(what + " must be a tuple");
}

/// Each element of `v` as a scalar tensor of `t`.
Val scalars(IrGen &g, const Val &v, size_t rank, DType t, const std::string &what) {
  std::vector<Val> e = elems_of(g, v, what);
  if (e.size() != rank)
    g.fail(what + " has " + std::to_string(e.size()) + " elements for a block of rank " +
           std::to_string(rank));
  for (Val &x : e) {
    ir::Value *s = g.to_tensor(x, what.c_str());
    if (s->type.is_block() || !s->type.is_int())
      g.fail(what + " must hold integer scalars, not " + s->type.str());
    x = Val::tensor(g.sem().cast(s, Type::scalar(t)));
  }
  return Val::tuple(std::move(e));
}

Val const_ints(IrGen &g, const Val &v, const std::string &what) {
  std::vector<Val> e = elems_of(g, v, what);
  for (const Val &x : e)
    g.const_int(x, what.c_str());
  return Val::tuple(std::move(e));
}

ir::Value *base_pointer(IrGen &g, const Val &v, const char *fn) {
  ir::Value *p = g.to_tensor(v, (std::string(fn) + "'s base").c_str());
  if (!p->type.pointer || p->type.is_block())
    g.fail(std::string(fn) + "'s base must be a scalar pointer, not " + p->type.str());
  return p;
}

Val tagged(std::vector<Val> fields, const char *tag) {
  Val r = Val::tuple(std::move(fields));
  r.name = tag;
  return r;
}

// tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)
Val tl_make_block_ptr(IrGen &g, CallArgs &a) {
  const char *fn = "tl.make_block_ptr";
  ir::Value *base = base_pointer(g, required(g, a, 0, "base", fn), fn);
  const Val block =
      const_ints(g, required(g, a, 4, "block_shape", fn), "tl.make_block_ptr's block_shape");
  const size_t rank = block.elems.size();
  std::vector<int64_t> dims;
  for (const Val &d : block.elems)
    dims.push_back(g.const_int(d, "a block dimension"));
  g.const_shape(block, "tl.make_block_ptr's block_shape"); // powers of two, at most 3 dims
  const Val order = const_ints(g, required(g, a, 5, "order", fn), "tl.make_block_ptr's order");
  if (order.elems.size() != rank)
    g.fail("tl.make_block_ptr's order must list each of the " + std::to_string(rank) +
           " dims once");
  return tagged(
      {Val::tensor(base),
       scalars(g, required(g, a, 1, "shape", fn), rank, DType::i64, "tl.make_block_ptr's shape"),
       scalars(g, required(g, a, 2, "strides", fn), rank, DType::i64,
               "tl.make_block_ptr's strides"),
       scalars(g, required(g, a, 3, "offsets", fn), rank, DType::i32,
               "tl.make_block_ptr's offsets"),
       block, order},
      kBlockPtr);
}

// tl.advance(base, offsets): the same block pointer moved by `offsets`.
Val tl_advance(IrGen &g, CallArgs &a) {
  Val bp = required(g, a, 0, "base", "tl.advance");
  if (bp.kind != Val::Kind::Tuple || bp.name != kBlockPtr)
    g.fail("tl.advance needs a block pointer made by tl.make_block_ptr");
  Val &offs = bp.elems[kOffsets];
  const Val delta = scalars(g, required(g, a, 1, "offsets", "tl.advance"), offs.elems.size(),
                            DType::i32, "tl.advance's offsets");
  for (size_t d = 0; d < offs.elems.size(); ++d)
    offs.elems[d] = Val::tensor(g.sem().binary(Op::Add, {offs.elems[d].v}, {delta.elems[d].v}));
  return bp;
}

/// The addresses of a block at `offsets` and the mask of its elements in
/// bounds along `checked` dims (null when none is checked).
std::pair<ir::Value *, ir::Value *> block_access(IrGen &g, ir::Value *base, const Val &shape,
                                                 const Val &strides, const Val &offsets,
                                                 const Val &block,
                                                 const std::vector<bool> &checked) {
  const int rank = static_cast<int>(block.elems.size());
  std::vector<int64_t> dims;
  for (const Val &d : block.elems)
    dims.push_back(g.const_int(d, "a block dimension"));
  const Type full = Type::scalar(DType::i64).with_shape(dims.data(), rank);
  ir::Value *offset = nullptr, *mask = nullptr;
  for (int d = 0; d < rank; ++d) {
    // The index along d, shaped to broadcast over the other dims.
    Val ar = call_builtin_with(
        g, "tl.arange",
        {Val::constant(ConstValue::of_int(0)), Val::constant(ConstValue::of_int(dims[d]))});
    ir::Value *idx = g.sem().binary(Op::Add, {offsets.elems[d].v}, {ar.v});
    idx = g.sem().cast(idx, Type::scalar(DType::i64));
    for (int e = 0; e < d; ++e)
      idx = g.sem().expand_dims(idx, 0);
    while (idx->type.rank < rank)
      idx = g.sem().expand_dims(idx, idx->type.rank);
    ir::Value *term = g.sem().binary(Op::Mul, {idx}, {strides.elems[d].v});
    offset = offset ? g.sem().binary(Op::Add, {offset}, {term}) : term;
    if (d < static_cast<int>(checked.size()) && checked[d]) {
      ir::Value *zero = g.builder().constant_int(Type::scalar(DType::i64), 0);
      ir::Value *in = g.sem().binary(Op::BitAnd, {g.sem().compare(Op::Ge, {idx}, {zero, true})},
                                     {g.sem().compare(Op::Lt, {idx}, {shape.elems[d].v})});
      mask = mask ? g.sem().binary(Op::BitAnd, {mask}, {in}) : in;
    }
  }
  offset = g.sem().broadcast_to(offset, full);
  ir::Value *ptrs = g.sem().binary(
      Op::Add, {g.sem().broadcast_to(base, full.with_element(base->type))}, {offset});
  if (mask)
    mask = g.sem().broadcast_to(mask, full.with_element(Type::scalar(DType::i1)));
  return {ptrs, mask};
}

std::vector<bool> boundary_dims(IrGen &g, const Val *bc, size_t rank) {
  std::vector<bool> checked(rank, false);
  if (!bc)
    return checked;
  for (const Val &d : elems_of(g, *bc, "boundary_check")) {
    const int64_t i = g.const_int(d, "a boundary_check dim");
    if (i < 0 || i >= static_cast<int64_t>(rank))
      g.fail("boundary_check dim " + std::to_string(i) + " is out of range for a block of rank " +
             std::to_string(rank));
    checked[i] = true;
  }
  return checked;
}

/// The `other` of a padded load: zero, or NaN for padding_option="nan".
Val padding(IrGen &g, const Val *opt, const Type &elem) {
  std::string p =
      opt && opt->is_const() && opt->c.kind == ConstValue::Kind::Str ? opt->c.s : "zero";
  if (p == "" || p == "zero")
    return Val::constant(ConstValue::of_int(0));
  if (p == "nan") {
    if (!elem.is_float())
      g.fail("padding_option=\"nan\" needs a floating-point block, not " + elem.str());
    return py_number(std::numeric_limits<double>::quiet_NaN());
  }
  g.fail("padding_option must be \"zero\" or \"nan\", not \"" + p + "\"");
}

Val masked_load(IrGen &g, ir::Value *ptrs, ir::Value *mask, const Val &other) {
  if (!mask)
    return call_builtin_with(g, "tl.load", {Val::tensor(ptrs)});
  return call_builtin_with(g, "tl.load", {Val::tensor(ptrs), Val::tensor(mask), other});
}

Val masked_store(IrGen &g, ir::Value *ptrs, ir::Value *mask, const Val &value) {
  ir::Value *v = g.to_tensor(value, "the stored value");
  if (v->type.is_block() && !v->type.same_shape(ptrs->type))
    g.fail("the stored block " + v->type.str() + " does not have the block shape " +
           ptrs->type.str());
  if (!mask)
    return call_builtin_with(g, "tl.store", {Val::tensor(ptrs), value});
  return call_builtin_with(g, "tl.store", {Val::tensor(ptrs), value, Val::tensor(mask)});
}

// tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero")
Val tl_make_tensor_descriptor(IrGen &g, CallArgs &a) {
  const char *fn = "tl.make_tensor_descriptor";
  ir::Value *base = base_pointer(g, required(g, a, 0, "base", fn), fn);
  const Val block = const_ints(g, required(g, a, 3, "block_shape", fn),
                               "tl.make_tensor_descriptor's block_shape");
  g.const_shape(block, "tl.make_tensor_descriptor's block_shape");
  const size_t rank = block.elems.size();
  return tagged({Val::tensor(base),
                 scalars(g, required(g, a, 1, "shape", fn), rank, DType::i64,
                         "tl.make_tensor_descriptor's shape"),
                 scalars(g, required(g, a, 2, "strides", fn), rank, DType::i64,
                         "tl.make_tensor_descriptor's strides"),
                 block,
                 padding(g, optional_arg(a, 4, "padding_option"), Type::scalar(base->type.elem))},
                kDescriptor);
}

const Val &descriptor_arg(IrGen &g, CallArgs &a, const char *fn) {
  const Val &d = required(g, a, 0, "desc", fn);
  if (d.kind != Val::Kind::Tuple || d.name != kDescriptor)
    g.fail(std::string(fn) + " needs a tensor descriptor (tl.make_tensor_descriptor, or a "
                             "TensorDescriptor passed in)");
  return d;
}

std::pair<ir::Value *, ir::Value *> descriptor_access(IrGen &g, CallArgs &a, const char *fn) {
  const Val &d = descriptor_arg(g, a, fn);
  const size_t rank = d.elems[kDescBlockShape].elems.size();
  const Val offs = scalars(g, required(g, a, 1, "offsets", fn), rank, DType::i32,
                           std::string(fn) + "'s offsets");
  // A descriptor always checks every dim: out-of-bounds reads give zero, writes are dropped.
  return block_access(g, d.elems[kDescBase].v, d.elems[kDescShape], d.elems[kDescStrides], offs,
                      d.elems[kDescBlockShape], std::vector<bool>(rank, true));
}

Val tl_load_tensor_descriptor(IrGen &g, CallArgs &a) {
  auto [ptrs, mask] = descriptor_access(g, a, "tensor descriptor load");
  return masked_load(g, ptrs, mask,
                     required(g, a, 0, "desc", "tensor descriptor load").elems[kDescPadding]);
}

Val tl_store_tensor_descriptor(IrGen &g, CallArgs &a) {
  auto [ptrs, mask] = descriptor_access(g, a, "tensor descriptor store");
  return masked_store(g, ptrs, mask, required(g, a, 2, "value", "tensor descriptor store"));
}

} // namespace

Val host_descriptor(IrGen &g, std::vector<Val> parts) {
  const size_t n = (parts.size() - 2) / 3;
  auto run = [&](size_t from) {
    return scalars(g, Val::tuple({parts.begin() + from, parts.begin() + from + n}), n, DType::i64,
                   "a tensor descriptor's shape");
  };
  const Val shape = run(1), strides = run(1 + n);
  const Val block = Val::tuple({parts.begin() + 1 + 2 * n, parts.begin() + 1 + 3 * n});
  ir::Value *base = parts[0].v;
  const Val pad = Val::constant(ConstValue::of_str(parts.back().c.b ? "nan" : "zero"));
  return tagged({parts[0], shape, strides, block, padding(g, &pad, Type::scalar(base->type.elem))},
                kDescriptor);
}

bool is_block_ptr(const Val &v) {
  return v.kind == Val::Kind::Tuple && v.name == kBlockPtr;
}

Val load_block_ptr(IrGen &g, CallArgs &a) {
  const Val &bp = a.pos[0];
  if (optional_arg(a, 1, "mask") || optional_arg(a, 2, "other"))
    g.fail(
        "tl.load of a block pointer takes no mask or other; use boundary_check and padding_option");
  const size_t rank = bp.elems[kBlockShape].elems.size();
  auto [ptrs, mask] = block_access(g, bp.elems[kBase].v, bp.elems[kShape], bp.elems[kStrides],
                                   bp.elems[kOffsets], bp.elems[kBlockShape],
                                   boundary_dims(g, optional_arg(a, 3, "boundary_check"), rank));
  return masked_load(
      g, ptrs, mask,
      padding(g, optional_arg(a, 4, "padding_option"), Type::scalar(ptrs->type.elem)));
}

Val store_block_ptr(IrGen &g, CallArgs &a) {
  const Val &bp = a.pos[0];
  if (optional_arg(a, 2, "mask"))
    g.fail("tl.store to a block pointer takes no mask; use boundary_check");
  const size_t rank = bp.elems[kBlockShape].elems.size();
  auto [ptrs, mask] = block_access(g, bp.elems[kBase].v, bp.elems[kShape], bp.elems[kStrides],
                                   bp.elems[kOffsets], bp.elems[kBlockShape],
                                   boundary_dims(g, optional_arg(a, 3, "boundary_check"), rank));
  return masked_store(g, ptrs, mask, required(g, a, 1, "value", "tl.store"));
}

Val tagged_tuple_attribute(IrGen &g, const Val &base, const std::string &attr) {
  if (base.name == kDescriptor) {
    if (attr == "load" || attr == "store")
      return Val::method(
          attr == "load" ? "tl.load_tensor_descriptor" : "tl.store_tensor_descriptor", base);
    if (attr == "block_shape")
      return base.elems[kDescBlockShape];
    if (attr == "shape")
      return base.elems[kDescShape];
    if (attr == "strides")
      return base.elems[kDescStrides];
    if (attr == "dtype")
      return Val::dtype(Type::scalar(base.elems[kDescBase].v->type.elem));
  }
  g.fail("a " + std::string(base.name == kDescriptor ? "tensor descriptor" : "block pointer") +
         " has no attribute '" + attr + "' in kiln");
}

const HandlerTable &block_ptr_handlers() {
  static const HandlerTable table = {
      {"tl.make_block_ptr", tl_make_block_ptr},
      {"tl.advance", tl_advance},
      {"tl.make_tensor_descriptor", tl_make_tensor_descriptor},
      {"tl.load_tensor_descriptor", tl_load_tensor_descriptor},
      {"tl.store_tensor_descriptor", tl_store_tensor_descriptor},
  };
  return table;
}

} // namespace kiln::frontend
