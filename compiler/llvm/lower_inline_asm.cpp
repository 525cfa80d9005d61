// tl.inline_asm_elementwise on the GPU: each thread runs the user's PTX over
// its own slots of the (broadcast) arguments, `pack` slots per asm call;
// which elements share a call is unspecified in Triton too. Elements narrower
// than 32 bits are packed into one register the way Triton packs them (see
// compiler/ir/inline_asm.hpp), so asm written for Triton reads the same bits.
#include "compiler/ir/inline_asm.hpp"
#include "compiler/llvm/lowering.hpp"

#include <llvm/IR/InlineAsm.h>

namespace kiln::llvmgen::detail {

namespace {

/// The type one element has inside the asm: its own for 32- and 64-bit
/// elements (f32 as float, so "f" and "r" constraints both take it), the
/// integer of its width for narrower ones (f16 travels as the bits of a half).
llvm::Type *asm_element_type(llvm::LLVMContext &ctx, const ir::Type &t) {
  const int bits = ir::bit_width(t);
  if (t.elem == DType::f32)
    return llvm::Type::getFloatTy(ctx);
  if (t.elem == DType::f64)
    return llvm::Type::getDoubleTy(ctx);
  return llvm::IntegerType::get(ctx, static_cast<unsigned>(bits));
}

/// The type of one asm register holding `per_reg` elements of `t`.
llvm::Type *asm_register_type(llvm::LLVMContext &ctx, const ir::Type &t, int per_reg) {
  return per_reg == 1
             ? asm_element_type(ctx, t)
             : llvm::IntegerType::get(ctx, static_cast<unsigned>(ir::bit_width(t) * per_reg));
}

} // namespace

auto Lowering::lower_inline_asm(const ir::Op &op) -> void {
  if (!distributed_)
    throw std::logic_error("kiln internal error: inline assembly reached the CPU lowering");
  const ir::Value *first = op.results.at(0);
  const int pack = static_cast<int>(op.i);

  // This thread's elements of every argument, in slot order.
  MapPtr m;
  std::vector<std::vector<llvm::Value *>> in(op.operands.size());
  int64_t n = 1;
  if (first->type.is_block()) {
    m = map_for(plan_->layout(first), first->type);
    for (const ir::Value *o : op.operands)
      prepare(o, *m);
    n = m->slots();
    for_slots(*m, first->type, [&](int64_t, const Idx &idx) {
      for (size_t k = 0; k < op.operands.size(); ++k)
        in[k].push_back(element(op.operands[k], idx));
    });
  } else {
    for (size_t k = 0; k < op.operands.size(); ++k)
      in[k].push_back(scalar(op.operands[k]));
  }

  // Register form: narrow types by their bits, padded with undef to whole packs.
  const int64_t padded = (n + pack - 1) / pack * pack;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Type t = op.operands[k]->type.element();
    for (llvm::Value *&x : in[k]) {
      if (is_half(t.elem))
        x = b_.CreateBitCast(to_mem(x, t.elem), asm_element_type(ctx_, t));
    }
    in[k].resize(static_cast<size_t>(padded), llvm::UndefValue::get(asm_element_type(ctx_, t)));
  }

  std::vector<llvm::Type *> ret_types;
  for (const ir::Value *r : op.results) {
    const int per = ir::asm_elements_per_register(r->type.element(), pack);
    for (int j = 0; j < pack / per; ++j)
      ret_types.push_back(asm_register_type(ctx_, r->type.element(), per));
  }
  llvm::Type *ret = ret_types.size() == 1 ? ret_types[0] : llvm::StructType::get(ctx_, ret_types);

  std::vector<std::vector<llvm::Value *>> out(op.results.size());
  for (int64_t c = 0; c < padded; c += pack) {
    std::vector<llvm::Value *> args;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const ir::Type t = op.operands[k]->type.element();
      const int per = ir::asm_elements_per_register(t, pack);
      for (int j = 0; j < pack; j += per) {
        if (per == 1) {
          args.push_back(in[k][static_cast<size_t>(c + j)]);
          continue;
        }
        llvm::Type *et = asm_element_type(ctx_, t);
        llvm::Value *vec =
            llvm::UndefValue::get(llvm::FixedVectorType::get(et, static_cast<unsigned>(per)));
        for (int e = 0; e < per; ++e)
          vec = b_.CreateInsertElement(vec, in[k][static_cast<size_t>(c + j + e)],
                                       static_cast<uint64_t>(e));
        args.push_back(b_.CreateBitCast(vec, asm_register_type(ctx_, t, per)));
      }
    }
    std::vector<llvm::Type *> arg_types;
    for (llvm::Value *a : args)
      arg_types.push_back(a->getType());
    auto *fty = llvm::FunctionType::get(ret, arg_types, false);
    if (llvm::Error e = llvm::InlineAsm::verify(fty, op.aux))
      throw std::logic_error("kiln internal error: inline asm constraints \"" + op.aux +
                             "\" do not fit its operands: " + llvm::toString(std::move(e)));
    llvm::InlineAsm *ia = llvm::InlineAsm::get(fty, op.str, op.aux, /*hasSideEffects=*/op.sub == 0);
    llvm::Value *call = b_.CreateCall(fty, ia, args);

    unsigned reg = 0;
    for (size_t k = 0; k < op.results.size(); ++k) {
      const ir::Type t = op.results[k]->type.element();
      const int per = ir::asm_elements_per_register(t, pack);
      for (int j = 0; j < pack; j += per, ++reg) {
        llvm::Value *word = ret_types.size() == 1 ? call : b_.CreateExtractValue(call, reg);
        llvm::Type *et = asm_element_type(ctx_, t);
        llvm::Value *vec =
            per == 1 ? nullptr
                     : b_.CreateBitCast(word,
                                        llvm::FixedVectorType::get(et, static_cast<unsigned>(per)));
        for (int e = 0; e < per; ++e) {
          llvm::Value *x = vec ? b_.CreateExtractElement(vec, static_cast<uint64_t>(e)) : word;
          if (is_half(t.elem))
            x = from_mem(b_.CreateBitCast(x, mem_type(t.elem)), t.elem);
          out[k].push_back(x);
        }
      }
    }
  }

  for (size_t k = 0; k < op.results.size(); ++k) {
    const ir::Value *r = op.results[k];
    out[k].resize(static_cast<size_t>(n));
    if (m)
      vals_[r] = slots_buffer(r->type, m, out[k]);
    else
      set(r, out[k][0], nullptr);
  }
}

} // namespace kiln::llvmgen::detail
