// Reading the arguments of builtin calls, shared by the files that
// implement tl.* builtins (ir_gen_builtins.cpp, ir_gen_math.cpp, ...).
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/frontend/ir_gen_impl.hpp"

namespace kiln::frontend {

/// A builtin: its call arguments to its value.
using Handler = Val (*)(IrGen &, CallArgs &);
using HandlerTable = std::unordered_map<std::string, Handler>;

/// The argument at position `i` or keyword `name`; an error naming `fn` when absent.
const Val &required(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn);
/// The argument, or null when absent or None.
const Val *optional_arg(CallArgs &a, size_t i, const char *name);
ir::Value *tensor_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn);
Operand operand_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn);
/// The `axis` argument normalized into [0, rank); `*is_none` when absent or None (if allowed).
int axis_arg(IrGen &g, CallArgs &a, size_t i, const char *fn, int rank, bool allow_none,
             bool *is_none);
bool bool_kwarg(IrGen &g, CallArgs &a, size_t i, const char *name, bool dflt);
/// A (scalar or splatted) constant of `t` from a Python number, or `v` converted to `t`.
ir::Value *constant_of(IrGen &g, const Val &v, const ir::Type &t, const char *what);
/// The expression of argument `i` / `name` of a call, or null (a method's
/// receiver, an argument that was not given).
const Expr *arg_expr(const CallArgs &a, size_t i, const char *name);
/// A compile-time integer argument. When a runtime variable is passed
/// instead, says which one and how to make it a constexpr, at the argument.
int64_t const_int_arg(IrGen &g, CallArgs &a, size_t i, const char *name, const char *fn);

/// A call of the builtin `name` (e.g. "tl.max") with these arguments, for
/// builtins built from others.
Val call_builtin_with(IrGen &g, const char *name, std::vector<Val> pos,
                      std::vector<std::pair<std::string, Val>> kw = {});
/// A Python float constant.
inline Val py_number(double v) {
  return Val::constant(ConstValue::of_float(v));
}

/// Gather (ir_gen_scan.cpp): element i of `index`'s shape reads `src` at
/// i with i[axis] = index[i].
ir::Value *gather_along(IrGen &g, ir::Value *src, ir::Value *index, int axis);
/// An i32 block of `shape` whose elements are their index along `axis`.
ir::Value *axis_index(IrGen &g, const ir::Type &shape, int axis);
/// `x` reversed along `axis`.
ir::Value *flip_along(IrGen &g, ir::Value *x, int axis);

/// The builtins of the other files, merged into the one table.
const HandlerTable &math_handlers();      // ir_gen_math.cpp
const HandlerTable &random_handlers();    // ir_gen_random.cpp
const HandlerTable &scan_handlers();      // ir_gen_scan.cpp
const HandlerTable &lang_handlers();      // ir_gen_lang.cpp
const HandlerTable &block_ptr_handlers(); // ir_gen_block_ptr.cpp
const HandlerTable &inline_asm_handlers(); // ir_gen_inline_asm.cpp
const HandlerTable &dot_scaled_handlers(); // ir_gen_dot_scaled.cpp

/// Block pointers and tensor descriptors (ir_gen_block_ptr.cpp).
bool is_block_ptr(const Val &v);
/// tl.load / tl.store whose pointer (pos[0]) is a block pointer.
Val load_block_ptr(IrGen &g, CallArgs &a);
Val store_block_ptr(IrGen &g, CallArgs &a);

} // namespace kiln::frontend
