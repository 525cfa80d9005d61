// Appends ops to a block of a Function: the IR generator's pen.
#pragma once

#include <initializer_list>

#include "compiler/ir/ir.hpp"

namespace kiln::ir {

class Builder {
public:
  explicit Builder(Function &f) : fn_(&f), block_(&f.body) {}

  Function &function() { return *fn_; }
  Block *block() const { return block_; }
  void set_block(Block *b) { block_ = b; }
  void set_loc(frontend::Loc l) { loc_ = l; }
  frontend::Loc loc() const { return loc_; }

  /// A new op at the end of the current block with these operands and results.
  Op *create(OpKind kind, std::initializer_list<Value *> operands,
             std::initializer_list<Type> results, uint8_t sub = 0);
  Op *create(OpKind kind, const std::vector<Value *> &operands,
             const std::vector<Type> &results, uint8_t sub = 0);

  Value *constant_int(Type t, int64_t v);
  Value *constant_float(Type t, double v);

private:
  Function *fn_;
  Block *block_;
  frontend::Loc loc_;
};

} // namespace kiln::ir
