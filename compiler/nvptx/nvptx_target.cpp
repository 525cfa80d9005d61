// What only the NVPTX target has: shared memory, barriers, warp shuffles,
// predicated and vector PTX memory access, fast approximate math and
// libdevice, and the kernel entry (program ids from %ctaid, threads).
#include "compiler/llvm/lowering.hpp"
#include "compiler/llvm/target_lowering.hpp"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "kiln/error.hpp"

namespace kiln::llvmgen::detail {
/// NVPTX: one program is one CTA; block values are spread over its
/// threads by the layouts of gpu/layout_plan.hpp.
class NvptxTarget final : public TargetLowering {
public:
  explicit NvptxTarget(Lowering &l) : l_(l), b_(l.b_), mod_(l.mod_), ctx_(l.ctx_) {}

  bool distributes_blocks() const override { return true; }
  llvm::Value *reread_thread_id() override;
  void define_kernel(const ir::Function &k) override;
  MathLibrary math_library() const override { return MathLibrary::Libdevice; }
  llvm::Value *unary_math(UnaryOp u, llvm::Value *x, const Type &t) override;
  llvm::Value *binary_math(BinaryOp op, llvm::Value *x, llvm::Value *y, const Type &t) override;
  // sm_80+ rounds to bf16 in one instruction (cvt.rn.bf16.f32) where the
  // shared rounding takes seven, and LLVM then narrows bf16 products and
  // sums of loaded bf16 values to mul/add.rn.bf16.
  bool native_bf16() const override { return l_.sm_ >= 80; }
  llvm::Value *masked_load(llvm::Value *ptr, llvm::Value *mask, llvm::Value *other,
                           DType t) override;
  bool masked_store(llvm::Value *ptr, llvm::Value *mask, llvm::Value *v) override;
  std::vector<llvm::Value *> vector_load(llvm::Value *ptr, llvm::Value *mask,
                                         const std::vector<llvm::Value *> &others,
                                         DType t) override;
  void vector_store(llvm::Value *ptr, llvm::Value *mask,
                    const std::vector<llvm::Value *> &vals) override;
  bool vector_atomic_add(llvm::Value *ptr, llvm::Value *mask,
                         const std::vector<llvm::Value *> &vals, DType t) override;
  void barrier() override;
  llvm::Value *shuffle(Shuffle kind, llvm::Value *v, int amount) override;
  llvm::Value *shared_memory(unsigned bytes) override;
  unsigned shared_bytes() const override { return shared_bytes_; }
  std::vector<llvm::Value *> load_matrices(llvm::Value *row, int count, bool trans) override;
  llvm::Value *round_tf32(llvm::Value *f) override;
  // sm_89+ converts e4m3 and e5m2 by instruction, as Triton does; the
  // shared lowering decodes through a table of 256 floats, a load an element.
  llvm::Value *fp8_to_float(llvm::Value *code, DType t) override;
  llvm::Value *float_to_fp8(llvm::Value *f, DType t) override;
  std::vector<llvm::Value *> mma(gpu::MmaKind k, const std::vector<llvm::Value *> &a,
                                 const std::vector<llvm::Value *> &b,
                                 const std::vector<llvm::Value *> &c) override;
  void async_copy(llvm::Value *dst, llvm::Value *src, llvm::Value *pred, int bytes) override;
  void async_commit() override;
  void async_wait(int pending) override;
  void fence_async_shared() override;
  std::vector<llvm::Value *> wgmma_fence(const std::vector<llvm::Value *> &d) override;
  void wgmma_commit() override;
  std::vector<llvm::Value *> wgmma_wait(int pending, const std::vector<llvm::Value *> &d) override;
  std::vector<llvm::Value *> wgmma(gpu::MmaKind k, const std::vector<llvm::Value *> &d,
                                   const std::vector<llvm::Value *> &a, llvm::Value *b,
                                   bool trans_a, bool trans_b, bool add) override;
  std::vector<llvm::Value *> pack_words(const std::vector<llvm::Value *> &vals) override;

private:
  llvm::Value *exp2_full(llvm::Value *x);
  llvm::Value *div_full(llvm::Value *a, llvm::Value *b);
  /// Inline PTX `text` with side effects whose first d.size() operands are
  /// registers read and written (`d` in, the new values out: f32, or 32-bit
  /// words), then `in`.
  std::vector<llvm::Value *> asm_through(const std::string &text,
                                         const std::vector<llvm::Value *> &d,
                                         const std::vector<llvm::Value *> &in,
                                         const std::string &in_constraints);
  void asm_effect(const char *text);
  /// `@$operand ` predicating an inline PTX instruction on `mask` (an i1 in
  /// a predicate register, constraint `b`, appended to `constraints`), or
  /// nothing when there is no mask.
  static std::string guard(llvm::Value *mask, size_t operand, std::string *constraints);
  std::vector<llvm::Value *> unpack_words(const std::vector<llvm::Value *> &words, llvm::Type *t,
                                          size_t n);
  std::vector<llvm::Value *> asm_vector_load(llvm::Value *ptr, llvm::Value *mask,
                                             const std::vector<llvm::Value *> &others);
  void asm_vector_store(llvm::Value *ptr, llvm::Value *mask,
                        const std::vector<llvm::Value *> &vals);
  static const char *ptx_class(llvm::Type *t, unsigned *bits);

  Lowering &l_;
  llvm::IRBuilder<> &b_;
  std::unique_ptr<llvm::Module> &mod_;
  llvm::LLVMContext &ctx_;
  llvm::GlobalVariable *smem_ = nullptr;
  unsigned shared_bytes_ = 0;
};

// ptxas expands ex2.approx.f32 and div.full.f32 into several SASS instructions
// per use, at a cost of its own: in softmax those expansions were a fifth of
// the assembler's time. Written out here as the exact SASS sequences (checked
// bit for bit on an H200 over every ex2 input and 2^33 divisions), ptxas has
// plain instructions to schedule, and LLVM shares a divisor's half of div.full
// between the elements of a block that divide by one value.

/// ex2.approx.f32: MUFU.EX2 flushes results below 2^-126, so inputs below
/// -126 (not NaN) are halved and the result squared.
auto NvptxTarget::exp2_full(llvm::Value *x) -> llvm::Value * {
  llvm::Type *f = x->getType();
  llvm::Value *normal = b_.CreateFCmpUGE(x, llvm::ConstantFP::get(f, -126.0));
  llvm::Value *in = b_.CreateSelect(normal, x, b_.CreateFMul(x, llvm::ConstantFP::get(f, 0.5)));
  llvm::Value *y = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {in});
  return b_.CreateSelect(normal, y, b_.CreateFMul(y, y));
}

/// div.full.f32: a * rcp(b), both scaled by 1/4 when |b| > 2^126 and by 2^24
/// when |b| < 2^-126, so that MUFU.RCP sees a normal number in its range.
auto NvptxTarget::div_full(llvm::Value *a, llvm::Value *b) -> llvm::Value * {
  llvm::Type *f = a->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  llvm::Value *mag = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b);
  llvm::Value *scale =
      b_.CreateSelect(b_.CreateFCmpOGT(mag, c(0x1p126)), c(0.25),
                      b_.CreateSelect(b_.CreateFCmpOLT(mag, c(0x1p-126)), c(0x1p24), c(1.0)));
  llvm::Value *r =
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_approx_ftz_f, {}, {b_.CreateFMul(b, scale)});
  return b_.CreateFMul(r, b_.CreateFMul(a, scale));
}

auto NvptxTarget::binary_math(BinaryOp op, llvm::Value *x, llvm::Value *y, const Type &t)
    -> llvm::Value * {
  if (op == BinaryOp::Div && x->getType()->isFloatTy()) // as Triton's `/`: div.full
    return l_.fresult(div_full(x, y), t);
  if (op == BinaryOp::Pow) // NVPTX has no pow instruction: libdevice's
    return l_.fresult(l_.library_call("pow", {x, y}), t);
  return nullptr;
}

auto NvptxTarget::unary_math(UnaryOp u, llvm::Value *x, const Type &t) -> llvm::Value * {
  using U = UnaryOp;
  const bool dbl = x->getType()->isDoubleTy();
  auto libdevice = [&](const char *name) { return l_.fresult(l_.library_call(name, {x}), t); };
  auto call = [&](llvm::Intrinsic::ID id, llvm::Value *v) {
    return b_.CreateIntrinsic(id, {}, {v});
  };
  switch (u) {
  case U::Exp:
    if (dbl)
      return libdevice("exp");
    return l_.fresult(
        exp2_full(b_.CreateFMul(x, llvm::ConstantFP::get(x->getType(), 1.4426950408889634))), t);
  case U::Exp2:
    // Triton's exp2 on fp32 flushes denormal results: one MUFU.EX2, where the
    // non-ftz form adds a range fix-up around it in the hottest op of attention.
    return dbl ? libdevice("exp2") : l_.fresult(call(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, x), t);
  // log, log2, sin and cos are libdevice's on fp32 too, as Triton 3.6 lowers
  // them (only exp and exp2 are its approximate instructions): lg2.approx
  // put DeepSeek-V3's ue8m0 scales, ceil(log2(amax / 448)), one power of
  // two above Triton's in 0.3% of blocks (H100, gpu_parity.py).
  case U::Log:
    return libdevice("log");
  case U::Log2:
    return libdevice("log2");
  case U::Sin:
    return libdevice("sin");
  case U::Cos:
    return libdevice("cos");
  default:
    return nullptr;
  }
}

auto NvptxTarget::vector_load(llvm::Value *ptr, llvm::Value *mask,
                              const std::vector<llvm::Value *> &others, DType t)
    -> std::vector<llvm::Value *> {
  std::vector<llvm::Value *> mem;
  for (llvm::Value *o : others)
    mem.push_back(l_.to_mem(o, t));
  std::vector<llvm::Value *> got =
      unpack_words(asm_vector_load(ptr, mask, pack_words(mem)), l_.mem_type(t), mem.size());
  for (llvm::Value *&x : got)
    x = l_.from_mem(x, t);
  return got;
}

auto NvptxTarget::vector_store(llvm::Value *ptr, llvm::Value *mask,
                               const std::vector<llvm::Value *> &vals) -> void {
  asm_vector_store(ptr, mask, pack_words(vals));
}

auto NvptxTarget::pack_words(const std::vector<llvm::Value *> &vals) -> std::vector<llvm::Value *> {
  // Elements narrower than 32 bits travel in 32-bit words whenever they
  // fill them (as Triton's ld.global.v2.b32 of 4 halves): ptxas merges the
  // 16-bit parts of a predicated v4.b16 load with its defaults by a PRMT
  // each, 16 a loop iteration in the tutorial's layer norm.
  const unsigned bits = vals[0]->getType()->getPrimitiveSizeInBits(), per = 32 / bits;
  if (bits >= 32 || (vals.size() * bits) % 32 != 0)
    return vals;
  // Through <per x iN> vectors, not shifts: ptxas then gets one mov.b32 of a
  // register pair (as Triton), which saved two registers in Liger's swiglu.
  auto *vt = llvm::FixedVectorType::get(b_.getIntNTy(bits), per);
  // The float a half memory value was rounded from (to_mem of a value held
  // as float: bf16 bits of a bfloat fptrunc, an f16 fptrunc of a rounded
  // float), and the packed conversion that rounds two of them at once.
  auto rounded_from = [](llvm::Value *v, llvm::Intrinsic::ID *id) -> llvm::Value * {
    if (auto *bits16 = llvm::dyn_cast<llvm::BitCastInst>(v))
      v = bits16->getOperand(0);
    auto *tr = llvm::dyn_cast<llvm::FPTruncInst>(v);
    if (!tr || !tr->getSrcTy()->isFloatTy())
      return nullptr;
    llvm::Value *x = tr->getOperand(0);
    if (auto *ext = llvm::dyn_cast<llvm::FPExtInst>(x); ext && ext->getSrcTy() == tr->getDestTy()) {
      auto *inner = llvm::dyn_cast<llvm::FPTruncInst>(ext->getOperand(0));
      if (!inner || !inner->getSrcTy()->isFloatTy())
        return nullptr; // a half as loaded: nothing to round
      x = inner->getOperand(0); // f16 registers are fpext(fptrunc(x))
    }
    *id = tr->getDestTy()->isBFloatTy() ? llvm::Intrinsic::nvvm_ff2bf16x2_rn
                                        : llvm::Intrinsic::nvvm_ff2f16x2_rn;
    return tr->getDestTy()->isBFloatTy() || tr->getDestTy()->isHalfTy() ? x : nullptr;
  };
  std::vector<llvm::Value *> words;
  for (size_t w = 0; w < vals.size() / per; ++w) {
    llvm::Intrinsic::ID id_lo = llvm::Intrinsic::not_intrinsic, id_hi = id_lo;
    llvm::Value *lo = per == 2 ? rounded_from(vals[w * 2], &id_lo) : nullptr,
                *hi = per == 2 ? rounded_from(vals[w * 2 + 1], &id_hi) : nullptr;
    if (lo && hi && id_lo == id_hi && l_.sm_ >= 80) {
      // Both rounded by one cvt.rn.{bf16x2,f16x2}.f32 (as Triton): no
      // 16-bit registers in between.
      words.push_back(b_.CreateBitCast(b_.CreateIntrinsic(id_lo, {}, {hi, lo}), b_.getInt32Ty()));
      continue;
    }
    llvm::Value *word = llvm::PoisonValue::get(vt);
    for (unsigned j = 0; j < per; ++j)
      word = b_.CreateInsertElement(word, b_.CreateBitCast(vals[w * per + j], b_.getIntNTy(bits)),
                                    uint64_t{j});
    words.push_back(b_.CreateBitCast(word, b_.getInt32Ty()));
  }
  return words;
}

auto NvptxTarget::unpack_words(const std::vector<llvm::Value *> &words, llvm::Type *t, size_t n)
    -> std::vector<llvm::Value *> {
  if (words.size() == n)
    return words;
  const unsigned bits = t->getPrimitiveSizeInBits(), per = 32 / bits;
  auto *vt = llvm::FixedVectorType::get(t, per);
  std::vector<llvm::Value *> vals;
  for (llvm::Value *w : words) {
    llvm::Value *v = b_.CreateBitCast(w, vt);
    for (unsigned j = 0; j < per; ++j)
      vals.push_back(b_.CreateExtractElement(v, uint64_t{j}));
  }
  return vals;
}

auto NvptxTarget::asm_vector_load(llvm::Value *ptr, llvm::Value *mask,
                                  const std::vector<llvm::Value *> &others)
    -> std::vector<llvm::Value *> {
  llvm::Type *mt = others[0]->getType();
  unsigned bits = 0;
  const char *cls = ptx_class(mt, &bits);
  const size_t v = others.size();
  // Operands: the v results, the address, the v fallbacks, then the mask.
  std::string regs, movs, cons;
  for (size_t j = 0; j < v; ++j) {
    regs += (j ? ", $" : "$") + std::to_string(j);
    movs += "mov.b" + std::to_string(bits) + " $" + std::to_string(j) + ", $" +
            std::to_string(v + 1 + j) + "; ";
    cons += std::string(j ? ",=" : "=") + cls;
  }
  cons += ",l";
  for (size_t j = 0; j < v; ++j)
    cons += std::string(",") + cls;
  const std::string op =
      v == 1 ? "ld.global.b" + std::to_string(bits) + " " + regs
             : "ld.global.v" + std::to_string(v) + ".b" + std::to_string(bits) + " {" + regs + "}";
  const std::string text =
      movs + guard(mask, 2 * v + 1, &cons) + op + ", [$" + std::to_string(v) + "];";
  std::vector<llvm::Type *> rts(v, mt);
  std::vector<llvm::Type *> params = {b_.getPtrTy()};
  std::vector<llvm::Value *> args = {ptr};
  for (llvm::Value *o : others) {
    params.push_back(mt);
    args.push_back(o);
  }
  if (mask) {
    params.push_back(b_.getInt1Ty());
    args.push_back(mask);
  }
  // One output is returned as itself: LLVM's IR reader refuses a
  // one-member struct from inline asm.
  llvm::Type *rt = v == 1 ? mt : llvm::StructType::get(ctx_, rts);
  auto *fty = llvm::FunctionType::get(rt, params, false);
  llvm::Value *r = b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, false), args);
  if (v == 1)
    return {r};
  std::vector<llvm::Value *> out;
  for (size_t j = 0; j < v; ++j)
    out.push_back(b_.CreateExtractValue(r, static_cast<unsigned>(j)));
  return out;
}

auto NvptxTarget::asm_vector_store(llvm::Value *ptr, llvm::Value *mask,
                                   const std::vector<llvm::Value *> &vals) -> void {
  unsigned bits = 0;
  const char *cls = ptx_class(vals[0]->getType(), &bits);
  const size_t v = vals.size();
  // Operands: the address, the v values, then the mask.
  std::string regs, cons = "l";
  for (size_t j = 0; j < v; ++j) {
    regs += (j ? ", $" : "$") + std::to_string(j + 1);
    cons += std::string(",") + cls;
  }
  const std::string text =
      guard(mask, v + 1, &cons) + "st.global" +
      (v == 1 ? ".b" + std::to_string(bits) + " [$0], " + regs
              : ".v" + std::to_string(v) + ".b" + std::to_string(bits) + " [$0], {" + regs + "}") +
      ";";
  cons += ",~{memory}";
  std::vector<llvm::Type *> params = {b_.getPtrTy()};
  std::vector<llvm::Value *> args = {ptr};
  for (llvm::Value *x : vals) {
    params.push_back(x->getType());
    args.push_back(x);
  }
  if (mask) {
    params.push_back(b_.getInt1Ty());
    args.push_back(mask);
  }
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, true), args);
}

auto NvptxTarget::vector_atomic_add(llvm::Value *ptr, llvm::Value *mask,
                                    const std::vector<llvm::Value *> &vals, DType t) -> bool {
  // Split-K matmuls (triton-lang/kernels' SPLIT_K > 1) add their tiles this
  // way, where an atom.add an element, each returning its old value, took
  // longer than the product. red.add.noftz.f16x2 since sm_60; bf16x2 and
  // the vector forms (.v2/.v4 of f32 or of packed halves) since sm_90.
  const bool half = t == DType::f16 || t == DType::bf16;
  if ((t != DType::f32 && !half) || l_.sm_ < (t == DType::f16 ? 60 : 90) ||
      (t == DType::f32 && vals.size() < 2))
    return false;
  const std::vector<llvm::Value *> words = half ? pack_words(vals) : vals;
  const size_t per = l_.sm_ >= 90 ? words.size() : 1; // 32-bit words an instruction
  const std::string type = t == DType::f32 ? "f32" : t == DType::f16 ? "f16x2" : "bf16x2";
  for (size_t j = 0; j < words.size(); j += per) {
    std::string regs, cons = "l";
    std::vector<llvm::Type *> params = {b_.getPtrTy()};
    std::vector<llvm::Value *> args = {j ? b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ptr, 4 * j)
                                         : ptr};
    for (size_t w = 0; w < per; ++w) {
      regs += (w ? ", $" : "$") + std::to_string(w + 1);
      cons += t == DType::f32 ? ",f" : ",r";
      params.push_back(words[j + w]->getType());
      args.push_back(words[j + w]);
    }
    const std::string pred = guard(mask, per + 1, &cons);
    cons += ",~{memory}";
    if (mask) {
      params.push_back(b_.getInt1Ty());
      args.push_back(mask);
    }
    const std::string text = pred + "red.global.add." + (half ? "noftz." : "") +
                             (per > 1 ? "v" + std::to_string(per) + "." : "") + type + " [$0], " +
                             (per > 1 ? "{" + regs + "}" : regs) + ";";
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, true), args);
  }
  return true;
}

auto NvptxTarget::guard(llvm::Value *mask, size_t operand, std::string *constraints)
    -> std::string {
  if (!mask)
    return "";
  *constraints += ",b";
  return "@$" + std::to_string(operand) + " ";
}

auto NvptxTarget::ptx_class(llvm::Type *t, unsigned *bits) -> const char * {
  *bits = t->getPrimitiveSizeInBits();
  if (t->isFloatTy())
    return "f";
  if (t->isDoubleTy())
    return "d";
  if (t->isIntegerTy(16) || t->isHalfTy())
    return "h";
  if (t->isIntegerTy(32))
    return "r";
  if (t->isIntegerTy(64) || t->isPointerTy())
    return "l";
  return nullptr;
}

auto NvptxTarget::masked_load(llvm::Value *ptr, llvm::Value *mask, llvm::Value *other, DType t)
    -> llvm::Value * {
  llvm::Type *mt = l_.mem_type(t);
  unsigned bits = 0;
  const char *cls = ptx_class(mt, &bits);
  if (!cls || t == DType::i1)
    return nullptr;
  return l_.from_mem(asm_vector_load(ptr, mask, {l_.to_mem(other, t)})[0], t);
}

auto NvptxTarget::masked_store(llvm::Value *ptr, llvm::Value *mask, llvm::Value *v) -> bool {
  unsigned bits = 0;
  const char *cls = ptx_class(v->getType(), &bits);
  if (!cls || bits < 16)
    return false;
  asm_vector_store(ptr, mask, {v});
  return true;
}

auto NvptxTarget::shared_memory(unsigned bytes) -> llvm::Value * {
  if (!smem_) {
    auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
    smem_ = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                     "kiln_smem", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    // 1024: the period of wgmma's 128-byte swizzle, which applies to
    // address bits (operand buffers start at multiples of it).
    smem_->setAlignment(llvm::Align(1024));
  }
  shared_bytes_ = std::max(shared_bytes_, (bytes + 15) / 16 * 16);
  return smem_;
}

auto NvptxTarget::load_matrices(llvm::Value *row, int count, bool trans)
    -> std::vector<llvm::Value *> {
  using I = llvm::Intrinsic::ID;
  const I plain[3] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16,
                      llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16,
                      llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16};
  const I transposed[3] = {llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16,
                           llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16,
                           llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16};
  const int which = count == 4 ? 2 : count == 2 ? 1 : 0;
  llvm::Value *r =
      b_.CreateIntrinsic(trans ? transposed[which] : plain[which], {row->getType()}, {row});
  if (count == 1)
    return {r};
  std::vector<llvm::Value *> out;
  for (int i = 0; i < count; ++i)
    out.push_back(b_.CreateExtractValue(r, static_cast<unsigned>(i)));
  return out;
}

/// PTX's name of the fp8 type of `v` when a cvt converts it here (sm_89+,
/// e4m3 / e5m2), else null; constants fold in the shared way instead.
static const char *cvt_fp8(DType t, const llvm::Value *v, int sm) {
  if (sm < 89 || llvm::isa<llvm::Constant>(v))
    return nullptr;
  return t == DType::f8e4nv ? "e4m3" : t == DType::f8e5 ? "e5m2" : nullptr;
}

auto NvptxTarget::fp8_to_float(llvm::Value *code, DType t) -> llvm::Value * {
  const char *fmt = cvt_fp8(t, code, l_.sm_);
  if (!fmt)
    return nullptr;
  // The pair's low half is the code's value: f16 holds every e4m3 and e5m2
  // value exactly, so the widening to float is exact too.
  const std::string text =
      std::string("{ .reg .b32 pair; cvt.rn.f16x2.") + fmt + "x2 pair, $1; cvt.u16.u32 $0, pair; }";
  auto *fty = llvm::FunctionType::get(b_.getInt16Ty(), {b_.getInt16Ty()}, false);
  llvm::Value *half = b_.CreateCall(llvm::InlineAsm::get(fty, text, "=h,h", false),
                                    {b_.CreateZExt(code, b_.getInt16Ty())});
  return b_.CreateFPExt(b_.CreateBitCast(half, b_.getHalfTy()), b_.getFloatTy());
}

auto NvptxTarget::float_to_fp8(llvm::Value *f, DType t) -> llvm::Value * {
  const char *fmt = cvt_fp8(t, f, l_.sm_);
  if (!fmt)
    return nullptr;
  // .satfinite: the largest finite value for overflows and infinities, as
  // the shared rounding; the pair's low byte converts the second operand.
  const std::string text = std::string("cvt.rn.satfinite.") + fmt + "x2.f32 $0, $1, $1;";
  auto *fty = llvm::FunctionType::get(b_.getInt16Ty(), {b_.getFloatTy()}, false);
  llvm::Value *pair = b_.CreateCall(llvm::InlineAsm::get(fty, text, "=h,f", false), {f});
  return b_.CreateTrunc(pair, b_.getInt8Ty());
}

auto NvptxTarget::round_tf32(llvm::Value *f) -> llvm::Value * {
  return b_.CreateBitCast(b_.CreateIntrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {f}),
                          b_.getFloatTy());
}

auto NvptxTarget::mma(gpu::MmaKind k, const std::vector<llvm::Value *> &a,
                      const std::vector<llvm::Value *> &b, const std::vector<llvm::Value *> &c)
    -> std::vector<llvm::Value *> {
  if (k == gpu::MmaKind::F8E4M3 || k == gpu::MmaKind::F8E5M2) {
    // LLVM 19 has no fp8 mma intrinsic: inline PTX, four bytes a word.
    const char *t = k == gpu::MmaKind::F8E4M3 ? "e4m3" : "e5m2";
    std::vector<llvm::Value *> in(a.begin(), a.end());
    in.insert(in.end(), b.begin(), b.end());
    return asm_through(std::string("mma.sync.aligned.m16n8k32.row.col.f32.") + t + "." + t +
                           ".f32 {$0, $1, $2, $3}, {$8, $9, $10, $11}, {$12, $13}, "
                           "{$0, $1, $2, $3};",
                       c, in, "r,r,r,r,r,r");
  }
  std::vector<llvm::Value *> args;
  // f16 operands go as pairs of halves; bf16, tf32 and int8 as 32-bit words.
  auto *h2 = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  const bool halves = k == gpu::MmaKind::F16 || k == gpu::MmaKind::F16F16;
  for (const auto *part : {&a, &b})
    for (llvm::Value *w : *part)
      args.push_back(halves ? b_.CreateBitCast(w, h2) : w);
  llvm::Intrinsic::ID id = llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32;
  switch (k) {
  case gpu::MmaKind::F16:
    id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    break;
  case gpu::MmaKind::F16F16:
    id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f16_f16;
    break;
  case gpu::MmaKind::BF16:
    id = llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16;
    break;
  case gpu::MmaKind::I8:
    // .satfinite as Triton's (MMAv2's INT32_INT8_INT8_INT32): a sum past
    // int32 clamps instead of wrapping.
    id = llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_satfinite_s8;
    break;
  default:
    break;
  }
  if (k == gpu::MmaKind::F16F16) {
    // The accumulator's pairs (c0, c1), (c2, c3) as f16x2 registers; held as
    // floats that are f16 values, so the truncation is exact.
    for (size_t i = 0; i < 4; i += 2) {
      llvm::Value *p = llvm::PoisonValue::get(h2);
      p = b_.CreateInsertElement(p, b_.CreateFPTrunc(c[i], b_.getHalfTy()), uint64_t{0});
      p = b_.CreateInsertElement(p, b_.CreateFPTrunc(c[i + 1], b_.getHalfTy()), uint64_t{1});
      args.push_back(p);
    }
  } else {
    args.insert(args.end(), c.begin(), c.end());
  }
  llvm::Value *r = b_.CreateIntrinsic(id, {}, args);
  std::vector<llvm::Value *> d;
  if (k == gpu::MmaKind::F16F16) {
    for (unsigned i = 0; i < 2; ++i)
      for (uint64_t j = 0; j < 2; ++j)
        d.push_back(b_.CreateFPExt(b_.CreateExtractElement(b_.CreateExtractValue(r, i), j),
                                   b_.getFloatTy()));
    return d;
  }
  for (unsigned i = 0; i < 4; ++i)
    d.push_back(b_.CreateExtractValue(r, i));
  return d;
}

auto NvptxTarget::async_copy(llvm::Value *dst, llvm::Value *src, llvm::Value *pred, int bytes)
    -> void {
  llvm::Value *global = b_.CreateAddrSpaceCast(src, llvm::PointerType::get(ctx_, 1));
  // A false predicate copies nothing and zero-fills the destination.
  llvm::Value *n = b_.CreateSelect(pred, b_.getInt32(static_cast<uint32_t>(bytes)), b_.getInt32(0));
  // 16 bytes bypass L1 (.cg); smaller copies may only go through it (.ca).
  const llvm::Intrinsic::ID id = bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                                 : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                              : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  b_.CreateIntrinsic(id, {}, {dst, global, n});
}

auto NvptxTarget::async_commit() -> void {
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

auto NvptxTarget::async_wait(int pending) -> void {
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b_.getInt32(pending)});
}

auto NvptxTarget::asm_effect(const char *text) -> void {
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), false);
  b_.CreateCall(llvm::InlineAsm::get(fty, text, "~{memory}", /*hasSideEffects=*/true), {});
}

auto NvptxTarget::asm_through(const std::string &text, const std::vector<llvm::Value *> &d,
                              const std::vector<llvm::Value *> &in,
                              const std::string &in_constraints) -> std::vector<llvm::Value *> {
  // Accumulators: f32 ("f"), or 32-bit words ("r": int32, packed f16x2).
  std::string cons;
  std::vector<llvm::Type *> outs, ins;
  for (llvm::Value *v : d) {
    cons += v->getType()->isFloatTy() ? "=f," : "=r,";
    outs.push_back(v->getType());
  }
  for (size_t i = 0; i < d.size(); ++i)
    cons += std::to_string(i) + ",";
  cons += in_constraints + (in_constraints.empty() ? "" : ",") + "~{memory}";
  std::vector<llvm::Value *> args(d.begin(), d.end());
  args.insert(args.end(), in.begin(), in.end());
  for (llvm::Value *v : args)
    ins.push_back(v->getType());
  llvm::Type *rt = d.size() == 1 ? outs[0] : llvm::StructType::get(ctx_, outs);
  auto *fty = llvm::FunctionType::get(rt, ins, false);
  llvm::Value *r =
      b_.CreateCall(llvm::InlineAsm::get(fty, text, cons, /*hasSideEffects=*/true), args);
  if (d.size() == 1)
    return {r};
  std::vector<llvm::Value *> out;
  for (unsigned i = 0; i < d.size(); ++i)
    out.push_back(b_.CreateExtractValue(r, i));
  return out;
}

auto NvptxTarget::fence_async_shared() -> void {
  asm_effect("fence.proxy.async.shared::cta;");
}

auto NvptxTarget::wgmma_fence(const std::vector<llvm::Value *> &d) -> std::vector<llvm::Value *> {
  return asm_through("wgmma.fence.sync.aligned;", d, {}, "");
}

auto NvptxTarget::wgmma_commit() -> void {
  asm_effect("wgmma.commit_group.sync.aligned;");
}

auto NvptxTarget::wgmma_wait(int pending, const std::vector<llvm::Value *> &d)
    -> std::vector<llvm::Value *> {
  const std::string text = "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
  if (d.empty()) { // nothing read after it: an ordering point only
    asm_effect(text.c_str());
    return {};
  }
  return asm_through(text, d, {}, "");
}

auto NvptxTarget::wgmma(gpu::MmaKind k, const std::vector<llvm::Value *> &d,
                        const std::vector<llvm::Value *> &a, llvm::Value *b, bool trans_a,
                        bool trans_b, bool add) -> std::vector<llvm::Value *> {
  const size_t n = d.size();
  // Columns: two a register for f32 and int32 accumulators, four for f16x2.
  const size_t cols = k == gpu::MmaKind::F16F16 ? 4 * n : 2 * n;
  const char *shape = k == gpu::MmaKind::I8       ? "k32.s32.s8.s8"
                      : k == gpu::MmaKind::F8E4M3 ? "k32.f32.e4m3.e4m3"
                      : k == gpu::MmaKind::F8E5M2 ? "k32.f32.e5m2.e5m2"
                      : k == gpu::MmaKind::F16F16 ? "k16.f16.f16.f16"
                      : k == gpu::MmaKind::F16    ? "k16.f32.f16.f16"
                                                  : "k16.f32.bf16.bf16";
  // Integer wgmma has no scale-a/b immediates, and only 16-bit operands may
  // be transposed: 8-bit ones are K-major.
  const bool scale = k != gpu::MmaKind::I8, trans = !gpu::is_8bit(k);
  auto op = [&](size_t i) { return "$" + std::to_string(i); };
  std::string text = "{ .reg .pred p; setp.ne.b32 p, " + op(2 * n + a.size() + 1) +
                     ", 0; wgmma.mma_async.sync.aligned.m64n" + std::to_string(cols) + shape + " {";
  for (size_t i = 0; i < n; ++i)
    text += (i ? ", " : "") + op(i);
  text += "}, ";
  std::string cons;
  if (a.size() == 1) { // a descriptor
    text += op(2 * n) + ", " + op(2 * n + 1) + ", p";
    if (scale)
      text += ", 1, 1";
    if (trans)
      text += trans_a ? ", 1" : ", 0";
    cons = "l,l,r";
  } else {
    text += "{" + op(2 * n) + ", " + op(2 * n + 1) + ", " + op(2 * n + 2) + ", " + op(2 * n + 3) +
            "}, " + op(2 * n + 4) + ", p";
    if (scale)
      text += ", 1, 1";
    cons = "r,r,r,r,l,r";
  }
  if (trans)
    text += trans_b ? ", 1" : ", 0";
  text += "; }";
  std::vector<llvm::Value *> in(a.begin(), a.end());
  in.push_back(b);
  in.push_back(b_.getInt32(add ? 1 : 0)); // scale-d: D = A * B (+ D)
  return asm_through(text, d, in, cons);
}

auto NvptxTarget::barrier() -> void {
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

auto NvptxTarget::shuffle(Shuffle kind, llvm::Value *v, int amount) -> llvm::Value * {
  llvm::Type *t = v->getType();
  const unsigned bits = t->isPointerTy() ? 64 : t->getPrimitiveSizeInBits();
  llvm::Value *bitsv = t->isIntegerTy()   ? v
                       : t->isPointerTy() ? b_.CreatePtrToInt(v, b_.getInt64Ty())
                                          : b_.CreateBitCast(v, b_.getIntNTy(bits));
  auto shfl32 = [&](llvm::Value *x) {
    if (kind == Shuffle::Butterfly)
      return b_.CreateIntrinsic(
          llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
          {b_.getInt32(0xFFFFFFFFu), x, b_.getInt32(amount), b_.getInt32(0x1F)});
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                              {b_.getInt32(0xFFFFFFFFu), x, b_.getInt32(amount), b_.getInt32(0)});
  };
  llvm::Value *r;
  if (bits == 64) {
    llvm::Value *lo = shfl32(b_.CreateTrunc(bitsv, b_.getInt32Ty()));
    llvm::Value *hi = shfl32(b_.CreateTrunc(b_.CreateLShr(bitsv, 32), b_.getInt32Ty()));
    r = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()),
                    b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
  } else {
    r = b_.CreateTrunc(shfl32(b_.CreateZExt(bitsv, b_.getInt32Ty())), b_.getIntNTy(bits));
  }
  if (t->isPointerTy())
    return b_.CreateIntToPtr(r, t);
  return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
}

auto NvptxTarget::define_kernel(const ir::Function &k) -> void {
  std::vector<llvm::Type *> params;
  for (const ir::Value *p : k.body.args)
    params.push_back(p->type.pointer ? b_.getPtrTy() : l_.mem_type(p->type.elem));
  // Debug: each parameter's tensor size in bytes (-1: unknown), then the
  // out-of-bounds record (lower_tile_ir.hpp), as extra kernel parameters:
  // by value, so a launch copies nothing to the device for them.
  const size_t n = k.body.args.size();
  if (l_.opts_.debug) {
    params.insert(params.end(), n, b_.getInt64Ty());
    params.push_back(b_.getPtrTy());
  }
  auto *ty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  llvm::Function *fn =
      llvm::Function::Create(ty, llvm::Function::ExternalLinkage, k.name, mod_.get());
  fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // .reqntid: kiln always launches num_warps * 32 threads, and ptxas, told
  // so, allocates registers and schedules for that CTA size (Triton's PTX
  // says the same).
  mod_->getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(llvm::MDNode::get(
          ctx_, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx_, "reqntidx"),
                 llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(l_.threads_)))}));
  l_.fn_ = fn;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  using I = llvm::Intrinsic::ID;
  auto sreg = [&](I id) { return b_.CreateIntrinsic(id, {}, {}); };
  const I ctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                      llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  const I nctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  for (int a = 0; a < 3; ++a) {
    l_.pid_[a] = sreg(ctaid[a]);
    l_.nprog_[a] = sreg(nctaid[a]);
  }
  l_.set_thread_ids(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  l_.prologue_ = b_.GetInsertBlock();
  if (l_.opts_.debug) {
    for (size_t i = 0; i < n; ++i)
      l_.gpu_extents_.push_back(fn->getArg(static_cast<unsigned>(n + i)));
    l_.gpu_record_ = fn->getArg(static_cast<unsigned>(2 * n));
    l_.gpu_kernel_fn_ = fn;
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::Value *p = k.body.args[i];
    llvm::Value *v = fn->getArg(static_cast<unsigned>(i));
    if (!p->type.pointer)
      v = l_.from_mem(v, p->type.elem);
    else if (p->facts.divisible16)
      b_.CreateAlignmentAssumption(mod_->getDataLayout(), v, 16);
    l_.set(p, v, nullptr);
  }
  // The prologue stays open for per-layout thread index bits until the end
  // (or until a top-level loop ends: refresh_thread_ids opens another).
  llvm::BasicBlock *body = l_.new_bb("body");
  l_.after_prologue_ = body;
  b_.SetInsertPoint(body);
  l_.lower_ops(k.body, false);
  l_.close_prologue();
}

// A volatile read: the intrinsic is readnone, and LLVM would merge it with the
// entry's, which is the live range a re-read is there to end.
auto NvptxTarget::reread_thread_id() -> llvm::Value * {
  auto *fty = llvm::FunctionType::get(b_.getInt32Ty(), false);
  return b_.CreateCall(llvm::InlineAsm::get(fty, "mov.u32 $0, %tid.x;", "=r", true));
}

std::unique_ptr<TargetLowering> make_nvptx_target(Lowering &l) {
  return std::make_unique<NvptxTarget>(l);
}

} // namespace kiln::llvmgen::detail
