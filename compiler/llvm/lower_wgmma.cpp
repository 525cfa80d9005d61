// tl.dot on sm_90's warpgroup tensor cores: wgmma.mma_async m64nNk16 (f16,
// bf16; f32 accumulators, or f16 ones for f16 with out_dtype float16) and
// m64nNk32 (int8, int32 accumulators, both operands K-major: integer wgmma
// has no transpose), issued by each warpgroup of 4 warps for its 64
// rows of each M tile and all of N at once, asynchronously: operands are read
// from shared memory through matrix descriptors (B always; A unless its
// layout already holds the register fragments), fenced, committed and
// waited for before the accumulator is read (in a loop, possibly by the wait
// of the next iteration's first dot: defer_wgmma_waits).
//
// Shared-memory operands use the hardware's canonical swizzled layouts
// (Staged::panel): K-major (K along the stored rows) or M/N-major (the
// instruction's transpose flag), rows of 128 bytes (or 64, 32 when shorter)
// with 16-byte chunks XOR-ed by row, longer rows cut into panels. A
// descriptor names the start of one 8-row group and two strides: between
// 8-row groups (SBO) and, M/N-major, between panels (LBO).
#include "compiler/llvm/lowering.hpp"

namespace kiln::llvmgen::detail {

int64_t Lowering::panel_offset(const Staged &st, int64_t row, int64_t col) {
  const int64_t len = std::min<int64_t>(st.row_len, 128 / st.bytes), width = len * st.bytes;
  return (col / len) * st.rows * width + row * width + (col % len) * st.bytes;
}

auto Lowering::wgmma_desc(const Staged &st) -> llvm::Value * {
  const uint64_t width = static_cast<uint64_t>(std::min<int64_t>(st.row_len * st.bytes, 128));
  const uint64_t mode = width == 128 ? 1 : width == 64 ? 2 : 3;
  // K-major swizzled layouts ignore the leading offset (1 by convention).
  const uint64_t lead = st.k_contig ? 1 : static_cast<uint64_t>(st.rows) * width >> 4;
  const uint64_t stride = 8 * width >> 4;
  llvm::Value *addr = b_.CreatePtrToInt(st.base, b_.getInt32Ty());
  addr = b_.CreateLShr(b_.CreateAnd(addr, 0x3FFFF), 4);
  return b_.CreateOr(b_.CreateZExt(addr, b_.getInt64Ty()),
                     b_.getInt64(lead << 16 | stride << 32 | mode << 62));
}

auto Lowering::lower_dot_wgmma(const ir::Op &op) -> void {
  const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2],
                  *res = op.result();
  if (auto it = dot_acc_.find(res); it != dot_acc_.end())
    acc = it->second;
  const int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
  const gpu::MmaKind kind = plan_->mma_kind(op);
  const gpu::EncodingPtr enc = plan_->layout(res);
  const MapPtr C = map_for(enc, res->type);
  // Warps over M (warpgroups of 4, 64 rows each) and over N (warpgroups
  // that each issue their own `cols` columns: gpu::wgmma_split).
  const int wm = enc->mma_warps[0], wn = enc->mma_warps[1];
  const int64_t cols = wn > 1 ? enc->wg_cols : N;
  const int bytes = gpu::mma_operand_bytes(kind), ks_len = gpu::mma_k(kind);
  // f16 accumulators travel as f16x2 words: 4 columns a register, not 2.
  const bool half_acc = kind == gpu::MmaKind::F16F16;
  const int64_t reps_m = M / (16 * wm), per_tile = half_acc ? cols / 4 : cols / 2;

  auto pre_a = prestaged_.find(a), pre_b = prestaged_.find(bm);
  std::vector<llvm::Value *> a_words;
  if (pre_a == prestaged_.end() && bytes == 2)
    a_words = a_fragments(a, gpu::dot_operand(0, enc, 2));
  const bool have_a = pre_a != prestaged_.end() || !a_words.empty(),
             have_b = pre_b != prestaged_.end();
  Staged sa = pre_a != prestaged_.end() ? pre_a->second : Staged{},
         sb = have_b ? pre_b->second : Staged{};
  // An operand not fetched ahead is stored with the dim its held layout
  // runs along in the rows (16-byte stores), as the pipeline would.
  auto plan_stage = [&](const ir::Value *v, int k_dim, Staged &st) {
    const MapPtr held = map_for(plan_->layout(v), v->type);
    prepare(v, *held); // any conversion first: it uses the same shared memory
    int d = -1;
    gpu::run_bits(*held, gpu::shape_of(v->type), &d);
    st.k_contig = bytes != 2 || d == k_dim || d < 0;
    st.bytes = bytes;
    st.panel = true;
    const int64_t outer = v->type.shape[1 - k_dim], kk = v->type.shape[k_dim];
    st.rows = st.k_contig ? outer : kk;
    st.row_len = st.k_contig ? kk : outer;
  };
  if (!have_a)
    plan_stage(a, 1, sa);
  if (!have_b)
    plan_stage(bm, 0, sb);
  // A dot into zeros (attention's qk) starts with D = A * B: no registers
  // zeroed first.
  const bool zeros = is_zero_splat(acc);
  std::vector<llvm::Value *> d(C->slots(), llvm::PoisonValue::get(reg_type(res->type.element())));
  if (!zeros) {
    prepare(acc, *C);
    for_slots(*C, res->type, [&](int64_t s, const Idx &i) { d[s] = element(acc, i); });
  }
  // Slots c | n tile << 2 | ...: pairs of neighbouring slots are (c0, c1),
  // (c2, c3), one f16x2 register each.
  // (Packed by inserts, not pack_words' paired rounding: the loop-carried
  // halves then pass through, llvm/half_phis.hpp.)
  if (half_acc) {
    auto *h2 = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
    std::vector<llvm::Value *> w;
    for (size_t s = 0; s < d.size(); s += 2) {
      llvm::Value *p = llvm::PoisonValue::get(h2);
      for (uint64_t j = 0; j < 2; ++j)
        p = b_.CreateInsertElement(p, to_mem(d[s + j], DType::f16), j);
      w.push_back(b_.CreateBitCast(p, b_.getInt32Ty()));
    }
    d = std::move(w);
  }
  if (!have_a || !have_b) {
    wgmma_staged_ = true;
    const int64_t a_bytes = have_a ? 0 : (M * K * bytes + 1023) / 1024 * 1024;
    llvm::Value *base =
        scratch_aligned(static_cast<unsigned>(a_bytes + (have_b ? 0 : K * N * bytes)));
    sa.base = have_a ? sa.base : base;
    sb.base = have_b ? sb.base : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, a_bytes);
    target_->barrier();
    if (!have_a)
      stage_operand(a, sa, sa.k_contig ? 0 : 1);
    if (!have_b)
      stage_operand(bm, sb, sb.k_contig ? 1 : 0);
    target_->fence_async_shared(); // st.shared is the generic proxy, wgmma reads the async one
    target_->barrier();
  }

  auto desc_plus = [&](llvm::Value *desc, int64_t bytes) {
    return bytes ? b_.CreateAdd(desc, b_.getInt64(static_cast<uint64_t>(bytes) >> 4)) : desc;
  };
  // Element (row, col) of an operand, `outer` along M or N and `k` along K.
  auto offset = [&](const Staged &st, int64_t outer, int64_t k) {
    return st.k_contig ? panel_offset(st, outer, k) : panel_offset(st, k, outer);
  };
  llvm::Value *desc_a = nullptr, *desc_b = wgmma_desc(sb);
  llvm::Value *wg = b_.CreateLShr(b_.CreateTrunc(warp64_, b_.getInt32Ty()), 2);
  const int wg_m = wm / 4; // warpgroups over M: the low bits of the warpgroup's number
  auto scaled = [&](llvm::Value *i, int64_t bytes_each) {
    return b_.CreateZExt(b_.CreateMul(i, b_.getInt32(static_cast<uint32_t>(bytes_each >> 4))),
                         b_.getInt64Ty());
  };
  if (a_words.empty()) {
    // This warpgroup's first row: 64 per warpgroup below each tile of 16 * wm.
    llvm::Value *m_index = wg_m == 1 ? b_.getInt32(0) : b_.CreateAnd(wg, b_.getInt32(wg_m - 1));
    desc_a = b_.CreateAdd(wgmma_desc(sa), scaled(m_index, offset(sa, 64, 0)));
  }
  if (wn > 1) // this warpgroup's first column
    desc_b =
        b_.CreateAdd(desc_b, scaled(b_.CreateLShr(wg, gpu::log2_exact(wg_m)), offset(sb, cols, 0)));
  const int kb = gpu::log2_exact(K / ks_len);
  d = target_->wgmma_fence(d);
  for (int64_t ks = 0; ks < K / ks_len; ++ks) {
    llvm::Value *b_at = desc_plus(desc_b, offset(sb, 0, ks_len * ks));
    for (int64_t mi = 0; mi < reps_m; ++mi) {
      std::vector<llvm::Value *> av;
      if (!a_words.empty()) { // words r | ks << 2 | mi << (2 + kb), as a_fragments gives them
        const int64_t w0 = (ks << 2) | (mi << (2 + kb));
        av.assign(a_words.begin() + w0, a_words.begin() + w0 + 4);
      } else {
        av = {desc_plus(desc_a, offset(sa, 16 * wm * mi, ks_len * ks))};
      }
      // Slots c | n tile << 2 | m tile << ...: an m tile's are the instruction's d0, d1, ...
      std::vector<llvm::Value *> part(d.begin() + mi * per_tile, d.begin() + (mi + 1) * per_tile);
      part = target_->wgmma(kind, part, av, b_at, !sa.k_contig, !sb.k_contig, ks > 0 || !zeros);
      std::copy(part.begin(), part.end(), d.begin() + mi * per_tile);
    }
  }
  target_->wgmma_commit();
  // A chained dot waits only for the previous iteration's (its accumulator
  // stays in flight into the next dot, which chains onto it), and that
  // iteration's ring slot is then free for the copies below once every warp
  // has passed a barrier (another warpgroup's dot, or another warp's part of
  // this one, may still read it: the copies are spread over all threads).
  const bool chained =
      wgmma_chain_.count(&op) && pre_a != prestaged_.end() && pre_b != prestaged_.end();
  if (chained) {
    target_->wgmma_wait(1, {});
    target_->barrier();
  }
  // The copies of a future iteration of the pipeline feeding this dot go out
  // while its instructions run.
  if (deferred_issue_ && (pre_a != prestaged_.end() || pre_b != prestaged_.end() ||
                          preloaded_.count(a) || preloaded_.count(bm)))
    std::exchange(deferred_issue_, nullptr)();
  // Left in flight only reading the pipeline's ring (whose spare slot
  // nothing refills meanwhile) and registers: scratch is rewritten by the
  // next dot.
  if (!chained && (!wgmma_no_wait_.count(&op) || !have_a || !have_b)) {
    // Values of an earlier dot still in flight (defer_wgmma_waits) pass
    // through this wait too.
    std::vector<std::pair<const ir::Value *, size_t>> more;
    for (const ir::Value *v : wgmma_await_[&op]) {
      const Lowered &l = vals_.at(v);
      std::vector<llvm::Value *> s = slot_values(v, l);
      more.emplace_back(v, s.size());
      d.insert(d.end(), s.begin(), s.end());
    }
    d = target_->wgmma_wait(0, d);
    for (auto it = more.rbegin(); it != more.rend(); ++it) {
      const Lowered held = vals_.at(it->first);
      std::vector<llvm::Value *> s(d.end() - static_cast<int64_t>(it->second), d.end());
      d.resize(d.size() - it->second);
      vals_[it->first] = slots_buffer(it->first->type, held.map, s);
    }
  }
  if (half_acc) { // waited for above: never chained nor left in flight
    std::vector<llvm::Value *> w;
    for (llvm::Value *x : d) {
      llvm::Value *h2 = b_.CreateBitCast(x, llvm::FixedVectorType::get(b_.getHalfTy(), 2));
      for (uint64_t j = 0; j < 2; ++j)
        w.push_back(b_.CreateFPExt(b_.CreateExtractElement(h2, j), b_.getFloatTy()));
    }
    d = std::move(w);
  }
  vals_[res] = slots_buffer(res->type, C, d);
  wgmma_acc_regs_ += C->slots() / (half_acc ? 2 : 1);
  wgmma_a_regs_ += static_cast<int64_t>(a_words.size());
}

auto Lowering::defer_wgmma_waits(const ir::Op &loop, bool *spare_slot) -> std::vector<size_t> {
  const ir::Block &body = *loop.regions[0];
  const ir::Op &yield = *body.ops.back();
  std::unordered_map<const ir::Op *, size_t> pos;
  for (const ir::Op *o : body.ops)
    pos[o] = pos.size();
  auto is_wgmma = [&](const ir::Op *o) {
    // f32 accumulators only: f16 ones are unpacked and int8 dots waited for
    // where they are issued.
    return o && o->kind == OpKind::Dot && pos.count(o) &&
           plan_->layout(o->result())->kind == gpu::Encoding::Kind::Mma && plan_->wgmma(*o) &&
           (o->operands[0]->type.elem == DType::f16 || o->operands[0]->type.elem == DType::bf16) &&
           o->result()->type.elem == DType::f32;
  };
  // Whether a top-level op reads `v`, itself or in its regions.
  std::function<bool(const ir::Op &, const ir::Value *)> reads = [&](const ir::Op &o,
                                                                     const ir::Value *v) {
    if (std::find(o.operands.begin(), o.operands.end(), v) != o.operands.end())
      return true;
    for (const ir::Block *r : o.regions)
      for (const ir::Op *n : r->ops)
        if (reads(*n, v))
          return true;
    return false;
  };
  std::vector<size_t> out;
  const ir::Op *only = nullptr;
  int wgmma_dots = 0;
  for (const ir::Op *o : body.ops)
    if (is_wgmma(o)) {
      only = o;
      ++wgmma_dots;
    }
  for (size_t k = 0; k < yield.operands.size() && wgmma_dots == 1; ++k) {
    const ir::Value *y = yield.operands[k], *arg = body.args[k + 1];
    auto fused = add_is_dot_.find(y);
    const ir::Value *dv = fused != add_is_dot_.end() ? fused->second : y;
    if (dv->def != only || uses_[y] != 1 || uses_[arg] != 1)
      continue;
    auto acc = dot_acc_.find(dv);
    if ((acc != dot_acc_.end() ? acc->second : only->operands[2]) != arg)
      continue;
    wgmma_chain_.insert(only);
    out.push_back(k);
  }
  if (!out.empty())
    return out;
  for (size_t k = 0; k < yield.operands.size(); ++k) {
    const ir::Value *y = yield.operands[k], *arg = body.args[k + 1];
    const ir::Op *dot = y->def;
    if (!is_wgmma(dot) || uses_[y] != 1 || dot_acc_.count(y) || wgmma_no_wait_.count(dot))
      continue;
    // The first wgmma dot of the body, before every reader of the carried value.
    const ir::Op *first = nullptr;
    for (const ir::Op *o : body.ops)
      if (is_wgmma(o)) {
        first = o;
        break;
      }
    if (!first || first == dot || pos[first] > pos[dot] || reads(*first, arg))
      continue;
    bool later = true;
    for (const ir::Op *o : body.ops)
      if (pos[o] <= pos[first] && reads(*o, arg))
        later = false;
    if (!later)
      continue;
    wgmma_no_wait_.insert(dot);
    wgmma_await_[first].push_back(arg);
    out.push_back(k);
    *spare_slot = true;
  }
  return out;
}

auto Lowering::await_wgmma_results(const ir::Op &loop, const std::vector<size_t> &carried) -> void {
  for (size_t k : carried) {
    const ir::Value *r = loop.results[k];
    const Lowered held = vals_.at(r);
    vals_[r] = slots_buffer(r->type, held.map, target_->wgmma_wait(0, slot_values(r, held)));
  }
}

auto Lowering::cap_registers_for_wgmma() -> void {
  // An SM holds 64K registers and 228 KB of shared memory (1 KB of it per
  // CTA for the system). Where capping the registers fits one more CTA on
  // an SM and leaves the accumulators 40 registers beside them, cap them
  // at the loosest such bound: measured on the H200, attention d64 with 8
  // warps (64 accumulator registers) 202 -> 235 TFLOP/s under 128 (2 CTAs,
  // a few spills); on the H100, matmul.py 128x128x32 with 4 warps (128)
  // under 168 (3 CTAs, no spills; Triton's PTX takes 168 on its own).
  constexpr int64_t kHeadroom = 40;
  const int64_t smem = int64_t{target_->shared_bytes()} + 1024;
  if (wgmma_acc_regs_ == 0)
    return;
  for (int64_t ctas = 2; ctas * smem <= 228 * 1024; ++ctas) {
    const int64_t cap = 65536 / (ctas * threads_) / 8 * 8;
    if (cap > 255)
      continue;
    // Beyond two CTAs, operands staged through registers (loads not 16-byte
    // aligned) or A held in registers need their own room: matmul.py
    // 4000x4100x3900 spilled 778 bytes under 168, and attention with 4
    // warps (128 accumulator registers, q and p as 64 A registers) 184
    // bytes, which cost it 25% on the H100 (tutorial 06 d64: 1366 -> 1705 us).
    if (cap < wgmma_acc_regs_ + kHeadroom ||
        (ctas > 2 && (wgmma_staged_ || cap < wgmma_acc_regs_ + wgmma_a_regs_ + kHeadroom)))
      return;
    llvm::Function *k = mod_->getFunction(prog_.kernel().name);
    llvm::NamedMDNode *ann = mod_->getOrInsertNamedMetadata("nvvm.annotations");
    ann->addOperand(llvm::MDNode::get(
        ctx_, {llvm::ValueAsMetadata::get(k), llvm::MDString::get(ctx_, "maxnreg"),
               llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(cap)))}));
    return;
  }
}

} // namespace kiln::llvmgen::detail
