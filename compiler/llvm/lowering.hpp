// The lowering of the tile IR to LLVM IR (see lower_tile_ir.hpp for what
// it makes of a program): one class, its methods spread over files by
// family, shared by the CPU and NVPTX targets:
//   llvm/lowering.cpp        values, lazy recomputation, pure ops, functions
//   llvm/lower_math.cpp      scalar arithmetic and the one elementwise-math
//                            entry point (unary/binary/tl.math), per element;
//                            the target's math library through
//                            llvm/math_library.hpp
//   llvm/lower_memory.cpp    loads, stores, atomics, asserts, device_print
//                            (llvm/lower_print.hpp), fp8 memory forms
//                            (llvm/lower_fp8.hpp)
//   llvm/lower_gather.cpp    tl.gather and the builtins built on it
//   llvm/lower_inline_asm.cpp tl.inline_asm_elementwise (GPU)
//   llvm/lower_reduce.cpp    reductions and scans
//   llvm/lower_dot.cpp       tl.dot with FMAs (and the choice of tensor cores)
//   llvm/lower_mma.cpp       tl.dot on tensor cores: ldmatrix, mma.sync
//   llvm/lower_wgmma.cpp     tl.dot on sm_90's warpgroup tensor cores: matrix
//                            descriptors, wgmma.mma_async
//   llvm/lower_pipeline.cpp  loads feeding a dot fetched ahead with cp.async
//   llvm/lower_control.cpp   for, while, if, calls
//   gpu/lower_layouts.cpp    the GPU's element distribution: layouts, slots,
//                            conversions through shared memory
// and what differs between targets is a TargetLowering (target_lowering.hpp):
//   nvptx/nvptx_target.cpp   shared memory, barriers, shuffles, predicated and
//                            vector PTX, fast math and libdevice, the kernel
//   cpu/cpu_target.cpp       the CPU's program and grid entry points
// Private to compiler/: it includes LLVM headers.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "compiler/gpu/layout_plan.hpp"
#include "compiler/llvm/lower_tile_ir.hpp"
#include "compiler/llvm/target_lowering.hpp"

namespace kiln::llvmgen::detail {

using ir::BinaryOp;
using ir::OpKind;
using ir::Type;
using ir::UnaryOp;

using Idx = std::array<llvm::Value *, Type::kMaxRank>;

// f16, bf16 and the fp8 types live in registers as float (rounded to their
// precision) and are converted only at memory; LLVM on x86 has no native
// bf16 or fp8 arithmetic and would otherwise call libgcc helpers the JIT
// cannot count on.
inline bool is_half(DType t) {
  return t == DType::f16 || t == DType::bf16 || is_fp8(t);
}

/// A lowered IR value: a scalar SSA value, or a block that is either a
/// row-major buffer (`buf`) or recomputed per element (`lazy`).
struct Lowered {
  llvm::Value *scalar = nullptr;
  llvm::Value *buf = nullptr;
  bool lazy = false;
  std::shared_ptr<const gpu::BitMap>
      map; ///< GPU: which thread and slot holds each element of `buf`
};

/// A block of zeros (tl.zeros, a dot's default accumulator, `other=0.0`).
bool is_zero_splat(const ir::Value *v);

class Lowering {
  // The targets build on the shared helpers (types, rounding, memory forms).
  friend class NvptxTarget;
  friend class CpuTarget;

public:
  Lowering(const ir::Program &p, const Options &o, LoweringTarget target, llvm::LLVMContext &ctx,
           int sm = 0, bool wgmma = false)
      : prog_(p), opts_(o), threads_(32 * o.num_warps), ctx_(ctx),
        mod_(std::make_unique<llvm::Module>(p.kernel().name, ctx)), b_(ctx), sm_(sm) {
    target_ = target == LoweringTarget::Nvptx ? make_nvptx_target(*this) : make_cpu_target(*this);
    distributed_ = target_->distributes_blocks();
    if (distributed_)
      plan_ = std::make_unique<gpu::LayoutPlan>(p, o.num_warps, sm, wgmma);
  }

  LoweringResult run();

private:
  // ---- types ----

  llvm::Type *reg_type(const Type &t);

  /// How an element is laid out in tensor memory.
  llvm::Type *mem_type(DType t);

  // ---- uses (to decide what to materialize) ----

  void count_uses();
  void count_block(const ir::Block &b);

  static bool is_pure(OpKind k);

  /// Per-element cost of recomputing a lazy value (its lazy op tree).
  int cost(const ir::Value *v);

  // ---- control-flow helpers ----

  llvm::BasicBlock *new_bb(const char *name);

  /// for (i = 0; i < n; ++i) body(i), with an i64 counter.
  void loop(int64_t n, const std::function<void(llvm::Value *)> &body);

  void loop_nest(const Type &shape, const std::function<void(const Idx &)> &body,
                 int skip_axis = -1);

  llvm::Value *linear(const Type &shape, const Idx &idx);

  Idx delinear(const Type &shape, llvm::Value *lin);

  /// CPU: a row-major array of the whole block. GPU: this thread's slots
  /// under layout `m` (an array SROA keeps in registers: every index into
  /// it is a constant).
  llvm::Value *alloc_buffer(const Type &t, const gpu::BitMap *m = nullptr);

  /// CPU: element `lin` (row-major) of a buffer. GPU: slot `lin` of this thread.
  llvm::Value *buf_ptr(const Type &t, llvm::Value *buf, llvm::Value *lin);
  llvm::Value *slot_ptr(const Type &t, llvm::Value *buf, int64_t slot);

  /// CPU: `body(idx)` for every element of `shape` (nested loops).
  void for_elements(const Type &shape, const std::function<void(const Idx &)> &body);

  // ---- GPU element distribution (layouts) ----

  using MapPtr = std::shared_ptr<const gpu::BitMap>;
  MapPtr map_for(const gpu::EncodingPtr &e, const Type &t);

  /// GPU: `body(slot, idx)` for each of this thread's slots under `m`
  /// (straight-line code: the thread's elements sit in registers), with the
  /// element context set so that element() finds buffers' matching slots.
  void for_slots(const gpu::BitMap &m, const Type &shape,
                 const std::function<void(int64_t, const Idx &)> &body);

  /// Runs `f` with the element context moved to slot `s` of the current view.
  template <class F> auto at_slot(int64_t s, F &&f) {
    const int64_t saved = slot_;
    slot_ = s;
    auto r = f();
    slot_ = saved;
    return r;
  }

  template <class F> auto with_view(const gpu::BitMap &m, F &&f) {
    const gpu::BitMap *saved = view_;
    view_ = &m;
    auto r = f();
    view_ = saved;
    return r;
  }

  /// The row-major index of this thread's slot `s` under `m`.
  llvm::Value *element_index(const gpu::BitMap &m, int64_t s);

  /// The coordinates of this thread's slot `s` under `m` in `shape`.
  Idx slot_coords(const gpu::BitMap &m, const Type &shape, int64_t s);

  /// The index bits this thread's lane and warp numbers set under `m`;
  /// computed once per layout, in the kernel's prologue.
  llvm::Value *thread_bits(const gpu::BitMap &m);

  /// After a top-level loop: reads the thread id again and computes index
  /// bits afresh from there on, so that none stays live across the loop.
  void refresh_thread_ids();

  /// tid64_, lane64_ and warp64_ from this thread's index `tid` (i32),
  /// at the insertion point.
  void set_thread_ids(llvm::Value *tid);

  /// Ends the last prologue with a branch to the code after it.
  void close_prologue();

  /// True in the one copy of each element under `m` that does side effects;
  /// null when `m` has no copies.
  llvm::Value *owner(const gpu::BitMap &m);

  llvm::Value *and_mask(llvm::Value *a, llvm::Value *b);

  /// A held block read in the current view: the matching slot of its own
  /// buffer, or of the copy prepare() converted it into.
  llvm::Value *read_held(const ir::Value *v, const Lowered &l);

  /// Before a consumer reads `v` through `view`: converts every held block
  /// in v's recomputed tree whose layout the view cannot read in place.
  void prepare(const ir::Value *v, const gpu::BitMap &view);

  void prepare_tree(const ir::Value *v, const gpu::BitMap &view,
                    std::set<std::pair<const ir::Value *, std::string>> &seen);

  /// A layout conversion through shared memory: every thread writes its
  /// slots (to_shared), then reads the slots of `to`.
  Lowered convert(const ir::Value *v, const Lowered &from, const MapPtr &to);

  /// Every thread writes its slots of held block `v` to the block's scratch
  /// shared memory at their row-major index, padded by one chunk of
  /// 2^vbits elements per 32 chunks (so that column accesses spread over
  /// the banks while chunks stay whole and aligned for vector accesses),
  /// between two barriers: then any thread can read any element. Returns
  /// the base.
  llvm::Value *to_shared(const ir::Value *v, const Lowered &from, int vbits = 0);

  /// log2 of the elements one access of a conversion from `from` to `to`
  /// moves: the longer of their runs along the row-major index, up to 16
  /// bytes (the shorter side's accesses stay aligned to their own run); 0
  /// when either side has no such run.
  int shared_vec_bits(const ir::Value *v, const gpu::BitMap &from, const gpu::BitMap &to);

  /// The address of row-major element `lin` in what to_shared wrote.
  llvm::Value *shared_element(llvm::Value *base, llvm::Type *et, llvm::Value *lin, int vbits = 0);

  /// This thread's part of the addresses of its slots under `m` in what
  /// to_shared wrote; shared_slot adds a slot's constant part to it.
  llvm::Value *shared_thread_base(llvm::Value *base, llvm::Type *et, const gpu::BitMap &m,
                                  int vbits);
  llvm::Value *shared_slot(llvm::Value *thread_base, llvm::Type *et, const gpu::BitMap &m,
                           int64_t s, int vbits);

  unsigned type_bytes(llvm::Type *t) const;

  void note_conversion(const ir::Value *v, const gpu::BitMap &from, const gpu::BitMap &to);

  // ---- values ----

  llvm::Value *scalar(const ir::Value *v);

  /// The element of block (or scalar) `v` at `idx` (v's own rank).
  llvm::Value *element(const ir::Value *v, const Idx &idx);

  /// CPU: writes every element of `v` into a fresh or given buffer.
  llvm::Value *materialize(const ir::Value *v, llvm::Value *into = nullptr);

  /// GPU: this thread's elements of `v` under `m` (the plan's layout of v
  /// when null), into a fresh or given buffer.
  Lowered materialize_gpu(const ir::Value *v, MapPtr m = nullptr, llvm::Value *into = nullptr);

  /// A buffer holding `v`: its own if materialized, else a new one.
  llvm::Value *as_buffer(const ir::Value *v);

  llvm::Value *constant(const ir::Op &op);

  // ---- scalar arithmetic (shared by scalars and block elements) ----

  llvm::Value *round_half(llvm::Value *x, DType t);

  /// fp8 code <-> float: the target's instructions, else the shared arithmetic.
  llvm::Value *from_fp8(llvm::Value *code, DType t);
  llvm::Value *to_fp8(llvm::Value *f, DType t);

  llvm::Value *fresult(llvm::Value *x, const Type &t);

  llvm::Value *cast(llvm::Value *x, const Type &from, const Type &to);

  llvm::Value *bitcast(llvm::Value *x, const Type &from, const Type &to);

  llvm::Value *shift(llvm::Value *x, llvm::Value *amt, bool left, bool is_signed);

  llvm::Value *int_divrem(llvm::Value *x, llvm::Value *y, bool is_signed, bool rem);

  /// The target's math library function `name` (C's double name: "erf").
  llvm::Value *library_call(std::string_view name, const std::vector<llvm::Value *> &args);

  llvm::Value *binary(BinaryOp op, llvm::Value *x, llvm::Value *y, const Type &t);

  llvm::Value *compare(ir::ComparePred p, llvm::Value *x, llvm::Value *y, const Type &t);

  llvm::Value *unary(UnaryOp u, llvm::Value *x, const Type &t);

  /// One element of a pure op from its operands' elements.
  llvm::Value *compute(const ir::Op &op, const std::vector<llvm::Value *> &a);

  // ---- memory ----

  llvm::Value *load_elem(llvm::Value *ptr, DType t);

  llvm::Value *to_mem(llvm::Value *v, DType t);

  /// if (cond) { then() } with the result merged by a phi when then() returns a value.
  llvm::Value *guarded(llvm::Value *cond, const std::function<llvm::Value *()> &then,
                       llvm::Value *otherwise);

  /// GPU: how many consecutive slots of `m` move as one vector access
  /// through `ptr` (and `mask`): a run along one dim, contiguous and aligned
  /// in memory by the axis info, one mask value per run, at most 16 bytes.
  int64_t vector_width(const gpu::BitMap &m, const ir::Value *ptr, const ir::Value *mask);
  MapPtr store_map(const ir::Value *ptr, const ir::Value *val, const ir::Value *mask);
  int64_t same_address_slots(const ir::Op &load, const gpu::BitMap &m);
  /// An f32/f16/bf16 atomic add whose old values nobody reads, as vector
  /// reductions (up to 16 bytes an instruction); false (nothing emitted)
  /// where the elements do not pair up or the target has no such reduction.
  bool vector_atomic_add_gpu(const ir::Op &op, const MapPtr &m, llvm::Value *own);

  /// Runs `f(idx)` for every element of `shape`, or once for a scalar.
  void each(const Type &shape, const std::function<void(const Idx &)> &f);

  /// CPU: a failed element records the message in the launch's assert
  /// record (args[n], after the parameters); the driver turns it into an
  /// error after the launch. GPU: not checked yet.
  void lower_assert(const ir::Op &op);

  // ---- GPU collectives ----

  /// Runs `f` in thread 0 and gives its result (of type `t`) to every thread.
  llvm::Value *from_thread0(llvm::Type *t, const std::function<llvm::Value *()> &f);

  /// The identity of a reduction, so that threads without elements add nothing.
  llvm::Value *identity(ir::ReduceOp k, const Type &t);

  /// A value and, for argmin/argmax, its index along the reduced axis.
  struct Partial {
    llvm::Value *v, *i = nullptr;
  };

  Partial combine_partial(ir::ReduceOp k, const Partial &a, const Partial &b, const Type &et);

  /// The packed number of this thread's warp along the warp bits `wbits`.
  llvm::Value *warp_index(const std::vector<int> &wbits);

  /// A reduction along any axis on the GPU, in the input's layout: each
  /// thread combines its own slots, then a butterfly over the lanes that
  /// hold the axis, then, if warps split the axis, shared memory. The
  /// result is in the slice layout (every thread holds what it needs to
  /// broadcast the result back over the axis).
  void lower_reduce_gpu(const ir::Op &op);

  /// On the GPU, a scalar side effect (a store or atomic of one value) runs
  /// in thread 0 only; on the CPU it just runs.
  void once(const std::function<void()> &f);

  /// GPU: a block load in the layout its pointer asks for, V slots at a
  /// time where the axis info allows one vector access, else one
  /// predicated access per element.
  void lower_load_gpu(const ir::Op &op);
  /// Load `op`'s elements in layout `m` (its operands prepared in it), only
  /// where `in_range` too: the value of each slot.
  std::vector<llvm::Value *> load_slots(const ir::Op &op, const MapPtr &m, llvm::Value *in_range);

  /// GPU: a block store in its pointer's layout; copies of an element
  /// (threads beyond a small block) do not store.
  void lower_store_gpu(const ir::Op &op);

  /// One atomic read-modify-write (or compare-and-swap) of op at `ptr`,
  /// with its operands' elements at `idx`; returns the old value as stored.
  llvm::Value *atomic_at(const ir::Op &op, llvm::Value *ptr, const Idx &idx);

  /// GPU: a block atomic in its pointer's layout, once per element (copies
  /// skip it and read no old value).
  void lower_atomic_gpu(const ir::Op &op);

  /// Debug: where `ptr` (an element or vector of op's pointer, an access
  /// of `bytes`) is an offset of a kernel parameter whose tensor size the
  /// launch gave, whether it lies inside (and `mask` holds, when given); a
  /// failure is recorded for the driver to report. Null where nothing is
  /// checked.
  llvm::Value *bounds_ok(const ir::Op &op, const char *access, llvm::Value *ptr, int64_t bytes,
                         llvm::Value *mask);
  /// Where `bad` holds: the first failure fills the launch's record (CPU:
  /// the assert record with a message; GPU: the device record by atom.exch).
  void record_out_of_bounds_cpu(llvm::Value *bad, const char *access, size_t param, uint32_t line,
                                llvm::Value *offset, llvm::Value *extent);
  void record_out_of_bounds_gpu(llvm::Value *bad, size_t param, uint32_t line, bool store,
                                llvm::Value *offset, llvm::Value *extent);

  void lower_load(const ir::Op &op);

  void lower_store(const ir::Op &op);

  void lower_atomic(const ir::Op &op);

  llvm::Value *from_mem(llvm::Value *v, DType t);

  // ---- gather ----

  /// The source index tl.gather `op` reads for result element `idx`.
  Idx gather_source_index(const ir::Op &op, const Idx &idx);

  /// CPU: one element of a gather, recomputed like a pure op.
  llvm::Value *gather_element(const ir::Op &op, const Idx &idx);

  /// GPU: a gather through shared memory, in the index's layout.
  void lower_gather_gpu(const ir::Op &op);

  // ---- inline assembly (llvm/lower_inline_asm.cpp) ----

  /// GPU: the op's PTX over this thread's slots, `pack` per asm call.
  void lower_inline_asm(const ir::Op &op);

  // ---- debugging ----

  /// tl.device_print: printf on the CPU, vprintf on the GPU.
  void lower_print(const ir::Op &op);

  // ---- reductions, scans, dot ----

  llvm::Value *combine(ir::ReduceOp k, llvm::Value *acc, llvm::Value *x, const Type &t);

  void lower_reduce(const ir::Op &op);

  /// A scan along any axis on the GPU, in a layout where each thread holds
  /// one run along the axis, lanes the next bits and warps the top ones:
  /// each thread scans its run, a Kogge-Stone scan over the lanes (shfl.up)
  /// gives each run its lanes' prefix, shared memory the warps' prefix.
  void lower_scan_gpu(const ir::Op &op);

  /// tl.dot on the GPU: on tensor cores where the plan gave the result the
  /// mma layout (lower_dot_mma), else with FMAs: both operands go to shared
  /// memory (a transposed, so that a warp's reads of one k are consecutive),
  /// then each thread runs over k for its own accumulator slots.
  void lower_dot_gpu(const ir::Op &op);

  void lower_scan(const ir::Op &op);

  // ---- tensor cores (llvm/lower_mma.cpp) ----

  /// A dot operand staged in shared memory for ldmatrix: `rows` rows of
  /// `row_len` elements of `bytes` each, K along the rows (`k_contig`) or
  /// across them, 16-byte chunks XOR-swizzled by row so that the 8 rows
  /// one 8x8 matrix reads hit 8 different bank groups.
  /// `panel` (wgmma's canonical layouts): rows longer than 128 bytes are
  /// cut into panels of 128 bytes, each panel all rows of that width, so
  /// that the swizzle is the hardware's 128-, 64- or 32-byte one (a panel
  /// starts at a multiple of 8 rows of its width).
  struct Staged {
    llvm::Value *base = nullptr;
    int64_t rows = 0, row_len = 0;
    int bytes = 2;
    bool k_contig = true;
    bool panel = false;
  };

  /// tl.dot on tensor cores, its result in the mma layout: both operands
  /// from the layouts they are held in to swizzled shared memory (16-byte
  /// stores where the held layout runs along the stored rows), then per
  /// warp and k step, ldmatrix fragments and mma.sync over its tiles
  /// (tf32x3: three passes over K, gpu::MmaKind::TF32X3).
  void lower_dot_mma(const ir::Op &op);

  // ---- sm_90 warpgroup tensor cores (llvm/lower_wgmma.cpp) ----

  /// tl.dot on wgmma.mma_async (the plan's wgmma(op)): A from registers
  /// where its layout holds the fragments (attention's q and p), else like
  /// B from shared memory in panel layout through matrix descriptors; per k
  /// step and 64-row tile of each warpgroup one instruction over all of N,
  /// then commit and wait.
  void lower_dot_wgmma(const ir::Op &op);

  /// The matrix descriptor of a panel-layout operand (without its start
  /// offset), and the byte offset of element (row, col) in it.
  llvm::Value *wgmma_desc(const Staged &st);
  static int64_t panel_offset(const Staged &st, int64_t row, int64_t col);

  /// Scratch shared memory starting at a multiple of 1024 bytes.
  llvm::Value *scratch_aligned(unsigned bytes);

  /// Caps the kernel's registers (.maxnreg) so that two CTAs share an SM
  /// where the wgmma accumulators leave room (attention with 8 warps):
  /// while one warpgroup waits for its tensor cores or does the softmax,
  /// another's instructions run.
  void cap_registers_for_wgmma();
  int64_t wgmma_acc_regs_ = 0; ///< f32 accumulator registers per thread of the wgmma dots
  int64_t wgmma_a_regs_ = 0;   ///< registers per thread of their A operands held in registers
  bool wgmma_staged_ = false;  ///< a wgmma operand went registers -> st.shared
  /// A loop whose wgmma dot only feeds a carried value read after another
  /// wgmma dot of the next iteration (attention's acc after qk): that dot is
  /// not waited for, the other's wait covers the carried value too, so the
  /// first runs while the next iteration starts. Also a loop whose only
  /// wgmma dot accumulates into a carried value nothing else reads (matmul's
  /// `acc += tl.dot(a, b)`): each iteration waits only for the one before
  /// (wgmma_chain_). Gives the carried indices; `spare_slot` is set where
  /// the pipeline's ring needs a slot more for the dot left in flight.
  std::vector<size_t> defer_wgmma_waits(const ir::Op &loop, bool *spare_slot);
  /// After such a loop: its results waited for.
  void await_wgmma_results(const ir::Op &loop, const std::vector<size_t> &carried);
  std::set<const ir::Op *> wgmma_no_wait_;
  std::set<const ir::Op *> wgmma_chain_;
  std::unordered_map<const ir::Op *, std::vector<const ir::Value *>> wgmma_await_;

  /// `acc + tl.dot(a, b)` (Triton's `acc += tl.dot(a, b)`) on tensor cores:
  /// the dot accumulates into `acc` itself instead of zeros, and the add
  /// becomes the dot's result (no add per element per iteration).
  void fuse_dot_adds(const ir::Block &b);

  /// Operand A of 16-bit elements as mma A-fragment words (two halves each),
  /// when its layout holds every fragment in the right thread; else empty.
  std::vector<llvm::Value *> a_fragments(const ir::Value *a, const gpu::EncodingPtr &operand);

  /// Writes held (or recomputed) operand `v`, dim `row_dim` along the rows.
  void stage_operand(const ir::Value *v, const Staged &st, int row_dim);

  /// The shared-memory address (i8, addrspace 3) of element (row, col), i32s.
  llvm::Value *staged_address(const Staged &st, llvm::Value *row, llvm::Value *col);

  llvm::Value *alloc_scalar(llvm::Type *t);

  void lower_dot(const ir::Op &op);

  // ---- control flow ----

  /// Storage for a loop-carried value: a phi for scalars; on the CPU two
  /// buffers whose roles swap each iteration for blocks, so that computing
  /// the next value never overwrites what it reads; on the GPU a phi per
  /// slot of the carried layout (the plan gives it the layout of what the
  /// loop yields, so the yield needs no conversion).
  struct Carried {
    const ir::Value *init = nullptr;
    llvm::PHINode *phi = nullptr;
    llvm::Value *buf_a = nullptr, *buf_b = nullptr;
    MapPtr map;
    std::vector<llvm::Value *> init_slots;
    std::vector<llvm::PHINode *> slots;
  };

  /// `args`: the region arguments that carry the values (their layouts).
  std::vector<Carried> start_carried(const std::vector<const ir::Value *> &inits,
                                     const std::vector<ir::Value *> &args);

  std::vector<llvm::Value *> slot_values(const ir::Value *v, const Lowered &l);

  /// A GPU block held in per-slot SSA values, as a buffer again.
  Lowered slots_buffer(const Type &t, const MapPtr &m, const std::vector<llvm::Value *> &vals);

  void make_phis(std::vector<Carried> &cs, llvm::BasicBlock *pre);

  void bind_carried(const std::vector<Carried> &cs, const std::vector<ir::Value *> &args);

  /// Evaluates the yielded values into the next-iteration storage: per
  /// carried value, its next phi inputs.
  std::vector<std::vector<llvm::Value *>> yield_carried(const std::vector<Carried> &cs,
                                                        const std::vector<ir::Value *> &ys);

  void add_incoming(const std::vector<Carried> &cs,
                    const std::vector<std::vector<llvm::Value *>> &next, llvm::BasicBlock *latch);

  void set_results(const ir::Op &op, const std::vector<Carried> &cs);

  void lower_for(const ir::Op &op);

  // ---- software pipelining of dot operands (llvm/lower_pipeline.cpp) ----

  /// A load in a for loop's body whose only use is a tensor-core dot:
  /// fetched num_stages - 1 iterations ahead with cp.async into a ring of
  /// shared-memory stages laid out as the dot reads them; or, where its
  /// addresses are not known 4-byte aligned (cp.async's least), loaded one
  /// iteration ahead into registers that the dot stores itself.
  struct PipeLoad {
    const ir::Op *load = nullptr;
    const ir::Value *operand = nullptr; ///< what the dot reads: the load, or its transpose
    MapPtr held;     ///< the load's layout: which thread copies which elements
    Staged st;       ///< one stage (base: the ring)
    int row_dim = 0; ///< the dim along the stored rows
    int64_t stage_bytes = 0;
    int64_t vec = 8;    ///< elements a copy (16, 8 or 4 bytes)
    bool wgmma = false; ///< read by wgmma: panel layout, fenced for the async proxy
  };
  struct Pipeline {
    int stages = 0;    ///< iterations in flight: copies go stages - 1 ahead
    int slots = 0;     ///< stages of the ring (stages, or one more)
    bool regs = false; ///< loaded into registers one iteration ahead, no ring
    std::vector<PipeLoad> loads;
    std::vector<const ir::Op *> slice; ///< body ops the loads' operands need, in order
    std::vector<size_t> carried;       ///< carried values they need (index among carried)
    std::vector<std::vector<llvm::Value *>> ahead; ///< those values num_stages - 1 iterations on
    std::vector<std::vector<llvm::PHINode *>> ahead_phis;
    std::vector<std::vector<llvm::Value *>> ahead_next;
    /// Registers: the loads' slots for the next iteration (as `ahead`).
    std::vector<std::vector<llvm::Value *>> loaded, loaded_next;
    std::vector<std::vector<llvm::PHINode *>> loaded_phis;
    llvm::PHINode *count = nullptr; ///< iterations done (i32)
    llvm::Value *count_next = nullptr, *iv_ahead = nullptr;
    const ir::Op *loop = nullptr;
    unsigned reserved_before = 0;
  };
  /// The loads of for-op `op` to pipeline (none: `loads` is empty).
  Pipeline plan_pipeline(const ir::Op &op, bool spare_slot);
  /// Before the loop: the first num_stages - 1 iterations' copies.
  void pipeline_prologue(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs);
  /// The first num_stages - 1 iterations' loads; the carried values after them.
  std::vector<std::vector<llvm::Value *>> pipeline_first(Pipeline &p, const ir::Op &op,
                                                         const std::vector<Carried> &cs);
  void pipeline_phis(Pipeline &p, llvm::BasicBlock *pre);
  /// At the top of the body: wait for this iteration's stage, then issue the
  /// copies num_stages - 1 iterations ahead; where a wgmma dot reads the
  /// stages, it issues them instead, while its instructions run
  /// (`deferred_issue_`; the loop issues them after the body if it did not).
  void pipeline_iteration(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs,
                          llvm::Value *iv);
  void pipeline_issue_ahead(Pipeline &p, const ir::Op &op, const std::vector<Carried> &cs,
                            llvm::Value *iv);
  std::function<void()> deferred_issue_;
  void pipeline_latch(Pipeline &p, llvm::BasicBlock *latch);
  void pipeline_end(Pipeline &p);
  /// Evaluates the loads' operands for iteration `iv` with carried values
  /// `vals`, issues their copies into `stage` where `in_range`, commits, and
  /// returns the carried values of the next iteration.
  std::vector<std::vector<llvm::Value *>>
  pipeline_issue(Pipeline &p, const std::vector<Carried> &cs, llvm::Value *iv,
                 const std::vector<std::vector<llvm::Value *>> &vals, llvm::Value *stage,
                 llvm::Value *in_range);

  /// The block's scratch shared memory above what live pipelines hold.
  llvm::Value *scratch(unsigned bytes, unsigned align = 1);

  void lower_while(const ir::Op &op);

  void lower_if(const ir::Op &op);

  void lower_call(const ir::Op &op);

  void set(const ir::Value *v, llvm::Value *s, llvm::Value *buf);

  void lower_pure(const ir::Op &op);

  void lower_ops(const ir::Block &blk, bool stop_at_terminator);

  // ---- functions ----

  void declare_device_function(const ir::Function &f);

  void define_function(const ir::Function &f, llvm::Function *fn);

  const ir::Program &prog_;
  Options opts_;
  bool distributed_ = false; ///< blocks spread over threads by layouts (GPU), not whole per program
  int threads_;              ///< threads per CTA (GPU)
  llvm::LLVMContext &ctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  llvm::Value *pid_[3] = {}, *nprog_[3] = {};
  llvm::Value *tid64_ = nullptr; ///< this thread's index in the CTA (GPU)
  // GPU
  std::unique_ptr<TargetLowering> target_;
  int sm_ = 0; ///< the GPU's compute capability * 10 (0: unknown or the CPU)
  std::unique_ptr<gpu::LayoutPlan> plan_;
  const gpu::BitMap *view_ = nullptr;    ///< the layout the current element is read in
  int64_t slot_ = 0;                     ///< and its slot there
  /// The open block that thread ids and layouts' index bits are computed in:
  /// the kernel's entry, then the block after each top-level loop.
  llvm::BasicBlock *prologue_ = nullptr;
  llvm::BasicBlock *after_prologue_ = nullptr; ///< where prologue_ branches once it is closed
  int region_depth_ = 0;                       ///< regions (loop and if bodies) being lowered
  llvm::Value *lane64_ = nullptr, *warp64_ = nullptr;
  std::unordered_map<std::string, llvm::Value *> thread_bits_;
  std::unordered_map<std::string, Idx> thread_coords_;
  std::map<std::pair<const ir::Value *, std::string>, Lowered>
      converted_; ///< conversions of the current block
  int conversions_ = 0;
  const ir::Op *cur_op_ = nullptr;
  std::unordered_map<const ir::Op *, std::string> op_notes_;
  llvm::Value *assert_record_ = nullptr; ///< the launch's assert record (CPU)
  llvm::Value *extents_ = nullptr; ///< debug (CPU): the arguments' tensor sizes, from the record
  /// Debug (GPU): each parameter's tensor size (by-value kernel parameters
  /// after the arguments), the device record after them, and the kernel.
  std::vector<llvm::Value *> gpu_extents_;
  llvm::Value *gpu_record_ = nullptr;
  llvm::Function *gpu_kernel_fn_ = nullptr;
  // CPU: buffers beyond the stack's share live at fixed offsets of the
  // program's scratch memory (see alloc_buffer).
  static constexpr int kMaxLazyCost = 256; ///< a lazy tree bigger than this is materialized
  static constexpr uint64_t kStackBufferMax = 16 * 1024, kStackBudget = 256 * 1024;
  llvm::Value *scratch_ = nullptr;       ///< the program's scratch memory argument
  llvm::Function *scratch_fn_ = nullptr; ///< the function `scratch_` belongs to
  uint64_t scratch_bytes_ = 0, stack_bytes_ = 0;
  std::unordered_map<const ir::Value *, Lowered> vals_;
  std::unordered_map<const ir::Value *, int> uses_, cost_;
  /// GPU: the pure values computed from constants, aranges and scalars
  /// alone (index and mask math), with what recomputing one costs. One
  /// stored once for its several uses (lower_pure) is recomputed, not
  /// converted through shared memory, where a use needs another layout
  /// (weight_dequant's offsets and mask, read by an fp8 load and a bf16
  /// store of different widths).
  std::unordered_map<const ir::Value *, int> recompute_cost_;
  /// Whether stored `v` is recomputed, not read, by a use through `view`.
  bool recomputed_in(const ir::Value *v, const Lowered &l, const gpu::BitMap &view) const;
  std::unordered_map<const ir::Value *, const ir::Value *> dot_acc_; ///< dot -> the addend it takes
  std::unordered_map<const ir::Value *, const ir::Value *> add_is_dot_; ///< fused add -> its dot
  std::unordered_map<const ir::Value *, Staged> prestaged_; ///< pipelined loads: where they are now
  std::set<const ir::Value *> preloaded_; ///< pipelined loads already in registers
  unsigned reserved_ = 0;                 ///< shared memory bytes held by live pipelines
  std::unordered_map<const ir::Function *, llvm::Function *> fns_;
};

} // namespace kiln::llvmgen::detail
