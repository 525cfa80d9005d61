#include "compiler/ir/builder.hpp"

namespace kiln::ir {

Op *Builder::create(OpKind kind, const std::vector<Value *> &operands,
                    const std::vector<Type> &results, uint8_t sub) {
  Op *op = fn_->new_op(kind, loc_);
  op->sub = sub;
  op->operands = operands;
  for (const Type &t : results)
    op->results.push_back(fn_->new_value(t, op));
  block_->ops.push_back(op);
  return op;
}

Op *Builder::create(OpKind kind, std::initializer_list<Value *> operands,
                    std::initializer_list<Type> results, uint8_t sub) {
  return create(kind, std::vector<Value *>(operands), std::vector<Type>(results), sub);
}

Value *Builder::constant_int(Type t, int64_t v) {
  Op *op = create(OpKind::Constant, {}, {t});
  op->i = v;
  return op->result();
}

Value *Builder::constant_float(Type t, double v) {
  Op *op = create(OpKind::Constant, {}, {t});
  op->f = v;
  return op->result();
}

} // namespace kiln::ir
