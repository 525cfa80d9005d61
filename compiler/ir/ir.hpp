// The tile IR: typed SSA values, one op kind each, structured control flow.
//
// The IR generator builds it from the syntax tree and a specialization; every
// backend lowers it. Values are fully specialized: every shape is static and
// constexpr control flow is gone. Regions hold one block whose arguments are
// the region's inputs (a loop's induction variable and carried values) and
// whose last op is a terminator (Yield, Condition, Return).
//
// A Function owns its values and ops (stable addresses in deques); nothing
// here is shared between threads.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/source.hpp"
#include "compiler/ir/math_fn.hpp"
#include "compiler/ir/type.hpp"

namespace kiln::ir {

struct Op;
struct Function;

/// What specialization tells about a value (Triton's `D` attribute and
/// values fixed to 1); the axis-info analysis starts from these.
struct Facts {
  bool divisible16 = false;
  /// tl.multiple_of / tl.max_contiguous / tl.max_constancy on this value:
  /// the user's word per dim (0: none), which the axis info takes when it
  /// knows less. A value's facts hold wherever it is used (SSA).
  std::array<int32_t, Type::kMaxRank> multiple_of{}, max_contiguous{}, max_constancy{};
};

struct Value {
  Type type;
  Op *def = nullptr; ///< null for block arguments
  uint32_t id = 0;
  Facts facts;
};

enum class OpKind : uint8_t {
  // creation
  Constant,    // attrs: i (ints, bools) or f (floats); result scalar or splatted block
  Splat,       // scalar -> block of result type
  Arange,      // attrs: i = start; result <n x i32>
  ProgramId,   // attrs: axis; result i32
  NumPrograms, // attrs: axis; result i32
  // elementwise (operands broadcast already: all have the result's shape)
  Binary,  // sub = BinaryOp
  Compare, // sub = ComparePred; result element i1
  Unary,   // sub = UnaryOp
  Select,  // cond, a, b
  Fma,     // a * b + c
  Cast,    // numeric conversion to the result element type
  Bitcast, // same-width reinterpretation
  AddPtr,  // pointer + integer offset (in elements)
  Math,    // sub = MathFn: a libdevice / tl.math function (compiler/ir/math_fn.hpp)
  Gather,  // src, index; attrs: axis. result[i] = src[i with i[axis] = index[i]];
           // the index block has src's rank and the result's shape
  // shape
  Broadcast,  // result shape; operand dims of 1 stretch (same rank)
  ExpandDims, // attrs: axis
  Reshape,    // result shape, same numel, row-major order
  Trans,      // attrs: ints = permutation
  // memory
  Load,      // ptr [, mask [, other]]; attrs: i = 1 if has mask, f unused
  Store,     // ptr, value [, mask]
  AtomicRMW, // sub = AtomicOp; ptr, value [, mask]; result old values
  AtomicCAS, // ptr, cmp, value; result old values
  // collective
  Reduce, // sub = ReduceOp; attrs: axis; result drops the axis
  Scan,   // sub = ScanOp; attrs: axis; same shape
  Dot,    // a <MxK>, b <KxN>, acc <MxN>
  // control flow
  For,       // lower, upper, step, inits...; region 0: (iv, carried...) -> Yield
  If,        // cond; region 0 then, region 1 else; each -> Yield(results)
  While,     // inits...; region 0 (before): (carried...) -> Condition(cond, values...);
             //          region 1 (after): (values...) -> Yield(carried...)
  Yield,     // terminator: the region's results
  Condition, // terminator of While's before-region
  Call,      // callee; args -> results
  Return,    // terminator of a function
  Assert,    // cond; attrs: str = message (checked only in debug builds)
  Print,     // values...; attrs: str = prefix, i = 1 for hex (tl.device_print)
  Barrier,   // tl.debug_barrier
  InlineAsm, // tl.inline_asm_elementwise: operands broadcast to the results' shape;
             // str = PTX, aux = LLVM constraints, i = pack, sub = 1 when pure;
             // one result per dtype (GPU only)
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,  // float division
  IDiv, // integer division truncating toward zero (C)
  Rem,  // integer: C remainder (sign of dividend); float: fmod
  And,
  Or,
  Xor,
  Shl,
  Shr, // Shr is arithmetic for signed, logical for unsigned
  Max,
  Min, // integer by signedness; float: maxnum/minnum semantics of Triton
  UMulHi,
  Pow,   // float only
  DivRn, // float division rounded to nearest (IEEE), where `/` may be approximate
  MaxNan,
  MinNan, // float: a NaN operand gives NaN (propagate_nan=tl.PropagateNan.ALL)
};

enum class ComparePred : uint8_t { Lt, Le, Gt, Ge, Eq, Ne };

enum class UnaryOp : uint8_t {
  Neg, Not /*bitwise*/, Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Floor, Ceil, Erf,
};

enum class AtomicOp : uint8_t { Add, Max, Min, And, Or, Xor, Xchg };
enum class ReduceOp : uint8_t { Sum, Max, Min, Prod, ArgMax, ArgMin, Xor, And, Or };
enum class ScanOp : uint8_t { Sum, Prod };

struct Block {
  std::vector<Value *> args;
  std::vector<Op *> ops;
};

struct Op {
  OpKind kind;
  uint8_t sub = 0; ///< BinaryOp, ComparePred, UnaryOp, MathFn, AtomicOp, ReduceOp or ScanOp
  frontend::Loc loc;
  std::vector<Value *> operands;
  std::vector<Value *> results;
  std::vector<Block *> regions; ///< owned by the Function
  int64_t i = 0;
  double f = 0;
  int axis = 0;
  std::vector<int64_t> ints;
  std::string str;
  std::string aux;
  Function *callee = nullptr;

  Value *result() const { return results.at(0); }
};

struct Function {
  std::string name;
  bool is_kernel = false;
  std::vector<std::string> param_names; ///< one per entry-block argument
  std::vector<Type> result_types;       ///< for device functions
  Block body;                           ///< args are the runtime parameters

  std::deque<Value> values;
  std::deque<Op> ops;
  std::deque<Block> blocks;

  Value *new_value(Type t, Op *def);
  Op *new_op(OpKind kind, frontend::Loc loc);
  Block *new_block();
};

/// A kernel and the device functions (noinline) it calls.
struct Program {
  std::vector<std::unique_ptr<Function>> functions; ///< functions[0] is the kernel
  Function &kernel() { return *functions.front(); }
  const Function &kernel() const { return *functions.front(); }
};

const char *op_name(const Op &op);

/// Every use of `from` in `b` and the regions nested in it becomes `to`.
void replace_uses(Block &b, const Value *from, Value *to);

/// What a later pass adds to the printed IR (the GPU's layouts and
/// conversions): text after a result's type, and lines before an op.
struct PrintNotes {
  std::function<std::string(const Value &)> after_value;
  std::function<std::string(const Op &)> before_op;
};

/// The IR as text, one op a line; what `kiln compile --emit ir` prints.
std::string print(const Program &p, const PrintNotes *notes = nullptr);

} // namespace kiln::ir
