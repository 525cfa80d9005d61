// tl.dot on tensor cores (mma.sync m16n8k16 for f16/bf16 with f32 or f16
// accumulators, m16n8k8 for tf32 and tf32x3, m16n8k32 for int8): operands
// staged in XOR-swizzled shared memory, fragments read with ldmatrix, the
// accumulator in the mma layout of gpu/mma_layout.hpp.
#include "compiler/llvm/lowering.hpp"

#include <llvm/IR/InlineAsm.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {

auto Lowering::staged_address(const Staged &st, llvm::Value *row, llvm::Value *col)
    -> llvm::Value * {
  int64_t len = st.row_len;
  llvm::Value *panel = nullptr;
  if (st.panel && len * st.bytes > 128) {
    len = 128 / st.bytes;
    panel = b_.CreateMul(b_.CreateLShr(col, gpu::log2_exact(len)),
                         b_.getInt32(static_cast<uint32_t>(st.rows * len)));
    col = b_.CreateAnd(col, len - 1);
  }
  const int64_t per_chunk = 16 / st.bytes, chunks = len / per_chunk;
  const int64_t per_phase = std::max<int64_t>(1, 8 / chunks), phases = std::min<int64_t>(chunks, 8);
  const int cb = gpu::log2_exact(per_chunk);
  llvm::Value *phase = b_.CreateAnd(b_.CreateLShr(row, gpu::log2_exact(per_phase)), phases - 1);
  llvm::Value *chunk = b_.CreateXor(b_.CreateLShr(col, cb), phase);
  llvm::Value *at =
      b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(len))),
                   b_.CreateOr(b_.CreateShl(chunk, cb), b_.CreateAnd(col, per_chunk - 1)));
  if (panel)
    at = b_.CreateAdd(at, panel);
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), st.base, b_.CreateMul(at, b_.getInt32(st.bytes)));
}

auto Lowering::stage_operand(const ir::Value *v, const Staged &st, int row_dim) -> void {
  const MapPtr H = map_for(plan_->layout(v), v->type);
  const DType et = v->type.elem;
  int run_dim = -1;
  const int run = gpu::run_bits(*H, gpu::shape_of(v->type), &run_dim);
  const int64_t vec =
      run_dim == 1 - row_dim ? std::min<int64_t>(int64_t{1} << run, 16 / st.bytes) : 1;
  std::vector<llvm::Value *> vals(H->slots()), at(H->slots());
  for_slots(*H, v->type, [&](int64_t s, const Idx &i) {
    vals[s] = to_mem(element(v, i), et);
    if (s % vec == 0)
      at[s] = staged_address(st, b_.CreateTrunc(i[row_dim], b_.getInt32Ty()),
                             b_.CreateTrunc(i[1 - row_dim], b_.getInt32Ty()));
  });
  llvm::Type *mt = mem_type(et);
  for (int64_t s = 0; s < H->slots(); s += vec) {
    llvm::Value *x = vals[s];
    if (vec > 1) {
      x = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(vec)));
      for (int64_t j = 0; j < vec; ++j)
        x = b_.CreateInsertElement(x, vals[s + j], j);
    }
    b_.CreateAlignedStore(x, at[s], llvm::Align(vec * st.bytes));
  }
}

bool is_zero_splat(const ir::Value *v) {
  const ir::Op *d = v->def;
  while (d && (d->kind == OpKind::Splat || d->kind == OpKind::Broadcast))
    d = d->operands[0]->def;
  return d && d->kind == OpKind::Constant && d->f == 0 && d->i == 0;
}

auto Lowering::fuse_dot_adds(const ir::Block &blk) -> void {
  std::unordered_map<const ir::Op *, size_t> pos;
  for (const ir::Op *op : blk.ops) {
    pos[op] = pos.size();
    for (const ir::Block *r : op->regions)
      fuse_dot_adds(*r);
    if (op->kind != OpKind::Binary || static_cast<BinaryOp>(op->sub) != BinaryOp::Add ||
        !op->result()->type.is_block())
      continue;
    for (int k = 0; k < 2; ++k) {
      const ir::Value *d = op->operands[k], *x = op->operands[1 - k];
      const ir::Op *dot = d->def;
      if (!dot || dot->kind != OpKind::Dot || !pos.count(dot) || uses_[d] != 1 ||
          !is_zero_splat(dot->operands[2]) || !(x->type == d->type) ||
          plan_->layout(d)->kind != gpu::Encoding::Kind::Mma)
        continue;
      // The addend must exist when the dot runs: defined before it or outside this block.
      if (x->def && pos.count(x->def) && pos[x->def] > pos[dot])
        continue;
      dot_acc_[d] = x;
      add_is_dot_[op->result()] = d;
      break;
    }
  }
}

auto Lowering::a_fragments(const ir::Value *a, const gpu::EncodingPtr &operand)
    -> std::vector<llvm::Value *> {
  const MapPtr held = map_for(plan_->layout(a), a->type), view = map_for(operand, a->type);
  if (!gpu::slot_map(*view, *held))
    return {};
  prepare(a, *view);
  std::vector<llvm::Value *> halves(view->slots()), words;
  for_slots(*view, a->type,
            [&](int64_t s, const Idx &i) { halves[s] = to_mem(element(a, i), a->type.elem); });
  // Rounded from floats (attention's p): one cvt.rn.f16x2.f32 a word.
  // Loaded (q): the halves as loaded, which the optimizer sees through
  // (a paired conversion would round them again from floats kept live).
  if (!a->def || a->def->kind != OpKind::Load)
    return target_->pack_words(halves);
  auto bits = [&](llvm::Value *h) {
    return b_.CreateZExt(b_.CreateBitCast(h, b_.getInt16Ty()), b_.getInt32Ty());
  };
  for (size_t s = 0; s + 1 < halves.size(); s += 2)
    words.push_back(b_.CreateOr(bits(halves[s]), b_.CreateShl(bits(halves[s + 1]), 16)));
  return words;
}

auto Lowering::lower_dot_mma(const ir::Op &op) -> void {
  const ir::Value *a = op.operands[0], *bm = op.operands[1], *acc = op.operands[2],
                  *res = op.result();
  if (auto it = dot_acc_.find(res); it != dot_acc_.end())
    acc = it->second;
  const int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
  const gpu::MmaKind kind = plan_->mma_kind(op);
  const gpu::EncodingPtr enc = plan_->layout(res);
  const MapPtr C = map_for(enc, res->type);
  const int wm = enc->mma_warps[0], wn = enc->mma_warps[1];
  const int bytes = gpu::mma_operand_bytes(kind), ks_len = gpu::mma_k(kind);
  const int64_t reps_m = M / (16 * wm), reps_n = N / (8 * wn), per_chunk = 16 / bytes;

  // Each operand is stored with the dim its held layout runs along in the
  // rows (16-byte stores); ldmatrix.trans reads a 16-bit operand stored
  // across K. 32-bit and 8-bit elements only go along K (ldmatrix moves
  // 16-bit ones: an 8x8 matrix of them is 8 rows of 16 bytes, which holds
  // the A and B fragments of tf32 and int8 only when K runs along the row).
  auto along_k = [&](const ir::Value *v, int k_dim) {
    const MapPtr held = map_for(plan_->layout(v), v->type);
    prepare(v, *held); // any conversion first: it uses the same shared memory
    int d = -1;
    gpu::run_bits(*held, gpu::shape_of(v->type), &d);
    return bytes != 2 || d == k_dim || d < 0;
  };
  // Operands a pipeline fetched ahead (llvm/lower_pipeline.cpp) are in
  // shared memory already, laid out the same way.
  auto pre_a = prestaged_.find(a), pre_b = prestaged_.find(bm);
  const bool have_b = pre_b != prestaged_.end();
  // A already in registers as A fragments (attention's p: with warps over M
  // only, the accumulator layout is operand A's up to the slot order).
  std::vector<llvm::Value *> a_words;
  if (pre_a == prestaged_.end() && bytes == 2)
    a_words = a_fragments(a, gpu::dot_operand(0, enc, 2));
  const bool have_a = pre_a != prestaged_.end() || !a_words.empty();
  Staged sa = pre_a != prestaged_.end() ? pre_a->second : Staged{},
         sb = have_b ? pre_b->second : Staged{};
  if (!have_a) {
    sa.k_contig = along_k(a, 1);
    sa.bytes = bytes;
    sa.rows = sa.k_contig ? M : K;
    sa.row_len = sa.k_contig ? K : M;
  }
  if (!have_b) {
    sb.k_contig = along_k(bm, 0);
    sb.bytes = bytes;
    sb.rows = sb.k_contig ? N : K;
    sb.row_len = sb.k_contig ? K : N;
  }
  prepare(acc, *C);
  std::vector<llvm::Value *> d(C->slots());
  for_slots(*C, res->type, [&](int64_t s, const Idx &i) { d[s] = element(acc, i); });
  if (!have_a || !have_b) {
    llvm::Value *base =
        scratch(static_cast<unsigned>(((have_a ? 0 : M * K) + (have_b ? 0 : K * N)) * bytes));
    if (!have_a)
      sa.base = base;
    if (!have_b)
      sb.base = have_a ? base : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, M * K * bytes);
    target_->barrier();
    if (!have_a)
      stage_operand(a, sa, sa.k_contig ? 0 : 1);
    if (!have_b)
      stage_operand(bm, sb, sb.k_contig ? 1 : 0);
    target_->barrier();
  }

  llvm::Value *lane = b_.CreateTrunc(lane64_, b_.getInt32Ty());
  llvm::Value *warp = b_.CreateTrunc(warp64_, b_.getInt32Ty());
  llvm::Value *wid_n = b_.CreateAnd(warp, wn - 1);
  llvm::Value *wid_m = b_.CreateAnd(b_.CreateLShr(warp, gpu::log2_exact(wn)), wm - 1);
  llvm::Value *r8 = b_.CreateAnd(lane, 7), *j = b_.CreateLShr(lane, 3);
  llvm::Value *j_lo = b_.CreateAnd(j, 1), *j_hi = b_.CreateAnd(b_.CreateLShr(j, 1), 1);
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  auto add = [&](llvm::Value *x, llvm::Value *y) { return b_.CreateAdd(x, y); };
  // A: matrix j of a 16 x k-step tile is rows (j & 1) * 8.., chunk j >> 1.
  auto load_a = [&](int64_t mi, int64_t ks) {
    llvm::Value *m0 = add(i32(16 * mi * wm), b_.CreateMul(wid_m, i32(16)));
    llvm::Value *mrow = add(m0, add(b_.CreateMul(j_lo, i32(8)), r8));
    llvm::Value *at =
        sa.k_contig ? staged_address(sa, mrow, b_.CreateMul(add(i32(ks * 2), j_hi), i32(per_chunk)))
                    : staged_address(sa, add(i32(ks * ks_len), add(b_.CreateMul(j_hi, i32(8)), r8)),
                                     add(m0, b_.CreateMul(j_lo, i32(8))));
    return target_->load_matrices(at, 4, !sa.k_contig);
  };
  // B: tiles t and t + 1 (matrices j >> 1), k chunk j & 1.
  auto load_b = [&](int64_t t, int count) {
    return [&, t, count](int64_t ks) {
      llvm::Value *tile = count == 4 ? add(i32(t), j_hi) : i32(t);
      llvm::Value *n0 = add(b_.CreateMul(tile, i32(8 * wn)), b_.CreateMul(wid_n, i32(8)));
      llvm::Value *at =
          sb.k_contig
              ? staged_address(sb, add(n0, r8),
                               b_.CreateMul(add(i32(ks * 2), j_lo), i32(per_chunk)))
              : staged_address(sb, add(i32(ks * ks_len), add(b_.CreateMul(j_lo, i32(8)), r8)), n0);
      return target_->load_matrices(at, count, !sb.k_contig);
    };
  };
  // tf32x3 (Triton's F32DotTC): x = big + small with big = cvt.rna.tf32(x);
  // small * big over all of K, then big * small onto it, NaNs (of inf - inf)
  // zeroed, then big * big onto that, and the accumulator added last.
  enum class Part { All, Big, Small };
  auto split = [&](std::vector<llvm::Value *> w, Part p) {
    if (p != Part::All)
      for (llvm::Value *&x : w) {
        llvm::Value *f = b_.CreateBitCast(x, b_.getFloatTy());
        llvm::Value *big = target_->round_tf32(f);
        x = b_.CreateBitCast(p == Part::Big ? big : b_.CreateFSub(f, big), b_.getInt32Ty());
      }
    return w;
  };
  const gpu::MmaKind step_kind = kind == gpu::MmaKind::TF32X3 ? gpu::MmaKind::TF32 : kind;
  const int nb = gpu::log2_exact(reps_n);
  auto k_loop = [&](std::vector<llvm::Value *> &acc_regs, Part pa, Part pb) {
    for (int64_t ks = 0; ks < K / ks_len; ++ks) {
      std::vector<std::vector<llvm::Value *>> af, bf(reps_n);
      const int kb = gpu::log2_exact(K / ks_len);
      for (int64_t mi = 0; mi < reps_m; ++mi) {
        if (a_words.empty()) {
          af.push_back(split(load_a(mi, ks), pa));
          continue;
        }
        // Word r | ks << 2 | mi << (2 + kb): slot bits k0, m3, k3, then k steps, then m tiles.
        const int64_t w0 = (ks << 2) | (mi << (2 + kb));
        af.emplace_back(a_words.begin() + w0, a_words.begin() + w0 + 4);
      }
      for (int64_t t = 0; t < reps_n; t += 2) {
        const int count = t + 1 < reps_n ? 4 : 2;
        std::vector<llvm::Value *> w = split(load_b(t, count)(ks), pb);
        bf[t] = {w[0], w[1]};
        if (count == 4)
          bf[t + 1] = {w[2], w[3]};
      }
      for (int64_t mi = 0; mi < reps_m; ++mi)
        for (int64_t t = 0; t < reps_n; ++t) {
          const int64_t s0 = (t << 2) | (mi << (2 + nb));
          std::vector<llvm::Value *> c(acc_regs.begin() + s0, acc_regs.begin() + s0 + 4);
          std::vector<llvm::Value *> r = target_->mma(step_kind, af[mi], bf[t], c);
          std::copy(r.begin(), r.end(), acc_regs.begin() + s0);
        }
    }
  };
  if (kind != gpu::MmaKind::TF32X3) {
    k_loop(d, Part::All, Part::All);
  } else {
    llvm::Value *zero = llvm::ConstantFP::get(b_.getFloatTy(), 0.0);
    // Each pass reads its fragments anew (an empty asm that clobbers memory
    // keeps the loads apart): shared by the three, every k step's would stay
    // live throughout, and 64x64x64 tiles spilled.
    auto reread = [&] {
      b_.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), false), "",
                                         "~{memory}", /*hasSideEffects=*/true),
                    {});
    };
    std::vector<llvm::Value *> sum(d.size(), zero);
    k_loop(sum, Part::Small, Part::Big);
    reread();
    k_loop(sum, Part::Big, Part::Small);
    for (llvm::Value *&x : sum)
      x = b_.CreateSelect(b_.CreateFCmpUNO(x, x), zero, x);
    reread();
    k_loop(sum, Part::Big, Part::Big);
    for (size_t s = 0; s < d.size(); ++s)
      d[s] = b_.CreateFAdd(sum[s], d[s]);
  }
  vals_[res] = slots_buffer(res->type, C, d);
}

} // namespace kiln::llvmgen::detail
