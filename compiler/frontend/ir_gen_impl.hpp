// Internals of the IR generator, shared by its .cpp files.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/ir_gen.hpp"
#include "compiler/frontend/semantic.hpp"
#include "compiler/ir/builder.hpp"

namespace kiln::frontend {

/// What a name or an expression stands for while generating IR: an IR value
/// (a tensor), a compile-time value, or one of the things Python code can
/// name (a dtype, a jit function, a module like `tl`, a builtin, a tuple).
struct Val {
  enum class Kind : uint8_t { Tensor, Const, DType, Function, Namespace, Builtin, Tuple, Method, Slice };
  /// Triton, triton.language, tl.math, Python's math, triton.language.extra
  /// (and its .cuda), libdevice (tl.extra.libdevice, tl.extra.cuda.libdevice),
  /// and another kernel file imported by this one.
  enum class Ns : uint8_t { Triton, Language, LanguageMath, Math, Extra, Libdevice, Module };

  Kind kind = Kind::Const;
  ir::Value *v = nullptr;
  ConstValue c;
  ir::Type type; ///< Kind::DType: the element type (pointer flag for pointer dtypes)
  const JitFunctionInfo *fn = nullptr;
  Ns ns = Ns::Triton;
  const ModuleInfo *mod = nullptr; ///< Ns::Module: another kernel file imported by this one
  std::string name;       ///< Builtin: "tl.load", "py.range"; Method: "to", "sum"; Tuple: a tag ("tl.block_ptr")
  std::vector<Val> elems; ///< Tuple; Method: elems[0] is the receiver

  static Val tensor(ir::Value *v) {
    Val r;
    r.kind = Kind::Tensor;
    r.v = v;
    return r;
  }
  static Val constant(ConstValue c) {
    if (c.kind == ConstValue::Kind::DType) // a dtype constexpr (`OUT_DTYPE=tl.float16`)
      return dtype(ir::Type::scalar(c.dtype));
    Val r;
    r.kind = Kind::Const;
    r.c = std::move(c);
    return r;
  }
  static Val dtype(ir::Type t) {
    Val r;
    r.kind = Kind::DType;
    r.type = t;
    return r;
  }
  static Val tuple(std::vector<Val> e) {
    Val r;
    r.kind = Kind::Tuple;
    r.elems = std::move(e);
    return r;
  }
  /// `receiver.name` bound for a call: a tensor method ("sum"), or a named
  /// builtin ("dtype.is_fp16", "tl.load_tensor_descriptor").
  static Val method(std::string n, Val receiver) {
    Val r;
    r.kind = Kind::Method;
    r.name = std::move(n);
    r.elems = {std::move(receiver)};
    return r;
  }
  static Val builtin(std::string n) {
    Val r;
    r.kind = Kind::Builtin;
    r.name = std::move(n);
    return r;
  }

  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_const() const { return kind == Kind::Const; }
  bool is_none() const { return kind == Kind::Const && c.kind == ConstValue::Kind::None; }
  /// Same binding: the same IR value or an equal constant.
  bool same_as(const Val &o) const;
};

using Scope = std::map<std::string, Val>;

/// Arguments of a call, read by position or keyword.
struct CallArgs {
  std::vector<Val> pos;
  std::vector<std::pair<std::string, Val>> kw;
  const Expr *expr = nullptr;
  /// The builtin called ("libdevice.float2int_rn"), for handlers that serve a family of names.
  std::string callee;
  /// The builtin's parameters in Triton's order, when kiln knows them: find()
  /// then refuses a read whose position and name disagree with them (a
  /// handler bug that would drop or misread a positional argument).
  const std::vector<const char *> *signature = nullptr;
  /// The index of the signature's "*args" parameter (its size when it has
  /// none): the names after it are keyword-only.
  size_t keyword_only = 0;
  /// The position handlers pass for a keyword-only parameter.
  static constexpr size_t kNoPosition = 99;

  /// The argument at `index` or named `name`; `fallback` when absent (null: required).
  const Val *find(size_t index, const char *name) const;
  /// Where the signature places parameter `name` (kNoPosition when it is
  /// keyword-only), for handlers shared by builtins whose parameters sit at
  /// different positions; a "kiln bug" error when there is no such parameter.
  size_t position(const char *name) const;
};

class IrGen {
public:
  IrGen(const JitFunctionInfo &kernel, const compiler::GlobalValues &globals,
        const compiler::ModuleGlobals *other_globals, const Options &options, ir::Program &program,
        bool gpu_target = false);

  void generate_kernel(const std::vector<compiler::ParamSpec> &params);
  std::map<compiler::GlobalRef, ConstValue> used_globals;

  // ---- shared with the builtins (ir_gen_builtins.cpp) ----
  [[noreturn]] void fail(Loc loc, const std::string &message) const;
  [[noreturn]] void fail(const std::string &message) const { fail(builder().loc(), message); }
  ir::Builder &builder() const { return *builder_; }
  const SourceFile &source() const { return *source_; }
  /// Asserts are compiled in only in debug mode (the option or @jit(debug=True)).
  bool debug() const { return options_.debug || (frame_ && frame_->fn->debug); }
  /// Compiling for a GPU (what only a GPU can run, inline PTX, is refused otherwise).
  bool gpu_target() const { return gpu_target_; }
  Semantic &sem() { return *sem_; }

  /// The IR value of a tensor or number (int -> i32/i64, float -> f32, bool -> i1).
  ir::Value *to_tensor(const Val &v, const char *what);
  Operand to_operand(const Val &v, const char *what);
  /// A compile-time integer (a Const int/bool), or an error naming `what`.
  int64_t const_int(const Val &v, const char *what);
  /// A dtype argument (tl.float32, x.dtype, ...).
  ir::Type const_dtype(const Val &v, const char *what);
  /// A shape: an int or a tuple/list of ints, each a power of two.
  std::vector<int64_t> const_shape(const Val &v, const char *what);

  Val call_builtin(const std::string &name, CallArgs &args);
  /// Calls a jit function value (a combine_fn argument, a constexpr
  /// function) with these arguments, as `fn(*args)` in the kernel would.
  Val call_function(const Val &fn, std::vector<Val> args, Loc loc);

private:
  // statements (ir_gen.cpp)
  /// Runs body[from...]. Among a function's top-level statements (`top`, or
  /// the function's own body), a runtime `if` one of whose branches ends in
  /// `return` (an early exit: `if pid >= n: return`) takes the rest of the
  /// function into its other branch.
  void exec_body(const Body &body, size_t from = 0, bool top = false);
  bool exec_early_exit_if(const Stmt &s);
  void exec(const Stmt &s);
  void assign(const Expr &target, Val value);
  void exec_if(const Stmt &s);
  void exec_runtime_if(const Stmt &s, ir::Value *cond);
  void exec_for(const Stmt &s);
  void exec_static_for(const Stmt &s, const CallArgs &range);
  void exec_runtime_for(const Stmt &s, const CallArgs &range);
  void exec_while(const Stmt &s);
  void exec_return(const Stmt &s);

  // loops and branches: which names a body assigns
  std::vector<std::string> carried_names(const Body &body) const;
  ir::Value *yield_value(const std::string &name, const Val &v, const ir::Type &type);

  /// Loop-carried variables flattened to IR values (ir_gen_carry.cpp): a
  /// tensor or number is one value; a tuple (also a block pointer) is its
  /// tensor leaves, its constant leaves staying fixed.
  struct CarriedVars {
    std::vector<std::string> names;
    std::vector<Val> entry;    ///< each variable's value at loop entry
    std::vector<size_t> first; ///< its first value in `inits`
    std::vector<ir::Value *> inits;
  };
  CarriedVars collect_carried(const std::vector<std::string> &names, const std::string &skip);
  /// Binds each variable to its entry structure with `vals` (one per init) as its tensors.
  void bind_carried(const CarriedVars &c, const std::vector<ir::Value *> &vals);
  /// The variables' current values, flattened, checked against the entry types.
  std::vector<ir::Value *> yield_carried(const CarriedVars &c);

  // expressions (ir_gen_expr.cpp)
  Val eval(const Expr &e);
  [[gnu::noinline]] Val eval_call(const Expr &e);
  /// A call's arguments, positional and by keyword, evaluated in order.
  CallArgs eval_args(const Expr &call);
  [[gnu::noinline]] Val eval_compare(const Expr &e);
  [[gnu::noinline]] Val eval_boolop(const Expr &e);
  [[gnu::noinline]] Val eval_ifexp(const Expr &e);
  [[noreturn, gnu::noinline]] void eval_unsupported(const Expr &e);
  Val lookup(const std::string &name, Loc loc);
  /// A module-level name of `mod`, or nullopt when `mod` does not bind it.
  std::optional<Val> module_name(const ModuleInfo &mod, const std::string &name, Loc loc);
  Val attribute(const Val &base, const std::string &attr, Loc loc);
  Val dtype_attribute(const Val &base, const std::string &attr, Loc loc); // ir_gen_lang.cpp
  Val call(const Val &fn, CallArgs &args, Loc loc);
  Val call_jit(const JitFunctionInfo &fn, CallArgs &args, Loc loc);
  Val call_noinline(const JitFunctionInfo &fn, const Scope &bound, Loc loc);
  Val call_inline(const JitFunctionInfo &fn, Scope bound, Loc loc);
  /// A `@tl.constexpr def` (or a plain helper it calls): run on compile-time values.
  Val call_compile_time(const JitFunctionInfo &fn, Scope bound, Loc loc);
  Val binop(Op op, const Val &a, const Val &b, Loc loc);
  Val sequence_binop(Op op, const Val &a, const Val &b, Loc loc);
  Val unaryop(Op op, const Val &a, Loc loc);
  Val compare(Op op, const Val &a, const Val &b, Loc loc);
  Val subscript(const Expr &e);
  Val power(const Val &base, const Val &exp, Loc loc);

  const JitFunctionInfo &kernel_;
  const compiler::GlobalValues &globals_;
  const compiler::ModuleGlobals *other_globals_; ///< may be null
  Options options_;
  ir::Program &program_;
  ir::Builder *builder_ = nullptr;
  std::unique_ptr<Semantic> sem_;
  const SourceFile *source_;
  bool gpu_target_ = false;

  // The current function frame.
  struct Frame {
    const JitFunctionInfo *fn = nullptr;
    Scope scope;
    bool returned = false;
    std::optional<Val> result;
    Loc result_loc;        ///< the return statement that gave `result`
    int runtime_depth = 0; ///< nesting of runtime if/for/while in this frame
    /// The runtime_depth of the function's top-level statements: deeper
    /// inside the branch that took the rest of the body after an early exit.
    int top_depth = 0;
    /// What follows the early exits being generated: (body, next statement),
    /// outermost first.
    std::vector<std::pair<const Body *, size_t>> rest;
    /// Names assigned only inside a runtime if branch or loop body, which do
    /// not exist after it (as in Triton): where, for "name is not defined".
    std::map<std::string, std::string> scoped_out;
  };
  /// Records the names bound in `inner` (the scope at the end of a loop
  /// body) that the current scope lacks, with `why`: the rest of the
  /// "name is not defined" sentence that explains where they went.
  void note_scoped_out(const Scope &inner, const std::string &why);
  Frame *frame_ = nullptr;
  int call_depth_ = 0;
  /// >0 while a compile-time function (`@tl.constexpr def`) runs: then the
  /// module's plain helpers are callable too, as in Python.
  int compile_time_depth_ = 0;
  /// Iterations of tl.static_range unrolled so far in this kernel, over all
  /// loops: nested loops multiply, so a per-loop cap alone lets 200^3
  /// copies of a body through (minutes and gigabytes, then a crash).
  int64_t unrolled_ = 0;
  std::map<std::string, ir::Function *> device_functions_;
};

/// An attribute of a tagged tuple: desc.load, desc.block_shape (ir_gen_block_ptr.cpp).
Val tagged_tuple_attribute(IrGen &g, const Val &base, const std::string &attr);

/// A tensor descriptor passed in as a kernel argument, from its parts (the
/// layout of compiler::ParamSpec::is_descriptor): the same value
/// tl.make_tensor_descriptor gives (ir_gen_block_ptr.cpp).
Val host_descriptor(IrGen &g, std::vector<Val> parts);

/// Python's value semantics for operators on two constants.
ConstValue fold_binary(Op op, const ConstValue &a, const ConstValue &b, const SourceFile &src, Loc loc);

} // namespace kiln::frontend
