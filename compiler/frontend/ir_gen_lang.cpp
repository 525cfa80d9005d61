// The Python-level parts of the language on types and values: dtype
// attributes and methods (tl.float16.is_floating(), x.dtype.int_bitwidth,
// p.type.element_ty), isinstance, tl.pointer_type, tl.assume, tl.to_tensor,
// and tl.device_print.
// Their meaning follows Triton's language/core.py (class dtype).
#include <string>

#include "compiler/frontend/ir_gen_args.hpp"

namespace kiln::frontend {

using ir::Type;

namespace {

/// Triton's dtype.name: "int32", "uint8", "fp16", "bf16", "fp32", "int1".
std::string triton_name(const Type &t) {
  if (t.pointer)
    return "pointer<" + triton_name(Type::scalar(t.elem)) + ">";
  switch (t.elem) {
  case DType::f16:
    return "fp16";
  case DType::bf16:
    return "bf16";
  case DType::f32:
    return "fp32";
  case DType::f64:
    return "fp64";
  default:
    if (is_fp8(t.elem))
      return std::string(dtype_name(t.elem));
    break;
  }
  return (is_unsigned_int(t.elem) ? "uint" : "int") + std::to_string(ir::bit_width(t));
}

/// The receiver of a dtype method.
Type receiver(IrGen &g, CallArgs &a) {
  if (a.pos.empty() || a.pos[0].kind != Val::Kind::DType)
    g.fail("a dtype method needs a dtype");
  return a.pos[0].type;
}

Val yes(bool b) {
  return Val::constant(ConstValue::of_bool(b));
}

template <DType D> Val is_exactly(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.pointer && !t.is_block() && t.elem == D);
}

Val is_floating(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && t.is_float());
}
Val is_int(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && t.is_int());
}
Val is_int_signed(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && t.is_signed());
}
Val is_int_unsigned(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && !t.pointer && is_unsigned_int(t.elem));
}
Val is_ptr(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && t.pointer);
}
Val is_block(IrGen &g, CallArgs &a) {
  return yes(receiver(g, a).is_block());
}
Val is_false(IrGen &g, CallArgs &a) {
  receiver(g, a);
  return yes(false); // void, const pointers: none in kiln
}
Val is_any_fp8(IrGen &g, CallArgs &a) {
  const Type t = receiver(g, a);
  return yes(!t.is_block() && !t.pointer && is_fp8(t.elem));
}

/// isinstance(x, cls) for the classes kernels test: tl.tensor,
/// tl.constexpr, tl.dtype, tl.tensor_descriptor, tuple, int, float, bool, str
/// (or a tuple of them).
bool instance_of(IrGen &g, const Val &x, const Val &cls) {
  if (cls.kind == Val::Kind::Tuple) {
    for (const Val &c : cls.elems)
      if (instance_of(g, x, c))
        return true;
    return false;
  }
  if (cls.kind != Val::Kind::Builtin)
    g.fail("isinstance's second argument must be a class such as tl.tensor, tl.constexpr or tuple");
  const std::string &n = cls.name;
  const bool num = x.is_const();
  const ConstValue::Kind k = x.c.kind;
  if (n == "tl.tensor") // a block pointer is a tensor of pointers in Triton
    return x.is_tensor() || (x.kind == Val::Kind::Tuple && x.name == "tl.block_ptr");
  if (n == "tl.constexpr")
    return x.is_const() || x.kind == Val::Kind::DType;
  if (n == "tl.dtype")
    return x.kind == Val::Kind::DType;
  if (n == "tl.pointer_type")
    return x.kind == Val::Kind::DType && x.type.pointer && !x.type.is_block();
  if (n == "tl.block_type")
    return x.kind == Val::Kind::DType && x.type.is_block();
  // Descriptors and block pointers are named tuples: test the name first.
  if (n == "tl.tensor_descriptor" || n == "tl.tensor_descriptor_base")
    return x.kind == Val::Kind::Tuple && x.name == "tl.tensor_descriptor";
  if (n == "tl.tuple" || n == "py.tuple" || n == "py.list")
    return x.kind == Val::Kind::Tuple && x.name.empty();
  if (n == "py.int")
    return num && (k == ConstValue::Kind::Int || k == ConstValue::Kind::Bool);
  if (n == "py.float")
    return num && k == ConstValue::Kind::Float;
  if (n == "py.bool")
    return num && k == ConstValue::Kind::Bool;
  if (n == "py.str")
    return num && k == ConstValue::Kind::Str;
  g.fail("isinstance with " + (n.rfind("py.", 0) == 0 ? n.substr(3) : n) +
         " is not supported by kiln yet");
}

/// triton.language.standard._log2(n): floor(log2(n)) of a constexpr, which
/// FlagGems' bitonic sorts import directly.
Val tl_log2_const(IrGen &g, CallArgs &a) {
  int64_t n = g.const_int(required(g, a, 0, "i", "_log2"), "_log2's argument");
  int64_t log2 = 0;
  while (n > 1) {
    n >>= 1;
    ++log2;
  }
  return Val::constant(ConstValue::of_int(log2));
}

/// tl.core.get_int_dtype(bitwidth, signed), which constexpr functions call.
Val tl_get_int_dtype(IrGen &g, CallArgs &a) {
  const int64_t bits =
      g.const_int(required(g, a, 0, "bitwidth", "get_int_dtype"), "get_int_dtype's bitwidth");
  const Val &s = required(g, a, 1, "signed", "get_int_dtype");
  if (!s.is_const())
    g.fail("get_int_dtype's signed must be a compile-time bool");
  const bool is_signed = s.c.truthy();
  switch (bits) {
  case 1:
    return Val::dtype(Type::scalar(DType::i1));
  case 8:
    return Val::dtype(Type::scalar(is_signed ? DType::i8 : DType::u8));
  case 16:
    return Val::dtype(Type::scalar(is_signed ? DType::i16 : DType::u16));
  case 32:
    return Val::dtype(Type::scalar(is_signed ? DType::i32 : DType::u32));
  case 64:
    return Val::dtype(Type::scalar(is_signed ? DType::i64 : DType::u64));
  default:
    g.fail("get_int_dtype: no integer dtype has " + std::to_string(bits) + " bits");
  }
}

Val py_isinstance(IrGen &g, CallArgs &a) {
  return yes(instance_of(g, required(g, a, 0, "obj", "isinstance"),
                         required(g, a, 1, "class_or_tuple", "isinstance")));
}

// tl.pointer_type(element_ty, address_space=1, const=False)
Val tl_pointer_type(IrGen &g, CallArgs &a) {
  const Type e = g.const_dtype(required(g, a, 0, "element_ty", "tl.pointer_type"),
                               "tl.pointer_type's element_ty");
  if (e.pointer)
    g.fail("pointers to pointers are not supported by kiln yet");
  if (const Val *as = optional_arg(a, 1, "address_space");
      as && g.const_int(*as, "the address space") != 1)
    g.fail("tl.pointer_type supports global memory (address_space=1) only");
  return Val::dtype(Type::ptr(e.elem));
}

// tl.assume(cond): a hint; kiln's optimizer does not use it yet, but the
// condition is evaluated (and a false constant is the kernel's bug).
/// Programmatic dependent launch (tl.extra.cuda.gdc_wait /
/// gdc_launch_dependents): kiln launches without the PDL attribute, so a grid
/// starts only after the one before it has finished and both are no-ops.
Val gdc_noop(IrGen &, CallArgs &) { return Val::constant(ConstValue::none()); }

Val tl_assume(IrGen &g, CallArgs &a) {
  const Val &c = required(g, a, 0, "cond", "tl.assume");
  if (c.is_const() && !c.c.truthy())
    g.fail("tl.assume's condition is false at compile time");
  return Val::constant(ConstValue::none());
}

Val tl_to_tensor(IrGen &g, CallArgs &a) {
  return Val::tensor(tensor_arg(g, a, 0, "x", "tl.to_tensor"));
}

// tl.device_print(prefix, *args, hex=False): a line per element at run time.
Val tl_device_print(IrGen &g, CallArgs &a) {
  const Val &prefix = required(g, a, 0, "prefix", "tl.device_print");
  if (!prefix.is_const() || prefix.c.kind != ConstValue::Kind::Str)
    g.fail("tl.device_print's prefix must be a string");
  std::vector<ir::Value *> vals;
  for (size_t i = 1; i < a.pos.size(); ++i)
    vals.push_back(g.to_tensor(a.pos[i], "a tl.device_print argument"));
  ir::Op *op = g.builder().create(ir::OpKind::Print, vals, {});
  op->str = prefix.c.s;
  op->i = bool_kwarg(g, a, 99, "hex", false);
  return Val::constant(ConstValue::none());
}

} // namespace

Val IrGen::dtype_attribute(const Val &base, const std::string &attr, Loc loc) {
  const Type &t = base.type;
  const Type elem = t.element();
  if (attr == "element_ty") {
    if (t.is_block()) // a block type's element: x.type.element_ty
      return Val::dtype(elem);
    if (!t.pointer)
      fail(loc, "element_ty is only defined for pointer and block types, not " + t.str());
    return Val::dtype(Type::scalar(t.elem));
  }
  if (attr == "scalar")
    return Val::dtype(elem);
  if (attr == "value") // a dtype constexpr's value is the dtype (`dtype.value`)
    return base;
  if (attr == "primitive_bitwidth")
    return Val::constant(ConstValue::of_int(ir::bit_width(elem)));
  if (attr == "int_bitwidth") {
    if (!elem.is_int())
      fail(loc, "int_bitwidth is only defined for integer dtypes, not " + elem.str());
    return Val::constant(ConstValue::of_int(ir::bit_width(elem)));
  }
  if (attr == "itemsize")
    return Val::constant(
        ConstValue::of_int(elem.pointer ? 8 : static_cast<int64_t>(dtype_size(elem.elem))));
  if (attr == "fp_mantissa_width") {
    if (!elem.is_float())
      fail(loc, "fp_mantissa_width is only defined for floating-point dtypes, not " + elem.str());
    return Val::constant(ConstValue::of_int(fp_mantissa_bits(elem.elem)));
  }
  if (attr == "name")
    return Val::constant(ConstValue::of_str(triton_name(elem)));
  if (attr == "shape" && t.is_block()) {
    std::vector<Val> dims;
    for (int d = 0; d < t.rank; ++d)
      dims.push_back(Val::constant(ConstValue::of_int(t.shape[d])));
    return Val::tuple(std::move(dims));
  }
  if (attr.rfind("is_", 0) == 0)
    return Val::method("dtype." + attr, base);
  fail(loc, "dtype has no attribute '" + attr + "'");
}

const HandlerTable &lang_handlers() {
  static const HandlerTable table = {
      {"dtype.is_int1", is_exactly<DType::i1>},
      {"dtype.is_bool", is_exactly<DType::i1>},
      {"dtype.is_int8", is_exactly<DType::i8>},
      {"dtype.is_int16", is_exactly<DType::i16>},
      {"dtype.is_int32", is_exactly<DType::i32>},
      {"dtype.is_int64", is_exactly<DType::i64>},
      {"dtype.is_uint8", is_exactly<DType::u8>},
      {"dtype.is_uint16", is_exactly<DType::u16>},
      {"dtype.is_uint32", is_exactly<DType::u32>},
      {"dtype.is_uint64", is_exactly<DType::u64>},
      {"dtype.is_fp16", is_exactly<DType::f16>},
      {"dtype.is_bf16", is_exactly<DType::bf16>},
      {"dtype.is_fp32", is_exactly<DType::f32>},
      {"dtype.is_fp64", is_exactly<DType::f64>},
      {"dtype.is_floating", is_floating},
      {"dtype.is_standard_floating", is_floating},
      {"dtype.is_int", is_int},
      {"dtype.is_int_signed", is_int_signed},
      {"dtype.is_int_unsigned", is_int_unsigned},
      {"dtype.is_ptr", is_ptr},
      {"dtype.is_block", is_block},
      {"dtype.is_fp8", is_any_fp8},
      {"dtype.is_fp8e4nv", is_exactly<DType::f8e4nv>},
      {"dtype.is_fp8e4b8", is_exactly<DType::f8e4b8>},
      {"dtype.is_fp8e4b15", is_exactly<DType::f8e4b15>},
      {"dtype.is_fp8e5", is_exactly<DType::f8e5>},
      {"dtype.is_fp8e5b16", is_exactly<DType::f8e5b16>},
      {"dtype.is_void", is_false},
      {"dtype.is_const", is_false},
      {"py.isinstance", py_isinstance},
      {"tl._log2", tl_log2_const},
      {"tl.get_int_dtype", tl_get_int_dtype},
      {"tl.pointer_type", tl_pointer_type},
      {"tl.assume", tl_assume},
      {"tl.to_tensor", tl_to_tensor},
      {"tl.device_print", tl_device_print},
      {"tl.extra.gdc_wait", gdc_noop},
      {"tl.extra.gdc_launch_dependents", gdc_noop},
  };
  return table;
}

} // namespace kiln::frontend
