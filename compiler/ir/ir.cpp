#include "compiler/ir/ir.hpp"

#include <algorithm>

namespace kiln::ir {

Value *Function::new_value(Type t, Op *def) {
  Value &v = values.emplace_back();
  v.type = t;
  v.def = def;
  v.id = static_cast<uint32_t>(values.size() - 1);
  return &v;
}

Op *Function::new_op(OpKind kind, frontend::Loc loc) {
  Op &op = ops.emplace_back();
  op.kind = kind;
  op.loc = loc;
  return &op;
}

Block *Function::new_block() { return &blocks.emplace_back(); }

namespace {

const char *binary_name(BinaryOp b) {
  static const char *names[] = {"add", "sub",    "mul", "div",    "idiv",    "rem",
                                "and", "or",     "xor", "shl",    "shr",     "max",
                                "min", "umulhi", "pow", "div_rn", "max_nan", "min_nan"};
  return names[static_cast<int>(b)];
}
const char *compare_name(ComparePred p) {
  static const char *names[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  return names[static_cast<int>(p)];
}
const char *unary_name(UnaryOp u) {
  static const char *names[] = {"neg", "not",  "abs",  "exp",   "exp2", "log",  "log2",
                                "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "erf"};
  return names[static_cast<int>(u)];
}
const char *atomic_name(AtomicOp a) {
  static const char *names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return names[static_cast<int>(a)];
}
const char *reduce_name(ReduceOp r) {
  static const char *names[] = {"sum", "max", "min", "prod", "argmax", "argmin", "xor", "and", "or"};
  return names[static_cast<int>(r)];
}

} // namespace

void replace_uses(Block &b, const Value *from, Value *to) {
  for (Op *op : b.ops) {
    std::replace(op->operands.begin(), op->operands.end(), const_cast<Value *>(from), to);
    for (Block *r : op->regions)
      replace_uses(*r, from, to);
  }
}

const char *op_name(const Op &op) {
  switch (op.kind) {
  case OpKind::Constant: return "constant";
  case OpKind::Splat: return "splat";
  case OpKind::Arange: return "arange";
  case OpKind::ProgramId: return "program_id";
  case OpKind::NumPrograms: return "num_programs";
  case OpKind::Binary: return binary_name(static_cast<BinaryOp>(op.sub));
  case OpKind::Compare: return compare_name(static_cast<ComparePred>(op.sub));
  case OpKind::Unary: return unary_name(static_cast<UnaryOp>(op.sub));
  case OpKind::Select: return "select";
  case OpKind::Fma: return "fma";
  case OpKind::Cast: return "cast";
  case OpKind::Bitcast: return "bitcast";
  case OpKind::AddPtr: return "addptr";
  case OpKind::Math: return math_fn_info(static_cast<MathFn>(op.sub)).name;
  case OpKind::Gather: return "gather";
  case OpKind::Broadcast: return "broadcast";
  case OpKind::ExpandDims: return "expand_dims";
  case OpKind::Reshape: return "reshape";
  case OpKind::Trans: return "trans";
  case OpKind::Load: return "load";
  case OpKind::Store: return "store";
  case OpKind::AtomicRMW: return atomic_name(static_cast<AtomicOp>(op.sub));
  case OpKind::AtomicCAS: return "atomic_cas";
  case OpKind::Reduce: return reduce_name(static_cast<ReduceOp>(op.sub));
  case OpKind::Scan: return op.sub == 0 ? "cumsum" : "cumprod";
  case OpKind::Dot: return "dot";
  case OpKind::For: return "for";
  case OpKind::If: return "if";
  case OpKind::While: return "while";
  case OpKind::Yield: return "yield";
  case OpKind::Condition: return "condition";
  case OpKind::Call: return "call";
  case OpKind::Return: return "return";
  case OpKind::Assert: return "assert";
  case OpKind::Print: return "print";
  case OpKind::Barrier: return "barrier";
  case OpKind::InlineAsm:
    return "inline_asm";
  }
  return "?";
}

} // namespace kiln::ir
