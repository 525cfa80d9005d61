// The typing rules of the kernel language over IR values: promotion,
// broadcasting, casts, and the typed construction of elementwise ops.
// Follows Triton's semantic.py so that a kernel means the same in both.
#pragma once

#include <string>

#include "compiler/frontend/ast.hpp"
#include "compiler/ir/builder.hpp"

namespace kiln::frontend {

/// An operand of a binary op: an IR value, and whether it came from a Python
/// scalar literal / constexpr (which does not take part in promotion when it
/// is of a lower or equal kind than the tensor's, as in Triton).
struct Operand {
  ir::Value *value;
  bool is_scalar_literal = false;
};

class Semantic {
public:
  Semantic(ir::Builder &b, const SourceFile &src) : b_(b), src_(&src) {}

  ir::Builder &builder() { return b_; }
  /// The file whose code is being generated, for the location of errors: a
  /// jit function inlined from another module (a constexpr argument) is
  /// reported in its own file.
  void set_source(const SourceFile &src) { src_ = &src; }
  [[noreturn]] void fail(const std::string &message) const;

  /// Numeric conversion of each element to `elem` (rank ignored); a no-op if equal.
  ir::Value *cast(ir::Value *v, ir::Type elem);
  ir::Value *bitcast(ir::Value *v, ir::Type elem);
  /// A block of `shape` from a scalar (splat) or a block (broadcast).
  ir::Value *broadcast_to(ir::Value *v, const ir::Type &shape);
  /// numpy broadcasting of two operands to their common shape.
  void broadcast_pair(ir::Value *&a, ir::Value *&b);
  ir::Type broadcast_shapes(const ir::Type &a, const ir::Type &b);

  /// Triton's computation type of a binary op.
  ir::Type computation_type(const Operand &a, const Operand &b, bool div_or_mod);

  /// `a op b` for the Python binary operators on tensors.
  ir::Value *binary(Op op, Operand a, Operand b);
  ir::Value *compare(Op op, Operand a, Operand b);
  ir::Value *negate(ir::Value *v);
  ir::Value *invert(ir::Value *v);
  ir::Value *logical_not(ir::Value *v);
  /// Converts a condition to i1 (`x != 0` for numbers).
  ir::Value *to_bool(ir::Value *v);

  ir::Value *where(ir::Value *cond, Operand a, Operand b);
  ir::Value *minmax(ir::BinaryOp which, Operand a, Operand b);
  ir::Value *unary_math(ir::UnaryOp op, ir::Value *v);

  ir::Value *splat(ir::Value *scalar, const ir::Type &shape);
  ir::Value *expand_dims(ir::Value *v, int axis);
  ir::Value *reshape(ir::Value *v, const std::vector<int64_t> &shape);
  ir::Value *trans(ir::Value *v, const std::vector<int64_t> &perm);

  ir::Value *elementwise(ir::OpKind kind, uint8_t sub, std::vector<ir::Value *> operands,
                         ir::Type result);

private:
  ir::Builder &b_;
  const SourceFile *src_;
};

/// Explicit mantissa bits of a float dtype (Triton's fp_mantissa_width).
int fp_mantissa_bits(DType t);

/// The integer type C's usual arithmetic conversions give (Triton's integer_promote_impl).
ir::Type integer_promote(const ir::Type &a, const ir::Type &b);

} // namespace kiln::frontend
