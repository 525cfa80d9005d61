// The GPU's element distribution: which slots of which thread hold a block
// (gpu/layout.hpp), reads of held blocks in the layout a consumer wants,
// and conversions between layouts through shared memory.
#include "compiler/llvm/lowering.hpp"

#include <algorithm>
#include <bit>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::map_for(const gpu::EncodingPtr &e, const Type &t) -> MapPtr {
  return std::make_shared<const gpu::BitMap>(plan_->map(e, t));
}

auto Lowering::for_slots(const gpu::BitMap &m, const Type &shape,
                         const std::function<void(int64_t, const Idx &)> &body) -> void {
  const gpu::BitMap *saved_view = view_;
  const int64_t saved_slot = slot_;
  view_ = &m;
  for (int64_t s = 0; s < m.slots(); ++s) {
    slot_ = s;
    body(s, slot_coords(m, shape, s));
  }
  view_ = saved_view;
  slot_ = saved_slot;
}

auto Lowering::element_index(const gpu::BitMap &m, int64_t s) -> llvm::Value * {
  return b_.CreateOr(thread_bits(m), b_.getInt64(m.reg_offset(s)));
}

// Block dims are powers of two, so a coordinate is a bit field of the
// row-major index, and the thread's bits and the slot's (disjoint) add: the
// thread's coordinates are computed once, in the prologue, and a slot's are
// those plus constants. Addresses built from them fold into one per-thread
// base and constant offsets, instead of a division chain per slot that LLVM
// would have to simplify away (thousands in a matmul).
auto Lowering::slot_coords(const gpu::BitMap &m, const Type &shape, int64_t s) -> Idx {
  for (int d = 0; d < shape.rank; ++d)
    if (shape.shape[d] & (shape.shape[d] - 1))
      return delinear(shape, element_index(m, s));
  const std::string key = m.str() + shape.str();
  auto it = thread_coords_.find(key);
  if (it == thread_coords_.end()) {
    llvm::IRBuilder<> eb(prologue_);
    llvm::Value *t = thread_bits(m);
    Idx idx{};
    unsigned shift = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t n = shape.shape[d];
      idx[d] = n == 1 ? eb.getInt64(0) : eb.CreateAnd(eb.CreateLShr(t, shift), eb.getInt64(n - 1));
      shift += static_cast<unsigned>(std::countr_zero(static_cast<uint64_t>(n)));
    }
    it = thread_coords_.emplace(key, idx).first;
  }
  Idx idx = it->second;
  const uint64_t c = static_cast<uint64_t>(m.reg_offset(s));
  unsigned shift = 0;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const uint64_t n = static_cast<uint64_t>(shape.shape[d]);
    if (const uint64_t part = (c >> shift) & (n - 1))
      idx[d] = b_.CreateAdd(idx[d], b_.getInt64(static_cast<int64_t>(part)), "", /*HasNUW=*/true,
                            /*HasNSW=*/true);
    shift += static_cast<unsigned>(std::countr_zero(n));
  }
  return idx;
}

// Index bits computed before a long loop and used after it hold registers
// through the loop (attention's epilogue spilled 112 bytes so); recomputing
// them costs a few integer ops once.
auto Lowering::refresh_thread_ids() -> void {
  // Device functions (own LLVM functions) keep the entry's ids.
  if (!distributed_ || region_depth_ != 0 || !prologue_ || prologue_->getParent() != fn_)
    return;
  llvm::BasicBlock *ids = new_bb("ids"), *rest = new_bb("after.ids");
  close_prologue();
  b_.CreateBr(ids);
  b_.SetInsertPoint(ids);
  set_thread_ids(target_->reread_thread_id());
  thread_bits_.clear();
  thread_coords_.clear();
  prologue_ = ids;
  after_prologue_ = rest;
  b_.SetInsertPoint(rest);
}

auto Lowering::set_thread_ids(llvm::Value *tid) -> void {
  tid64_ = b_.CreateZExt(tid, b_.getInt64Ty());
  lane64_ = b_.CreateAnd(tid64_, b_.getInt64(31));
  warp64_ = b_.CreateLShr(tid64_, b_.getInt64(5));
}

auto Lowering::close_prologue() -> void {
  llvm::IRBuilder<>(prologue_).CreateBr(after_prologue_);
}

auto Lowering::thread_bits(const gpu::BitMap &m) -> llvm::Value * {
  const std::string key = m.str();
  if (auto it = thread_bits_.find(key); it != thread_bits_.end())
    return it->second;
  llvm::IRBuilder<> eb(prologue_);
  llvm::Value *r = eb.getInt64(0);
  // Runs of consecutive id bits that land on consecutive index bits move as one field.
  auto add = [&](const int *bases, int n, llvm::Value *id) {
    for (int i = 0; i < n;) {
      if (bases[i] < 0) {
        ++i;
        continue;
      }
      int len = 1;
      while (i + len < n && bases[i + len] == bases[i] + len)
        ++len;
      llvm::Value *field = eb.CreateAnd(eb.CreateLShr(id, i), eb.getInt64((int64_t{1} << len) - 1));
      r = eb.CreateOr(r, eb.CreateShl(field, bases[i]));
      i += len;
    }
  };
  add(m.lane.data(), gpu::BitMap::kLaneBits, lane64_);
  add(m.warp.data(), static_cast<int>(m.warp.size()), warp64_);
  return thread_bits_[key] = r;
}

auto Lowering::owner(const gpu::BitMap &m) -> llvm::Value * {
  const uint32_t lm = m.copy_lane_mask(), wm = m.copy_warp_mask();
  if (!lm && !wm)
    return nullptr;
  llvm::IRBuilder<> eb(prologue_);
  llvm::Value *ok = eb.getTrue();
  if (lm)
    ok = eb.CreateAnd(ok, eb.CreateICmpEQ(eb.CreateAnd(lane64_, eb.getInt64(lm)), eb.getInt64(0)));
  if (wm)
    ok = eb.CreateAnd(ok, eb.CreateICmpEQ(eb.CreateAnd(warp64_, eb.getInt64(wm)), eb.getInt64(0)));
  return ok;
}

auto Lowering::and_mask(llvm::Value *a, llvm::Value *b) -> llvm::Value * {
  return !a ? b : !b ? a : b_.CreateAnd(a, b);
}

auto Lowering::read_held(const ir::Value *v, const Lowered &l) -> llvm::Value * {
  if (!view_)
    throw std::logic_error("kiln internal error: GPU buffer read outside a slot loop");
  if (auto sm = gpu::slot_map(*view_, *l.map))
    return b_.CreateLoad(reg_type(v->type.element()),
                         slot_ptr(v->type, l.buf, gpu::apply_slot_map(*sm, slot_)));
  auto it = converted_.find({v, gpu::without_slot_copies(*view_).str()});
  if (it == converted_.end())
    throw std::logic_error("kiln internal error: %" + std::to_string(v->id) +
                           " read in a layout it was not converted to");
  auto sm = gpu::slot_map(*view_, *it->second.map);
  return b_.CreateLoad(reg_type(v->type.element()),
                       slot_ptr(v->type, it->second.buf, gpu::apply_slot_map(*sm, slot_)));
}

auto Lowering::prepare(const ir::Value *v, const gpu::BitMap &view) -> void {
  if (!distributed_ || !v->type.is_block())
    return;
  std::set<std::pair<const ir::Value *, std::string>> seen;
  prepare_tree(v, view, seen);
}

auto Lowering::prepare_tree(const ir::Value *v, const gpu::BitMap &view,
                            std::set<std::pair<const ir::Value *, std::string>> &seen) -> void {
  if (!v->type.is_block() || !seen.insert({v, view.str()}).second)
    return;
  const Lowered &l = vals_.at(v);
  if (!l.lazy && !recomputed_in(v, l, view)) {
    if (gpu::slot_map(view, *l.map))
      return;
    gpu::BitMap to = gpu::without_slot_copies(view);
    std::pair<const ir::Value *, std::string> key{v, to.str()};
    if (!converted_.count(key))
      converted_[key] = convert(v, l, std::make_shared<const gpu::BitMap>(to));
    return;
  }
  const ir::Op &op = *v->def;
  switch (op.kind) {
  case OpKind::Constant:
  case OpKind::Splat:
  case OpKind::Arange:
    return;
  case OpKind::Broadcast: {
    const ir::Value *src = op.operands[0];
    prepare_tree(
        src, gpu::view_through_broadcast(view, gpu::shape_of(v->type), gpu::shape_of(src->type)),
        seen);
    return;
  }
  case OpKind::Trans:
    prepare_tree(op.operands[0], gpu::view_through_trans(view, gpu::shape_of(v->type), op.ints),
                 seen);
    return;
  default:
    // Elementwise, expand_dims and reshape: the same row-major index bits.
    for (const ir::Value *o : op.operands)
      prepare_tree(o, view, seen);
  }
}

auto Lowering::to_shared(const ir::Value *v, const Lowered &from, int vbits) -> llvm::Value * {
  llvm::Type *et = reg_type(v->type.element());
  const int64_t n = v->type.numel(), chunk = int64_t{1} << vbits;
  llvm::Value *base = scratch(static_cast<unsigned>((n + n / 32 + chunk) * type_bytes(et)),
                              static_cast<unsigned>(chunk * type_bytes(et)));
  target_->barrier();
  llvm::Value *mine = shared_thread_base(base, et, *from.map, vbits);
  for (int64_t s = 0; s < from.map->slots(); ++s)
    b_.CreateStore(b_.CreateLoad(et, slot_ptr(v->type, from.buf, s)),
                   shared_slot(mine, et, *from.map, s, vbits));
  target_->barrier();
  return base;
}

auto Lowering::shared_vec_bits(const ir::Value *v, const gpu::BitMap &from, const gpu::BitMap &to)
    -> int {
  const gpu::Shape shape = gpu::shape_of(v->type);
  auto row_run = [&](const gpu::BitMap &m) {
    int dim = -1;
    const int run = gpu::run_bits(m, shape, &dim);
    return dim == v->type.rank - 1 ? run : 0;
  };
  // A side that walks down columns (no run along the row) keeps the
  // one-word padding: with a chunk of padding per 32 chunks its threads'
  // rows would land on fewer banks.
  const int a = row_run(from), b = row_run(to);
  if (a == 0 || b == 0)
    return 0;
  const int most = gpu::log2_exact(16 / type_bytes(reg_type(v->type.element())));
  return std::min(most, std::max(a, b));
}

namespace {

/// Row-major index `lin` with one chunk of 2^vbits elements of padding per
/// 32 chunks. Linear over disjoint bits: padded(a | b) = padded(a) + padded(b).
int64_t padded_index(int64_t lin, int vbits) {
  return lin + ((lin >> (5 + vbits)) << vbits);
}

} // namespace

auto Lowering::shared_element(llvm::Value *base, llvm::Type *et, llvm::Value *lin, int vbits)
    -> llvm::Value * {
  llvm::Value *pad = b_.CreateShl(b_.CreateLShr(lin, b_.getInt64(5 + vbits)), b_.getInt64(vbits));
  return b_.CreateInBoundsGEP(et, base, b_.CreateAdd(lin, pad));
}

// A slot's index is its thread's bits or-ed with the slot's own, disjoint
// bits, so its padded index is the sum of the two parts' padded indices: one
// address per thread and a constant per slot. The accesses then read as
// [reg+imm] in the PTX, and LLVM's load/store vectorizer sees adjacent slots
// at once (on an address per slot it spent ~0.1 s in matmul's epilogue).
auto Lowering::shared_thread_base(llvm::Value *base, llvm::Type *et, const gpu::BitMap &m,
                                  int vbits) -> llvm::Value * {
  return shared_element(base, et, thread_bits(m), vbits);
}

auto Lowering::shared_slot(llvm::Value *thread_base, llvm::Type *et, const gpu::BitMap &m,
                           int64_t s, int vbits) -> llvm::Value * {
  return b_.CreateConstInBoundsGEP1_64(et, thread_base,
                                       static_cast<uint64_t>(padded_index(m.reg_offset(s), vbits)));
}

auto Lowering::convert(const ir::Value *v, const Lowered &from, const MapPtr &to) -> Lowered {
  ++conversions_;
  note_conversion(v, *from.map, *to);
  llvm::Type *et = reg_type(v->type.element());
  const int vbits = shared_vec_bits(v, *from.map, *to);
  llvm::Value *base = to_shared(v, from, vbits);
  Lowered r;
  r.map = to;
  r.buf = alloc_buffer(v->type, to.get());
  llvm::Value *mine = shared_thread_base(base, et, *to, vbits);
  for (int64_t s = 0; s < to->slots(); ++s)
    b_.CreateStore(b_.CreateLoad(et, shared_slot(mine, et, *to, s, vbits)),
                   slot_ptr(v->type, r.buf, s));
  return r;
}

auto Lowering::type_bytes(llvm::Type *t) const -> unsigned {
  return static_cast<unsigned>(mod_->getDataLayout().getTypeAllocSize(t).getFixedValue());
}

auto Lowering::note_conversion(const ir::Value *v, const gpu::BitMap &from, const gpu::BitMap &to)
    -> void {
  op_notes_[cur_op_] += "convert_layout %" + std::to_string(v->id) + " : " + v->type.str() + " {" +
                        from.str() + "} -> {" + to.str() + "}\n";
}

auto Lowering::materialize_gpu(const ir::Value *v, MapPtr m, llvm::Value *into) -> Lowered {
  if (!m)
    m = map_for(plan_->layout(v), v->type);
  prepare(v, *m);
  Lowered r;
  r.map = m;
  r.buf = into ? into : alloc_buffer(v->type, m.get());
  for_slots(*m, v->type, [&](int64_t s, const Idx &idx) {
    b_.CreateStore(element(v, idx), slot_ptr(v->type, r.buf, s));
  });
  return r;
}

} // namespace kiln::llvmgen::detail
